/// Record ids of subcollection documents: the document's path relative to
/// the collection, `dune/reviews/r1` for `books/dune/reviews/r1`, and its
/// file `dune/reviews/r1.json` (the manual's CollectionFormat article).
///
/// `RecordID(_:)` keeps rejecting every `/`; only `init(path:subcollections:)`
/// takes paths, and only into the subcollections the config names. Each
/// segment is checked and encoded on its own exactly as a top-level id, so
/// `..`, an empty segment or an encoded `%2F` can never become a path
/// component: the segments of a valid path id are valid ids, and valid ids
/// contain no `/` and are never `.` or `..`.
extension RecordID {
    /// Validates an id that may be a subcollection document path.
    /// - Parameters:
    ///   - raw: `dune` or `dune/reviews/r1` (raw segments, not file names).
    ///   - subcollections: the configured subcollection paths; the collection
    ///     segments of `raw` (`reviews`) must be one of them.
    /// - Throws: `RecordIDError` for a bad segment, a path of the wrong shape,
    ///   or one into an unconfigured subcollection.
    package init(path raw: String, subcollections: Subcollections) throws(RecordIDError) {
        // Without subcollections, a '/' is the error it always was.
        guard !subcollections.isEmpty, raw.utf8.contains(UInt8(ascii: "/")) else {
            self = try RecordID(raw)
            return
        }
        let segments = raw.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard segments.count >= 3, segments.count % 2 == 1 else { throw .notDocumentPath(raw) }
        var collections: [String] = []
        for (index, segment) in segments.enumerated() {
            do {
                _ = try RecordID(segment)
            } catch {
                throw .badSegment(raw, error.message)
            }
            if index % 2 == 1 { collections.append(segment) }
        }
        let path = collections.joined(separator: "/")
        guard subcollections.entry(forPath: path) != nil else { throw .unconfiguredSubcollection(raw, path) }
        let encoded = Self.encodePath(segments)
        // Each segment fits a file name; the whole path must fit a path too.
        guard encoded.utf8.count + 5 <= Self.maximumPathBytes else { throw .pathTooLong(raw, encoded.utf8.count + 5) }
        self.init(checkedRaw: raw, encodedName: encoded)
    }

    /// Longest file path of a record relative to the collection directory
    /// (`dune/reviews/r1.json`): macOS's `PATH_MAX`, so that the collection
    /// directory's own path still fits Linux's 4,096. Firestore allows
    /// document names of 6 KiB, deeper than any file system: a document
    /// beyond this is invalid, named, like an id too long for a file name.
    package static let maximumPathBytes = 1_024

    /// The file-name encoding of a path id's segments: each segment encoded
    /// as a top-level id is, the folders on the way as folder names
    /// (`documentFolderName(stem:)`), the last as the file's stem.
    static func encodePath<S: StringProtocol>(_ segments: [S]) -> String {
        var out = ""
        for (index, segment) in segments.enumerated() {
            if index > 0 { out += "/" }
            let stem = encodedSegment(segment)
            out += index < segments.count - 1 ? documentFolderName(stem: stem) : stem
        }
        return out
    }

    /// The folder of a document's subcollections, from the document's encoded
    /// name (`stem`, its file name without `.json`): the same name, except
    /// that a final `.json` is written `%2Ejson`.
    ///
    /// So no folder name ends in `.json` and every file name does: the
    /// folder of the document `cfg.json` (`cfg%2Ejson/`) can never be taken
    /// for, or collide with, the record file `cfg.json` of the document `cfg`.
    package static func documentFolderName(stem: String) -> String {
        stem.hasSuffix(".json") ? String(stem.utf8.dropLast(5))! + "%2Ejson" : stem
    }

    /// The inverse of `documentFolderName(stem:)`. A stem ends in `%2Ejson`
    /// only when it is exactly that (the id `.json`, whose leading `.` is
    /// escaped), so the two are told apart by length.
    static func stem(ofDocumentFolder folder: Substring) -> String {
        folder.hasSuffix("%2Ejson") && folder.utf8.count > 7 ? String(folder.utf8.dropLast(7))! + ".json" : String(folder)
    }

    /// The folder that holds this document's subcollections, relative to the
    /// collection directory (`dune`, `dune/reviews/r1`, `cfg%2Ejson`).
    package var folderPath: String {
        guard let slash = encodedName.utf8.lastIndex(of: UInt8(ascii: "/")) else { return Self.documentFolderName(stem: encodedName) }
        let next = encodedName.utf8.index(after: slash)
        return String(encodedName[..<next]) + Self.documentFolderName(stem: String(encodedName[next...]))
    }

    /// An id stored earlier from a valid id (the manifest's table): no check
    /// beyond what rebuilding its encoding needs.
    init(validated text: String) {
        if let plain = RecordID(plain: text) {
            self = plain
            return
        }
        guard text.utf8.contains(UInt8(ascii: "/")) else {
            self = try! RecordID(text)
            return
        }
        self.init(checkedRaw: text, encodedName: Self.encodePath(text.split(separator: "/", omittingEmptySubsequences: false)))
    }

