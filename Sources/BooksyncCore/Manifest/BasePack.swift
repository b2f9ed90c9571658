/// The format of `.booksync/base/pack`, the append-only file of base copies.
///
/// One line per copy: `<encoded id> TAB <content hash> TAB <record as one-line
/// JSON> LF`. A sync appends the copies it records whenever it saves the
/// manifest (one write each time, at most about once a second), instead of
/// creating a file per record: creating 10,000 small files costs
/// seconds on some disks, one append costs milliseconds. The manifest says which
/// copy is current (by content hash), so older and duplicate lines are harmless
/// until compaction (`BaseCopyStore`) drops them, and a line cut short by a crash (no final LF)
/// is ignored. Lines are plain text, so the file diffs and merges well in git
/// (`merge=union` is exactly right for it).
package enum BasePack {
    /// Where the parts of one line sit, as offsets into the line.
    package struct LineParts: Sendable, Equatable {
        /// The record's encoded id (its file name without `.json`).
        package let name: Range<Int>
        /// The content hash (`sha256:<hex>`), not yet checked against the JSON.
        package let hash: Range<Int>
        /// The record as one-line JSON.
        package let json: Range<Int>
    }

    /// The line for one base copy.
    package static func line(for record: CanonicalRecord) -> [UInt8] {
        var out = Array(record.id.encodedName.utf8)
        out.append(tab)
        out += record.hash.text.utf8
        out.append(tab)
        out += CanonicalJSON.encodeInline(.map(record.fields)).utf8
        out.append(newline)
        return out
    }

    /// The parts of one line (without its LF); nil for a line that is not a
    /// copy (the header, a damaged line).
    package static func parts(of line: UnsafeBufferPointer<UInt8>) -> LineParts? {
        guard let firstTab = line.firstIndex(of: tab),
              let secondTab = line[(firstTab + 1)...].firstIndex(of: tab),
              firstTab > 0, secondTab > firstTab + 1 else { return nil }
        return LineParts(name: 0..<firstTab, hash: (firstTab + 1)..<secondTab, json: (secondTab + 1)..<line.count)
    }

    /// The fields of a line's JSON if they are the record whose content hash
    /// is `hash`; nil for a copy that was damaged or edited by hand.
    /// - Parameters:
    ///   - json: The line's JSON part (`LineParts.json`).
    ///   - hash: The content hash the manifest records for the record.
    ///   - rules: The collection's rules, which encode the canonical bytes hashed.
    ///   - id: The record, whose schema decides the canonical key order.
    package static func verifiedFields(json: UnsafeBufferPointer<UInt8>, hash: ContentHash, rules: RecordRules, id: RecordID? = nil) -> Fields? {
        guard let fields = try? JSONParser.parseObject(json),
              SHA256.contentHash(rules.canonicalBytes(fields, id: id)) == hash else { return nil }
        return fields
    }

    /// The byte between the fields of a line.
    package static let tab = UInt8(ascii: "\t")
    /// The byte that ends a line; a line without it was cut short and is ignored.
    package static let newline = UInt8(ascii: "\n")
}
