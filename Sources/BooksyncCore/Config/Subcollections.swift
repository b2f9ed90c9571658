/// The subcollections a collection directory syncs besides its top-level
/// documents (config `"subcollections"`, `init --subcollection`), each with
/// its own required fields (the manual's CollectionFormat article).
///
/// A path names collection ids from the collection down: `reviews` is
/// `books/*/reviews`, `reviews/likes` is `books/*/reviews/*/likes`. Nothing
/// is configured by default, and then no record id may contain `/`.
public struct Subcollections: Sendable, Equatable {
    /// One configured subcollection path and what its records must contain.
    public struct Entry: Sendable, Equatable {
        /// The collection ids from the collection down, joined with `/` (`reviews/likes`).
        public let path: String
        /// The required fields of this subcollection's records (none by default).
        public let schema: RecordSchema

        /// An entry; check the path first with `Subcollections.problem(withPath:)`.
        public init(path: String, schema: RecordSchema = .idOnly) {
            self.path = path
            self.schema = schema
        }

        /// The collection ids of `path`.
        package var segments: [String] { path.split(separator: "/", omittingEmptySubsequences: false).map(String.init) }
    }

    /// The configured paths, sorted by their bytes, each once.
    public let entries: [Entry]
    /// Lookup tables derived from `entries` alone (so the synthesized `==`
    /// still means the same paths and schemas).
    /// `entries` by path, so that checking a record id's path costs the same
    /// for 500 configured paths as for one.
    private let byPath: [String: Int]
    /// The collection ids that can follow each prefix (`""`, `"reviews"`), in
    /// the order `entries` reaches them (`collectionIDs(after:)`).
    private let nextIDs: [String: [String]]
    /// The same ids by folder name (`my%20reviews`), for `collectionIDs(after:among:)`.
    private let nextFolders: [String: [String: String]]

    /// No subcollections: the behaviour of every collection that did not opt in.
    public static let none = Subcollections(entries: [])

    /// The given entries, sorted by path; a path given twice keeps its first entry.
    public init(entries: [Entry]) {
        var seen: Set<String> = []
        let sorted = entries.filter { seen.insert($0.path).inserted }.sorted { CanonicalJSON.utf8Less($0.path, $1.path) }
        self.entries = sorted
        var byPath: [String: Int] = [:]
        var nextIDs: [String: [String]] = [:]
        var nextFolders: [String: [String: String]] = [:]
        for (index, entry) in sorted.enumerated() {
            byPath[entry.path] = index
            let segments = entry.segments
            for depth in 0..<segments.count {
                let prefix = segments.prefix(depth).joined(separator: "/")
                let folder = RecordID.folderName(ofCollection: segments[depth])
                if nextFolders[prefix, default: [:]].updateValue(segments[depth], forKey: folder) == nil {
                    nextIDs[prefix, default: []].append(segments[depth])
                }
            }
        }
        self.byPath = byPath
        self.nextIDs = nextIDs
        self.nextFolders = nextFolders
    }

    /// True when nothing is configured.
    public var isEmpty: Bool { entries.isEmpty }

    /// The entry of a subcollection path (`reviews/likes`), if it is configured.
    package func entry(forPath path: String) -> Entry? {
        // Byte equality, as record ids compare: the dictionary's String
        // equality takes two spellings of "café" for one.
        byPath[path].map { entries[$0] }.flatMap { $0.path.utf8.elementsEqual(path.utf8) ? $0 : nil }
    }

    /// The collection ids that can follow `prefix` (collection ids from the
    /// collection down, e.g. `["reviews"]`) on the way to a configured path:
    /// the folders a scan looks into below a document folder at that depth,
    /// and nothing else, so the walk is only as deep as the config says.
    package func collectionIDs(after prefix: [String]) -> [String] {
        nextIDs[prefix.joined(separator: "/")] ?? []
    }

    /// `collectionIDs(after:)` whose folders are among `names` (a document
    /// folder's entries), in the same order: with many configured ids, the
    /// scan looks up each name it finds rather than each id it could find.
    package func collectionIDs(after prefix: [String], among names: [String]) -> [String] {
        guard let folders = nextFolders[prefix.joined(separator: "/")] else { return [] }
        let present = Set(names.compactMap { folders[$0] })
        return collectionIDs(after: prefix).filter { present.contains($0) }
    }

    /// The deepest configured path, in collection ids (0 when none).
    package var maximumDepth: Int { entries.map { $0.segments.count }.max() ?? 0 }

