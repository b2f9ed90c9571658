/// What the last sync saw of one record: the content hash both sides agreed on
/// and the remote revision (Firestore `updateTime`) it had then.
package struct BaseEntry: Sendable, Equatable {
    /// `sha256:<hex>` of the record's canonical bytes (`SHA256.contentHash`).
    package let hash: ContentHash
    /// The remote revision, exactly as the server wrote it: push sends it back
    /// as the write precondition, so it is never reformatted.
    package let revision: String

    /// An entry; `hash` in `sha256:<hex>` form.
    package init(hash: ContentHash, revision: String) {
        self.hash = hash
        self.revision = revision
    }
}

/// The base state of a collection directory (`.booksync/manifest.json`).
///
/// Written deterministically: sorted by id (UTF-8 bytes), one record per line,
/// so a git diff of the manifest shows exactly which records a sync touched.
package struct Manifest: Sendable, Equatable {
    /// The `"version"` this booksync writes and the only one it reads; any
    /// other is refused with "upgrade booksync".
    package static let currentVersion: Int64 = 1

    /// The base of each synced record; a record absent here has no base (never
    /// synced, or its deletion was synced). Held compactly (`ManifestEntries`).
    package var entries: ManifestEntries
    /// The content hash of config.json when the base was last written: the rules
    /// the base's records were validated under.
    package var configFingerprint: String?
    /// How far the base reflects the remote's change field (`"changesSince"`),
    /// for collections with one; nil: the next remote command lists every name.
    package var changesSince: ChangeMark?
    /// The remote collection the entries were recorded against (`"target"`);
    /// nil before the first sync, and in manifests of older versions.
    package var target: TargetIdentity?

    /// A manifest (empty by default: a collection that never synced).
    package init(entries: ManifestEntries = ManifestEntries(), configFingerprint: String? = nil, changesSince: ChangeMark? = nil,
                target: TargetIdentity? = nil) {
        self.entries = entries
        self.configFingerprint = configFingerprint
        self.changesSince = changesSince
        self.target = target
    }

    /// A manifest of the entries of a dictionary.
    package init(entries: [RecordID: BaseEntry], configFingerprint: String? = nil, changesSince: ChangeMark? = nil,
                target: TargetIdentity? = nil) {
        self.init(entries: ManifestEntries(entries), configFingerprint: configFingerprint, changesSince: changesSince, target: target)
    }

    /// The manifest.json bytes: records sorted by id, one per line, so equal
    /// manifests are equal bytes (and `decode` takes its fast path).
    package func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(64 + entries.count * 140)
        encode { out.append(contentsOf: $0) }
        return out
    }

    /// `encoded()` in pieces of about a megabyte, for writing a large manifest
    /// without holding its bytes.
    package func encode(_ write: ([UInt8]) -> Void) {
        var out = [UInt8]()
        out.reserveCapacity(1 << 20 + 4096)
        out.append(contentsOf: "{\n  \"version\": \(Self.currentVersion),\n".utf8)
        if let target {
            out.append(contentsOf: "  \"target\": ".utf8)
            CanonicalJSON.writeString(target.rawValue, into: &out)
            out.append(contentsOf: ",\n".utf8)
        }
        if let configFingerprint {
            out.append(contentsOf: "  \"config\": ".utf8)
            CanonicalJSON.writeString(configFingerprint, into: &out)
            out.append(contentsOf: ",\n".utf8)
        }
        if let changesSince {
            out.append(contentsOf: "  \"changesSince\": {\"field\": ".utf8)
            CanonicalJSON.writeString(changesSince.field, into: &out)
            if let scope = changesSince.scope {
                out.append(contentsOf: ", \"scope\": ".utf8)
                CanonicalJSON.writeString(scope, into: &out)
            }
            out.append(contentsOf: ", \"time\": ".utf8)
            CanonicalJSON.writeString(changesSince.time.rfc3339, into: &out)
            out.append(contentsOf: "},\n".utf8)
        }
        out.append(contentsOf: "  \"records\": {".utf8)
        var first = true
        for (id, entry) in entries.sorted {
            out.append(contentsOf: (first ? "\n    " : ",\n    ").utf8)
            first = false
            CanonicalJSON.writeString(id.rawValue, into: &out)
            out.append(contentsOf: ": {\"hash\": ".utf8)
            CanonicalJSON.writeString(entry.hash.text, into: &out)
            out.append(contentsOf: ", \"revision\": ".utf8)
            CanonicalJSON.writeString(entry.revision, into: &out)
            out.append(0x7D)
            if out.count >= 1 << 20 {
                write(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        out.append(contentsOf: (first ? "}\n}\n" : "\n  }\n}\n").utf8)
        write(out)
    }

    /// Decodes manifest bytes; errors name the problem and, for syntax, the position.
    ///
    /// Record ids are keys here, and keys are compared byte by byte: `café`
    /// written with U+00E9 and with `e` U+0301 are two Firestore documents and
    /// two records, so both decode (as `RecordID`s, which compare by bytes).
    /// The full parse therefore reads a `JSONTree`, never `Fields`, whose
    /// Swift-string keys would take the two for one duplicated key.
    /// - Parameters:
    ///   - bytes: The manifest file's contents.
    ///   - subcollections: the configured subcollections; path ids into
    ///     others are errors (a manifest is data from the collection), unless
    ///   - otherPathIDs: says what else they are (`OtherPathIDs`).
    package static func decode(_ bytes: [UInt8], subcollections: Subcollections = .none,
                              otherPathIDs: OtherPathIDs = .refused) throws(StateFileError) -> Manifest {
        if let manifest = decodeCanonical(bytes, subcollections: subcollections, otherPathIDs: otherPathIDs) { return manifest }
        let top: JSONTree
        do {
            top = try JSONParser.parseTree(bytes)
        } catch {
            throw StateFileError(position: error.position, message: error.message)
        }
        guard case .object = top else { throw StateFileError(message: "expected a JSON object") }
        guard case .scalar(.integer(let version))? = top["version"] else {
            throw StateFileError(message: "missing \"version\"")
        }
        guard version == currentVersion else {
            throw StateFileError(message: "version \(version) is not supported by this booksync (it reads version \(currentVersion)); upgrade booksync")
        }
        guard case .object(let records)? = top["records"] else {
            throw StateFileError(message: "missing \"records\" object")
        }
        var configFingerprint: String?
        if let value = top["config"] {
            guard case .scalar(.string(let text)) = value else { throw StateFileError(message: "\"config\" must be a string") }
            configFingerprint = text
        }
        var target: TargetIdentity?
        if let value = top["target"] {
            guard case .scalar(.string(let text)) = value, let identity = TargetIdentity(rawValue: text) else {
                throw StateFileError(message: "\"target\" must be a string such as \"emulator projects/p/databases/(default)/documents/books\"")
            }
            target = identity
        }
        var changesSince: ChangeMark?
        if let value = top["changesSince"] {
            guard case .object = value, case .scalar(.string(let field))? = value["field"], case .scalar(.string(let time))? = value["time"],
                  let parsed = try? Timestamp(rfc3339: time)
            else { throw StateFileError(message: "\"changesSince\" must be {\"field\": \"…\", \"time\": \"<RFC 3339 time>\"}") }
            var scope: String?
            switch value["scope"] {
            case nil: break
            case .scalar(.string(let text))?: scope = text
            default: throw StateFileError(message: "\"changesSince\".scope must be the scope's text")
            }
            changesSince = ChangeMark(field: field, time: parsed, scope: scope)
        }
        var entries = ManifestEntries()
        entries.reserveCapacity(records.count)
        for member in records {
            let raw = member.key
            let id: RecordID
            switch ManifestKey(raw, subcollections: subcollections, others: otherPathIDs) {
            case .record(let found): id = found
            case .forgotten: continue
            case .invalid(let error): throw StateFileError(message: "record '\(raw)': \(error.message)")
            }
            guard case .scalar(.string(let hash))? = member.value["hash"], case .scalar(.string(let revision))? = member.value["revision"],
                  hash.hasPrefix("sha256:")
            else {
                throw StateFileError(message: "record '\(raw)' needs {\"hash\": \"sha256:…\", \"revision\": \"…\"}")
            }
            entries[id] = BaseEntry(hash: ContentHash(text: hash), revision: revision)
        }
        return Manifest(entries: entries, configFingerprint: configFingerprint, changesSince: changesSince, target: target)
    }
}

/// A problem in one of booksync's own state files (config, manifest, index).
/// The layer above adds the file name.
public struct StateFileError: Error, Sendable, Equatable {
    /// Where in the file, for JSON syntax errors; nil for problems of content.
    public let position: SourcePosition?
    /// What is wrong and, where there is one, what to do about it.
    public let message: String

    /// An error; give `position` for syntax errors.
    package init(position: SourcePosition? = nil, message: String) {
        self.position = position
        self.message = message
    }
}

/// What a manifest makes of a well-formed path id (`dune/reviews/r1`) that is
/// not a record of the collection as configured now: one in a subcollection
/// the config no longer names, or one whose file path booksync no longer
/// allows (`RecordID.maximumPathBytes`).
package enum OtherPathIDs: Sendable {
    /// An error: the strict reading (tests, and anything that must not lose an entry).
    case refused
    /// Left out of the base (a command's reading, `ManifestFile.load`).
    /// A collection that stops syncing `reviews` (config.json edited) forgets
    /// their base instead of refusing every command: their files and documents
    /// are no longer compared at all, so nothing is sent or deleted for them.
    case forgotten
    /// Kept as they are (the git merge driver, which merges entries without
    /// knowing the config either branch will have).
    case kept
}

/// What a record key of a manifest stands for.
enum ManifestKey: Equatable {
    case record(RecordID)
    /// A path id left out (`OtherPathIDs.forgotten`).
    case forgotten
    case invalid(RecordIDError)

    init(_ raw: String, subcollections: Subcollections, others: OtherPathIDs) {
        do {
            self = .record(try RecordID(path: raw, subcollections: subcollections))
        } catch {
            switch others {
            case .refused: self = .invalid(error)
            case .forgotten: self = Self.isPathID(raw) ? .forgotten : .invalid(error)
            case .kept: self = Self.isPathID(raw) ? .record(RecordID(validated: raw)) : .invalid(error)
            }
        }
    }

    /// True when `raw` is a well-formed path id: valid segments in the
    /// document/collection/document shape, whatever the config and the path's length.
    private static func isPathID(_ raw: String) -> Bool {
        let segments = raw.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 3, segments.count % 2 == 1 else { return false }
        return segments.allSatisfy { (try? RecordID(String($0))) != nil }
    }
}
