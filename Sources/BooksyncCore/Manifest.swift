/// What the last sync saw of one record: the content hash both sides agreed on
/// and the remote revision (Firestore `updateTime`) it had then.
public struct BaseEntry: Sendable, Equatable {
    /// `sha256:<hex>` of the record's canonical bytes (`SHA256.contentHash`).
    public let hash: String
    /// The remote revision, exactly as the server wrote it: push sends it back
    /// as the write precondition, so it is never reformatted.
    public let revision: String

    /// An entry; `hash` in `sha256:<hex>` form.
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
    /// The `"version"` this booksync writes and the only one it reads; any
    /// other is refused with "upgrade booksync".
    public static let currentVersion: Int64 = 1

    /// The base of each synced record; a record absent here has no base (never
    /// synced, or its deletion was synced).
    public var entries: [RecordID: BaseEntry]
    /// The content hash of config.json when the base was last written: the rules
    /// the base's records were validated under.
    public var configFingerprint: String?
    /// How far the base reflects the remote's change field (`"changesSince"`),
    /// for collections with one; nil: the next remote command lists every name.
    public var changesSince: ChangeMark?

    /// A manifest (empty by default: a collection that never synced).
    public init(entries: [RecordID: BaseEntry] = [:], configFingerprint: String? = nil, changesSince: ChangeMark? = nil) {
        self.entries = entries
        self.configFingerprint = configFingerprint
        self.changesSince = changesSince
    }

