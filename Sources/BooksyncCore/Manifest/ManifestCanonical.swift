/// The fast path for a manifest exactly as `Manifest.encode` writes it, fed
/// line by line so a million-record manifest is never held as bytes: one
/// record per line, ids with the escapes `encode` writes. Anything else (hand
/// edits, damage) fails, and the caller goes through `Manifest.decode`, whose
/// full JSON parser explains errors. 100,000 records decode in tens of
/// milliseconds instead of hundreds.
///
/// Header lines between `"version"` and `"records"` are `"key": "text",`,
/// and the change mark `"changesSince": {"field": "…", "time": "…"},`; only
/// `target`, `config` and `changesSince` are known here, so a manifest with any other
/// key takes the full parser (which knows every key) until it is added to `finish`.
package struct CanonicalManifestDecoder {
    private enum Stage { case open, version, header, records, recordsClosed, done, failed }
    private var stage = Stage.open
    private var entries = ManifestEntries()
    private var header: [(String, String)] = []
    private var changesSince: ChangeMark?
    /// A record line without the trailing comma was read: only `  }` may follow.
    private var sawLastRecord = false

    /// The subcollections whose path ids the manifest may hold.
    private var subcollections = Subcollections.none
    /// What path ids into other subcollections become (`Manifest.decode`).
    private var otherPathIDs = OtherPathIDs.refused

    /// A decoder expecting the first line.
    /// - Parameters:
    ///   - subcollections: the configured subcollections; a path id into any
    ///     other makes the manifest non-canonical here (and an error in
    ///     `Manifest.decode`), unless
    ///   - otherPathIDs: says otherwise (`Manifest.decode`).
    package init(subcollections: Subcollections = .none, otherPathIDs: OtherPathIDs = .refused) {
        self.subcollections = subcollections
        self.otherPathIDs = otherPathIDs
    }

    /// A decoder for a file of `expectedBytes`: room is made for as many
    /// records as it is likely to hold (a line is 137 bytes plus the id with
    /// a Firestore revision), so a large manifest is not copied while its
    /// arrays grow (a doubling array briefly holds 1.5 times its size).
    package init(expectedBytes: Int, subcollections: Subcollections = .none, otherPathIDs: OtherPathIDs = .refused) {
        self.subcollections = subcollections
        self.otherPathIDs = otherPathIDs
        entries.reserveCapacity(min(expectedBytes / 130, 1 << 26))
    }

    /// Takes whole lines (the block ends just after a newline, or at the end of
    /// the file); false as soon as they are not in the canonical form.
    package mutating func feed(_ block: UnsafeBufferPointer<UInt8>) -> Bool {
        var start = 0
        while start < block.count, stage != .failed {
            var end = start
            while end < block.count, block[end] != 0x0A { end += 1 }
            guard end < block.count else {
                stage = .failed  // every line of the canonical form ends in a newline
                break
            }
            take(UnsafeBufferPointer(rebasing: block[start..<end]))
            start = end + 1
        }
        return stage != .failed
    }

    /// The manifest, when the lines fed were all of it; nil otherwise.
    package func finish() -> Manifest? {
        guard stage == .done else { return nil }
        var config: String?
        var target: TargetIdentity?
        for (key, value) in header {
            switch key {
            case "config" where config == nil: config = value
            case "target" where target == nil:
                guard let identity = TargetIdentity(rawValue: value) else { return nil }
                target = identity
            default: return nil
            }
        }
        return Manifest(entries: entries, configFingerprint: config, changesSince: changesSince, target: target)
    }

    private mutating func take(_ line: UnsafeBufferPointer<UInt8>) {
        switch stage {
        case .open: stage = line.elementsEqual("{".utf8) ? .version : .failed
        case .version: stage = line.elementsEqual("  \"version\": 1,".utf8) ? .header : .failed
        case .header:
            if line.elementsEqual("  \"records\": {}".utf8) {
                stage = .recordsClosed
            } else if line.elementsEqual("  \"records\": {".utf8) {
                stage = .records
            } else if let field = Self.headerField(line) {
                header.append(field)
            } else if changesSince == nil, let mark = Self.changeMark(line) {
                changesSince = mark
            } else {
                stage = .failed
            }
        case .records:
            if line.elementsEqual("  }".utf8), sawLastRecord {
                stage = .recordsClosed
            } else if !record(line) {
                stage = .failed
            }
        case .recordsClosed: stage = line.elementsEqual("}".utf8) ? .done : .failed
        case .done, .failed: stage = .failed
        }
    }

    /// `  "key": "text",` with no escapes or control bytes in either.
    private static func headerField(_ line: UnsafeBufferPointer<UInt8>) -> (String, String)? {
        var r = LineReader(line: line, i: 0)
        guard r.expect("  \""), let key = r.plainUntilQuote(), r.expect("\": \""), let value = r.plainUntilQuote(),
              r.expect("\","), r.i == line.count
        else { return nil }
        return (key, value)
    }

    /// `  "changesSince": {"field": "updatedAt", "time": "…"},`, or with
    /// `"scope": "…"` between the two (a scoped collection's mark, whose
    /// text has quotes: `genre == \"sf\"`), with a field name that needs no
    /// escape (one that does takes the full parser) and a valid time.
    static func changeMark(_ line: UnsafeBufferPointer<UInt8>) -> ChangeMark? {
        var r = LineReader(line: line, i: 0)
        guard r.expect("  \"changesSince\": {\"field\": \""), let field = r.plainUntilQuote() else { return nil }
        var scope: String?
        if r.expect("\", \"scope\": \"") {
            guard let text = r.string(), r.expect(", \"time\": \"") else { return nil }
            scope = text
        } else {
            guard r.expect("\", \"time\": \"") else { return nil }
        }
        guard let time = r.plainUntilQuote(), r.expect("\"},"), r.i == line.count,
              let parsed = try? Timestamp(rfc3339: time)
        else { return nil }
        return ChangeMark(field: field, time: parsed, scope: scope)
    }

    /// `    "id": {"hash": "sha256:…", "revision": "…"}` with `,` unless it is the last.
    private mutating func record(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !sawLastRecord else { return false }
        var r = LineReader(line: line, i: 0)
        guard r.expect("    \""), let raw = r.string(), r.expect(": {\"hash\": \"") else { return false }
        let hashStart = r.i
        guard r.skipPlain() else { return false }
        let hash = UnsafeBufferPointer(rebasing: line[hashStart..<r.i])
        guard r.expect("\", \"revision\": \"") else { return false }
        let revisionStart = r.i
        guard r.skipPlain() else { return false }
        let revision = UnsafeBufferPointer(rebasing: line[revisionStart..<r.i])
        guard r.expect("\"}") else { return false }
        if r.i == line.count {
            sawLastRecord = true
        } else {
            guard r.expect(","), r.i == line.count else { return false }
        }
        guard hash.starts(with: "sha256:".utf8) else { return false }
        let key = RecordID(plain: raw).map { ManifestKey.record($0) }
            ?? ManifestKey(raw, subcollections: subcollections, others: otherPathIDs)
        guard case .record(let id) = key else { return key == .forgotten }
        guard entries[id] == nil else { return false }
        if let digest = ContentDigest(contentHashBytes: hash), let packed = PackedRevision(bytes: revision) {
            entries.add(id, digest: digest, revision: packed)
        } else {
            guard let hashText = LineReader.utf8(hash), let revisionText = LineReader.utf8(revision) else { return false }
            entries[id] = BaseEntry(hash: ContentHash(text: hashText), revision: revisionText)
        }
        return true
    }
}