    /// The document id: the last segment (`r1` of `dune/reviews/r1`), what the
    /// record's `id` field must hold.
    package var documentID: String {
        guard let slash = rawValue.utf8.lastIndex(of: UInt8(ascii: "/")) else { return rawValue }
        return String(rawValue[rawValue.utf8.index(after: slash)...])
    }

    /// True for a document of the collection itself, false for a subcollection document.
    package var isTopLevel: Bool { !rawValue.utf8.contains(UInt8(ascii: "/")) }

    /// The subcollection path (`reviews`, `reviews/likes`) of a path id; nil for a top-level id.
    package var subcollectionPath: String? {
        guard !isTopLevel else { return nil }
        let segments = rawValue.split(separator: "/", omittingEmptySubsequences: false)
        return stride(from: 1, to: segments.count, by: 2).map { String(segments[$0]) }.joined(separator: "/")
    }

    /// The document this one's subcollection hangs under (`dune` for
    /// `dune/reviews/r1`); nil for a top-level id.
    package var parent: RecordID? {
        guard !isTopLevel else { return nil }
        var raw = rawValue.split(separator: "/", omittingEmptySubsequences: false)
        var encoded = encodedName.split(separator: "/", omittingEmptySubsequences: false)
        raw.removeLast(2)
        encoded.removeLast(2)
        // The parent's last segment was its folder name; as the parent's own id it is a file stem.
        let last = Self.stem(ofDocumentFolder: encoded.removeLast())
        return RecordID(checkedRaw: raw.joined(separator: "/"), encodedName: (encoded.map(String.init) + [last]).joined(separator: "/"))
    }

    /// The document `document` of this document's subcollection `collection`
    /// (`dune` + `reviews` + `r1`). The caller has checked `collection` as a
    /// configured collection id, which is a valid id.
    package func child(collection: String, document: RecordID) -> RecordID {
        let folder = RecordID.folderName(ofCollection: collection)
        return RecordID(checkedRaw: rawValue + "/" + collection + "/" + document.rawValue,
                        encodedName: folderPath + "/" + folder + "/" + document.encodedName)
    }

    /// The folder name of a configured collection id (`reviews`): its
    /// file-name encoding, as for any id segment, and like a document's
    /// folder never ending in `.json` (`documentFolderName(stem:)`).
    package static func folderName(ofCollection collection: String) -> String {
        documentFolderName(stem: encodedSegment(collection))
    }

    /// One segment's file-name encoding, as a top-level id's (the check of
    /// plain bytes first: most ids are their own encoding).
    static func encodedSegment<S: StringProtocol>(_ segment: S) -> String {
        RecordID(plain: String(segment))?.encodedName ?? RecordID.encode(Array(segment.utf8))
    }

    /// The id a folder name stands for (a document's folder, `dune`,
    /// `cfg%2Ejson`): the decoding of `documentFolderName(stem:)`.
    /// - Throws: `RecordIDError` when the name is not the canonical folder name of a valid id.
    package static func fromFolderName(_ name: String) throws(RecordIDError) -> RecordID {
        guard !name.hasPrefix("."), !name.hasSuffix(".json"), let id = try fromFileName(stem(ofDocumentFolder: Substring(name)) + ".json") else {
            throw .badFileName(name)
        }
        let canonical = documentFolderName(stem: id.encodedName)
        guard canonical == name else { throw .nonCanonicalFileName(name, canonical) }
        return id
    }

    /// The id whose `encodedName` is `name` (`dune`, `dune/reviews/r1`), for
    /// any well-formed path whatever the config names; nil when `name` is not
    /// the canonical encoding of one. For names booksync wrote itself (a base
    /// copy's line), which must round-trip whatever subcollections are configured.
    package static func fromEncodedName(_ name: String) -> RecordID? {
        guard name.utf8.contains(UInt8(ascii: "/")) else { return try? fromFileName(name + ".json") }
        var segments = name.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 3, segments.count % 2 == 1,
              let document = try? fromFileName(String(segments.removeLast()) + ".json") else { return nil }
        var raw: [String] = []
        for segment in segments {
            guard let folder = try? fromFolderName(String(segment)) else { return nil }
            raw.append(folder.rawValue)
        }
        raw.append(document.rawValue)
        let id = RecordID(validated: raw.joined(separator: "/"))
        return id.encodedName == name ? id : nil
    }

    /// The id of a record file named by its path relative to the collection
    /// directory (`dune/reviews/r1.json`); nil when the last segment is not a
    /// record file name at all.
    /// - Throws: `RecordIDError` for a segment that does not decode, or a path
    ///   into an unconfigured subcollection.
    package static func fromRelativePath(_ path: String, subcollections: Subcollections) throws(RecordIDError) -> RecordID? {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let last = segments.removeLast()
        guard let document = try fromFileName(last) else { return nil }
        guard !segments.isEmpty else { return document }
        var raw: [String] = []
        for segment in segments { raw.append(try fromFolderName(segment).rawValue) }
        raw.append(document.rawValue)
        let id = try RecordID(path: raw.joined(separator: "/"), subcollections: subcollections)
        guard id.fileName == path else { throw .nonCanonicalFileName(path, id.fileName) }
        return id
    }
}