    /// The manifest.json bytes: records sorted by id, one per line, so equal
    /// manifests are equal bytes (and `decode` takes its fast path).
    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(64 + entries.count * 140)
        out.append(contentsOf: "{\n  \"version\": \(Self.currentVersion),\n".utf8)
        if let configFingerprint {
            out.append(contentsOf: "  \"config\": ".utf8)
            CanonicalJSON.writeString(configFingerprint, into: &out)
            out.append(contentsOf: ",\n".utf8)
        }
        if let changesSince {
            out.append(contentsOf: "  \"changesSince\": {\"field\": ".utf8)
            CanonicalJSON.writeString(changesSince.field, into: &out)
            out.append(contentsOf: ", \"time\": ".utf8)
            CanonicalJSON.writeString(changesSince.time.rfc3339, into: &out)
            out.append(contentsOf: "},\n".utf8)
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
    ///
    /// Record ids are keys here, and keys are compared byte by byte: `café`
    /// written with U+00E9 and with `e` U+0301 are two Firestore documents and
    /// two records, so both decode (as `RecordID`s, which compare by bytes).
    /// The full parse therefore reads a `JSONTree`, never `Fields`, whose
    /// Swift-string keys would take the two for one duplicated key.
    public static func decode(_ bytes: [UInt8]) throws(StateFileError) -> Manifest {
        if let manifest = decodeCanonical(bytes) { return manifest }
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
        var changesSince: ChangeMark?
        if let value = top["changesSince"] {
            guard case .object = value, case .scalar(.string(let field))? = value["field"], case .scalar(.string(let time))? = value["time"],
                  let parsed = try? Timestamp(rfc3339: time)
            else { throw StateFileError(message: "\"changesSince\" must be {\"field\": \"…\", \"time\": \"<RFC 3339 time>\"}") }
            changesSince = ChangeMark(field: field, time: parsed)
        }
        var entries: [RecordID: BaseEntry] = [:]
        entries.reserveCapacity(records.count)
        for member in records {
            let raw = member.key
            let id: RecordID
            do {
                id = try RecordID(raw)
            } catch {
                throw StateFileError(message: "record '\(raw)': \(error.message)")
            }
            guard case .scalar(.string(let hash))? = member.value["hash"], case .scalar(.string(let revision))? = member.value["revision"],
                  hash.hasPrefix("sha256:")
            else {
                throw StateFileError(message: "record '\(raw)' needs {\"hash\": \"sha256:…\", \"revision\": \"…\"}")
            }
            entries[id] = BaseEntry(hash: hash, revision: revision)
        }
        return Manifest(entries: entries, configFingerprint: configFingerprint, changesSince: changesSince)
    }
}

extension Manifest {
    /// Fast path for a manifest exactly as `encoded()` writes it: one record per
    /// line, ids with the escapes `encoded()` writes. Anything else (hand
    /// edits, damage) returns nil and goes through the full JSON parser, which
    /// explains errors.
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
        var changesSince: ChangeMark?
        let markKey = Array("  \"changesSince\": {\"field\": \"".utf8)
        if bytes[start...].starts(with: markKey) {
            /// A string without escapes up to its closing quote, followed by `after`.
            func plain(from index: Int, then after: String) -> (String, Int)? {
                guard let quote = bytes[index...].firstIndex(of: 0x22), bytes[index..<quote].allSatisfy({ $0 != 0x5C && $0 >= 0x20 }),
                      bytes[quote...].starts(with: Array(after.utf8)) else { return nil }
                let text = String(decoding: bytes[index..<quote], as: UTF8.self)
                guard text.utf8.elementsEqual(bytes[index..<quote]) else { return nil }
                return (text, quote + after.utf8.count)
            }
            guard let (field, timeStart) = plain(from: start + markKey.count, then: "\", \"time\": \""),
                  let (time, next) = plain(from: timeStart, then: "\"},\n"),
                  let parsed = try? Timestamp(rfc3339: time)
            else { return nil }
            changesSince = ChangeMark(field: field, time: parsed)
            start = next
        }
        guard bytes[start...].starts(with: recordsKey) else { return nil }
        let head = start + recordsKey.count
        if Array(bytes[head...]) == emptyTail { return Manifest(configFingerprint: configFingerprint, changesSince: changesSince) }
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
            /// A string up to the next unescaped quote, with the escapes
            /// `CanonicalJSON.writeString` writes decoded; nil on a control
            /// byte, any other escape or bytes that are not UTF-8.
            func string() -> String? {
                let start = i
                var unescaped: [UInt8]?
                var nonASCII = false
                while i < end, b[i] != 0x22 {
                    let c = b[i]
                    if c < 0x20 { return nil }
                    if c >= 0x80 { nonASCII = true }
                    if c == 0x5C {
                        if unescaped == nil { unescaped = Array(b[start..<i]) }
                        guard i + 1 < end else { return nil }
                        switch b[i + 1] {
                        case 0x22, 0x5C: unescaped!.append(b[i + 1])
                        case UInt8(ascii: "b"): unescaped!.append(0x08)
                        case UInt8(ascii: "f"): unescaped!.append(0x0C)
                        case UInt8(ascii: "n"): unescaped!.append(0x0A)
                        case UInt8(ascii: "r"): unescaped!.append(0x0D)
                        case UInt8(ascii: "t"): unescaped!.append(0x09)
                        case UInt8(ascii: "u"):
                            // Only the control characters writeString spells \u00xx.
                            guard i + 5 < end, b[i + 2] == 0x30, b[i + 3] == 0x30, let hi = Hex.value(b[i + 4], only: .lower), let lo = Hex.value(b[i + 5], only: .lower),
                                  hi < 2 else { return nil }
                            unescaped!.append(hi << 4 | lo)
                            i += 4
                        default: return nil
                        }
                        i += 2
                        continue
                    }
                    unescaped?.append(c)
                    i += 1
                }
                guard i < end else { return nil }
                if let unescaped {
                    let text = String(decoding: unescaped, as: UTF8.self)
                    return text.utf8.elementsEqual(unescaped) ? text : nil
                }
                let raw = UnsafeBufferPointer(rebasing: b[start..<i])
                let text = String(decoding: raw, as: UTF8.self)
                // Bytes that are not UTF-8 would be repaired silently: the full parser reports them.
                if nonASCII, !text.utf8.elementsEqual(raw) { return nil }
                return text
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
        return ok ? Manifest(entries: entries, configFingerprint: configFingerprint, changesSince: changesSince) : nil
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
    public init(position: SourcePosition? = nil, message: String) {
        self.position = position
        self.message = message
    }
}