    /// The distinct collection ids the paths end in, in path order: one
    /// collection-group query each lists every configured path ending in it
    /// (`reviews` and `notes/reviews` cost one query), so this, not the
    /// number of paths, is what a listing costs in queries.
    package var groupIDs: [String] {
        var seen: Set<String> = []
        return entries.compactMap { entry in
            let id = entry.segments.last!
            return seen.insert(id).inserted ? id : nil
        }
    }

    /// The most distinct collection ids the configured paths may end in. Each
    /// costs a collection-group query (at least one billed read) on every
    /// `status`, so a config.json in a cloned collection must not be able to
    /// multiply that cost without bound. Paths themselves are not capped: 500
    /// paths ending in 20 ids cost 20 queries and their documents, and
    /// config.json's own size cap bounds the local work.
    package static let maximumGroupIDs = 100

    /// Why paths ending in `count` distinct collection ids are too many, or nil.
    package static func problem(withGroupIDs count: Int) -> String? {
        count > maximumGroupIDs
            ? "the subcollection paths end in \(count) distinct collection ids; booksync syncs at most \(maximumGroupIDs) "
                + "(each costs a collection-group query on every status)" : nil
    }

    /// The same check for a list of paths (each already checked by `problem(withPath:)`).
    package static func problem(withPaths paths: some Sequence<String>) -> String? {
        var ids: Set<Substring> = []
        for path in paths { ids.insert(path.split(separator: "/", omittingEmptySubsequences: false).last ?? "") }
        return problem(withGroupIDs: ids.count)
    }

    /// Why `path` cannot be a subcollection path, or nil. Each collection id
    /// must be a valid record id (it becomes a folder name with the same
    /// encoding) and may not contain `:`, which separates the path from the
    /// field in `init --subcollection-require PATH:FIELD:TYPE`, nor anything
    /// a terminal or an editor acts on instead of showing, as the collection's
    /// own path may not (`FirestoreTarget.validateCollectionPath`).
    package static func problem(withPath path: String) -> String? {
        if path.isEmpty { return "a subcollection path cannot be empty" }
        if let scalar = path.unicodeScalars.first(where: TerminalEscaping.isUnsafe) {
            return "subcollection path '\(TerminalEscaping.escapeName(TerminalEscaping.abbreviate(path)))' contains "
                + "\(TerminalEscaping.describeUnsafe(scalar)); a collection id must be visible text"
        }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            if segment.isEmpty { return "subcollection path '\(TerminalEscaping.abbreviate(path))' has an empty segment" }
            if segment.contains(":") { return "subcollection path '\(TerminalEscaping.abbreviate(path))' contains ':'" }
            do {
                _ = try RecordID(String(segment))
            } catch {
                return "subcollection path '\(TerminalEscaping.abbreviate(path))' has a segment that is not a valid collection id: \(error.message)"
            }
        }
        return nil
    }
}

extension Subcollections {
    /// The subcollections `init --subcollection PATH` (repeatable) and
    /// `init --subcollection-require PATH:FIELD:TYPE` (repeatable) describe.
    /// PATH ends at the first `:` (paths cannot contain one); FIELD:TYPE is
    /// read as `--require` reads it. A requirement for a path not given with
    /// `--subcollection` is an error, not a silent opt-in.
    /// - Throws: `RequirementSyntaxError` naming the first bad argument.
    package static func parse(paths: [String], requirements: [String]) throws(RequirementSyntaxError) -> Subcollections {
        var ordered: [String] = []
        var given: Set<String> = []
        for path in paths {
            if let problem = problem(withPath: path) { throw RequirementSyntaxError(problem) }
            guard given.insert(path).inserted else { throw RequirementSyntaxError("the subcollection '\(path)' is given twice") }
            ordered.append(path)
        }
        if let problem = problem(withPaths: ordered) { throw RequirementSyntaxError(problem) }
        var required: [String: [FieldRequirement]] = [:]
        for text in requirements {
            guard let colon = text.firstIndex(of: ":") else {
                throw RequirementSyntaxError("'\(text)' needs PATH:FIELD:TYPE, such as reviews:rating:integer")
            }
            let path = String(text[..<colon])
            guard given.contains(path) else {
                throw RequirementSyntaxError("'\(text)' names the subcollection '\(path)', which no --subcollection gives")
            }
            let requirement = try FieldRequirement.parse(String(text[text.index(after: colon)...]))
            guard !(required[path] ?? []).contains(where: { $0.name == requirement.name }) else {
                throw RequirementSyntaxError("the field '\(requirement.name)' of subcollection '\(path)' is given twice")
            }
            required[path, default: []].append(requirement)
        }
        return Subcollections(entries: ordered.map { Entry(path: $0, schema: RecordSchema(requiredFields: required[$0] ?? [])) })
    }
}
