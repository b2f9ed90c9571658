/// The format of `.booksync/base/pack`, the append-only file of base copies.
///
/// One line per copy: `<encoded id> TAB <content hash> TAB <record as one-line
/// JSON> LF`. A sync appends the copies it records whenever it saves the
/// manifest (one write each time, at most about once a second), instead of
/// creating a file per record: creating 10,000 small files costs
/// seconds on some disks, one append costs milliseconds. The manifest says which
/// copy is current (by content hash), so older and duplicate lines are harmless
/// until `compacted` drops them, and a line cut short by a crash (no final LF)
/// is ignored. Lines are plain text, so the file diffs and merges well in git
/// (`merge=union` is exactly right for it).
public enum BasePack {
    /// Where one copy's line sits in the pack bytes.
    public struct Entry: Sendable, Equatable {
        /// The content hash on the line (`sha256:<hex>`), not yet checked against the JSON.
        public let hash: String
        /// The whole line, LF included.
        public let line: Range<Int>
        /// The record's JSON within the line.
        public let json: Range<Int>
    }

    /// The line for one base copy.
    public static func line(for record: Record) -> [UInt8] {
        var out = Array(record.id.encodedName.utf8)
        out.append(tab)
        out += record.hash.utf8
        out.append(tab)
        out += CanonicalJSON.encodeInline(.map(record.fields)).utf8
        out.append(newline)
        return out
    }

    /// Every complete, well-formed line, by encoded id, in file order. Encoded
    /// ids are ASCII, so these String keys compare byte by byte: ids that
    /// differ only by Unicode normalization keep their own copies.
    public static func index(_ bytes: [UInt8]) -> [String: [Entry]] {
        var entries: [String: [Entry]] = [:]
        var start = 0
        bytes.withUnsafeBufferPointer { buffer in
            while start < buffer.count {
                guard let end = buffer[start...].firstIndex(of: newline) else { break }  // cut short: ignored
                defer { start = end + 1 }
                guard let firstTab = buffer[start..<end].firstIndex(of: tab),
                      let secondTab = buffer[(firstTab + 1)..<end].firstIndex(of: tab),
                      firstTab > start, secondTab > firstTab + 1 else { continue }
                let name = String(decoding: buffer[start..<firstTab], as: UTF8.self)
                let hash = String(decoding: buffer[(firstTab + 1)..<secondTab], as: UTF8.self)
                entries[name, default: []].append(Entry(hash: hash, line: start..<(end + 1), json: (secondTab + 1)..<end))
            }
        }
        return entries
    }

    /// The fields of the copy of `id` whose content hash is `hash`, checked
    /// against that hash; nil if there is none (or it was damaged).
    /// - Parameters:
    ///   - hash: The content hash the manifest records for `id`.
    ///   - bytes: The whole pack file.
    ///   - index: `index(bytes)`, built once per pack and reused per record.
    ///   - rules: The collection's rules, to recompute the canonical hash.
    public static func fields(of id: RecordID, hash: String, in bytes: [UInt8], index: [String: [Entry]], rules: RecordRules) -> Fields? {
        for entry in index[id.encodedName]?.reversed() ?? [] where entry.hash == hash {
            guard let fields = try? JSONParser.parseObject(bytes[entry.json]) else { continue }
            if SHA256.contentHash(rules.canonicalBytes(fields)) == hash { return fields }
        }
        return nil
    }

    /// The pack with only the current copies, sorted by id: for each record in
    /// `current` (id → content hash), its line if the pack has one. Also
    /// returns the ids it had no line for.
    /// - Parameters:
    ///   - bytes: The whole pack file, and `index` built from it.
    ///   - current: The manifest's entries: record id → content hash.
    public static func compacted(_ bytes: [UInt8], index: [String: [Entry]], current: [RecordID: String]) -> (bytes: [UInt8], missing: [RecordID]) {
        var out: [UInt8] = []
        var missing: [RecordID] = []
        for (id, hash) in current.sorted(by: { $0.key < $1.key }) {
            if let entry = index[id.encodedName]?.last(where: { $0.hash == hash }) {
                out += bytes[entry.line]
            } else {
                missing.append(id)
            }
        }
        return (out, missing)
    }

    /// The byte between the fields of a line.
    public static let tab = UInt8(ascii: "\t")
    /// The byte that ends a line; a line without it was cut short and is ignored.
    public static let newline = UInt8(ascii: "\n")
}