/// Reads the tokens of one canonical manifest line.
private struct LineReader {
    let line: UnsafeBufferPointer<UInt8>
    var i: Int

    mutating func expect(_ token: StaticString) -> Bool {
        let count = token.utf8CodeUnitCount
        guard i + count <= line.count else { return false }
        let t = token.utf8Start
        for k in 0..<count where line[i + k] != t[k] { return false }
        i += count
        return true
    }

    /// Skips to the next quote over bytes that need no escape (no `\`, no control bytes).
    mutating func skipPlain() -> Bool {
        while i < line.count, line[i] != 0x22 {
            if line[i] == 0x5C || line[i] < 0x20 { return false }
            i += 1
        }
        return i < line.count
    }

    /// `skipPlain` as a string; nil unless the bytes are UTF-8.
    mutating func plainUntilQuote() -> String? {
        let start = i
        guard skipPlain() else { return nil }
        return Self.utf8(UnsafeBufferPointer(rebasing: line[start..<i]))
    }

    /// Text of bytes that are valid UTF-8; nil otherwise (bytes that are not
    /// UTF-8 would be repaired silently: the full parser reports them).
    static func utf8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }

    /// A string up to the next unescaped quote, with the escapes
    /// `CanonicalJSON.writeString` writes decoded; nil on a control byte, any
    /// other escape or bytes that are not UTF-8.
    mutating func string() -> String? {
        let start = i
        var unescaped: [UInt8]?
        while i < line.count, line[i] != 0x22 {
            let c = line[i]
            if c < 0x20 { return nil }
            if c == 0x5C {
                if unescaped == nil { unescaped = Array(line[start..<i]) }
                guard i + 1 < line.count else { return nil }
                switch line[i + 1] {
                case 0x22, 0x5C: unescaped!.append(line[i + 1])
                case UInt8(ascii: "b"): unescaped!.append(0x08)
                case UInt8(ascii: "f"): unescaped!.append(0x0C)
                case UInt8(ascii: "n"): unescaped!.append(0x0A)
                case UInt8(ascii: "r"): unescaped!.append(0x0D)
                case UInt8(ascii: "t"): unescaped!.append(0x09)
                case UInt8(ascii: "u"):
                    // Only the control characters writeString spells \u00xx.
                    guard i + 5 < line.count, line[i + 2] == 0x30, line[i + 3] == 0x30,
                          let hi = Hex.value(line[i + 4], only: .lower), let lo = Hex.value(line[i + 5], only: .lower), hi < 2
                    else { return nil }
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
        guard i < line.count else { return nil }
        defer { i += 1 }  // the closing quote
        if let unescaped { return unescaped.withUnsafeBufferPointer { Self.utf8($0) } }
        return Self.utf8(UnsafeBufferPointer(rebasing: line[start..<i]))
    }
}

extension Manifest {
    /// The fast path over a whole manifest's bytes (see `CanonicalManifestDecoder`).
    static func decodeCanonical(_ bytes: [UInt8], subcollections: Subcollections = .none, otherPathIDs: OtherPathIDs = .refused) -> Manifest? {
        var decoder = CanonicalManifestDecoder(subcollections: subcollections, otherPathIDs: otherPathIDs)
        guard bytes.withUnsafeBufferPointer({ decoder.feed($0) }) else { return nil }
        return decoder.finish()
    }
}
