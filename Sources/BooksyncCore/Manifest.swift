/// What the last sync saw of one record: the content hash both sides agreed on
/// and the remote revision (Firestore `updateTime`) it had then.
public struct BaseEntry: Sendable, Equatable {
    public let hash: String
    public let revision: String

    public init(hash: String, revision: String) {
        self.hash = hash
        self.revision = revision
    }
}

/// The base state of a collection directory (`.booksync/manifest.json`).
///
/// Written deterministically: sorted by id (UTF-8 bytes), one record per line,
/// so a git diff of the manifest shows exactly which records a sync touched.
public struct Manifest: Sendable, Equatable {
    public static let currentVersion: Int64 = 1

    public var entries: [RecordID: BaseEntry]
    /// The content hash of config.json when the base was last written: the rules
    /// the base's records were validated under.
    public var configFingerprint: String?

    public init(entries: [RecordID: BaseEntry] = [:], configFingerprint: String? = nil) {
        self.entries = entries
        self.configFingerprint = configFingerprint
    }

    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(64 + entries.count * 140)
        out.append(contentsOf: "{\n  \"version\": \(Self.currentVersion),\n".utf8)
        if let configFingerprint {
            out.append(contentsOf: "  \"config\": ".utf8)
            CanonicalJSON.writeString(configFingerprint, into: &out)
            out.append(contentsOf: ",\n".utf8)
        }
        out.append(contentsOf: "  \"records\": {".utf8)
        let ids = entries.keys.sorted()
        for (i, id) in ids.enumerated() {
            let entry = entries[id]!
            out.append(contentsOf: (i == 0 ? "\n    " : ",\n    ").utf8)
            CanonicalJSON.writeString(id.rawValue, into: &out)
            out.append(contentsOf: ": {\"hash\": ".utf8)
            CanonicalJSON.writeString(entry.hash, into: &out)
            out.append(contentsOf: ", \"revision\": ".utf8)
            CanonicalJSON.writeString(entry.revision, into: &out)
            out.append(0x7D)
        }
        out.append(contentsOf: (ids.isEmpty ? "}\n}\n" : "\n  }\n}\n").utf8)
        return out
    }

    /// Decodes manifest bytes; errors name the problem and, for syntax, the position.
    public static func decode(_ bytes: [UInt8]) throws(StateFileError) -> Manifest {
        if let manifest = decodeCanonical(bytes) { return manifest }
        let top: Fields
        do {
            top = try JSONParser.parseObject(bytes)
        } catch {
            throw StateFileError(position: error.position, message: error.message)
        }
        guard case .integer(let version)? = top["version"] else {
            throw StateFileError(message: "missing \"version\"")
        }
        guard version == currentVersion else {
            throw StateFileError(message: "version \(version) is not supported by this booksync (it reads version \(currentVersion)); upgrade booksync")
        }
        guard case .map(let records)? = top["records"] else {
            throw StateFileError(message: "missing \"records\" object")
        }
        var configFingerprint: String?
        if let value = top["config"] {
            guard case .string(let text) = value else { throw StateFileError(message: "\"config\" must be a string") }
            configFingerprint = text
        }
        var entries: [RecordID: BaseEntry] = [:]
        entries.reserveCapacity(records.count)
        for (raw, value) in records {
            let id: RecordID
            do {
                id = try RecordID(raw)
            } catch {
                throw StateFileError(message: "record '\(raw)': \(error.message)")
            }
            guard case .map(let m) = value, case .string(let hash)? = m["hash"], case .string(let revision)? = m["revision"],
                  hash.hasPrefix("sha256:")
            else {
                throw StateFileError(message: "record '\(raw)' needs {\"hash\": \"sha256:…\", \"revision\": \"…\"}")
            }
            entries[id] = BaseEntry(hash: hash, revision: revision)
        }
        return Manifest(entries: entries, configFingerprint: configFingerprint)
    }
}

extension Manifest {
    /// Fast path for a manifest exactly as `encoded()` writes it: one record per
    /// line and no escapes. Anything else (hand edits, escaped ids, damage)
    /// returns nil and goes through the full JSON parser, which explains errors.
    /// 100,000 records decode in tens of milliseconds instead of hundreds.
    static func decodeCanonical(_ bytes: [UInt8]) -> Manifest? {
        let version = Array("{\n  \"version\": 1,\n".utf8)
        let configKey = Array("  \"config\": \"".utf8)
        let recordsKey = Array("  \"records\": {".utf8)
        let emptyTail = Array("}\n}\n".utf8)
        let tail = Array("\n  }\n}\n".utf8)
        guard bytes.starts(with: version) else { return nil }
        var configFingerprint: String?
        var start = version.count
        if bytes[start...].starts(with: configKey) {
            let valueStart = start + configKey.count
            guard let quote = bytes[valueStart...].firstIndex(of: 0x22), bytes[valueStart..<quote].allSatisfy({ $0 != 0x5C && $0 >= 0x20 }),
                  bytes[quote...].starts(with: Array("\",\n".utf8))
            else { return nil }
            configFingerprint = String(decoding: bytes[valueStart..<quote], as: UTF8.self)
            start = quote + 3
        }
        guard bytes[start...].starts(with: recordsKey) else { return nil }
        let head = start + recordsKey.count
        if Array(bytes[head...]) == emptyTail { return Manifest(configFingerprint: configFingerprint) }
        guard bytes.count > head + tail.count, Array(bytes.suffix(tail.count)) == tail else { return nil }
        let hashKey = Array("\": {\"hash\": \"".utf8)
        let revisionKey = Array("\", \"revision\": \"".utf8)
        var entries: [RecordID: BaseEntry] = [:]
        let ok = bytes.withUnsafeBufferPointer { b -> Bool in
            var i = head
            let end = b.count - tail.count
            func expect(_ token: [UInt8]) -> Bool {
                guard i + token.count <= end else { return false }
                for (k, t) in token.enumerated() where b[i + k] != t { return false }
                i += token.count
                return true
            }
            /// A string up to the next quote; nil if it holds a backslash or control byte.
            func string() -> String? {
                let start = i
                while i < end, b[i] != 0x22 {
                    if b[i] == 0x5C || b[i] < 0x20 { return nil }
                    i += 1
                }
                guard i < end else { return nil }
                return String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
            }
            let firstLine = Array("\n    \"".utf8), nextLine = Array(",\n    \"".utf8), close: [UInt8] = [0x22, 0x7D]
            var first = true
            while i < end {
                guard expect(first ? firstLine : nextLine) else { return false }
                first = false
                guard let raw = string(), expect(hashKey), let hash = string(), expect(revisionKey),
                      let revision = string(), expect(close), hash.hasPrefix("sha256:"),
                      let id = RecordID(plain: raw) ?? (try? RecordID(raw)), entries[id] == nil
                else { return false }
                entries[id] = BaseEntry(hash: hash, revision: revision)
            }
            return i == end
        }
        return ok ? Manifest(entries: entries, configFingerprint: configFingerprint) : nil
    }
}

/// A problem in one of booksync's own state files (config, manifest, index).
/// The layer above adds the file name.
public struct StateFileError: Error, Sendable, Equatable {
    public let position: SourcePosition?
    public let message: String

    public init(position: SourcePosition? = nil, message: String) {
        self.position = position
        self.message = message
    }
}
