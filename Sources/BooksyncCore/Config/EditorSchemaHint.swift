/// The `"$schema"` key of a record file: the editor's pointer to the JSON
/// Schema that gives it completion and errors (the manual's CollectionFormat article).
///
/// It belongs to the file, not to the record: it is never sent to
/// Firestore, never pulled, never part of a comparison or a merge, and a
/// change to it alone is no change to the record, like the change field.
/// Parsing takes it off the fields (`RecordRules.parse(_:)`); the writers
/// that replace a file put the file's hint back first
/// (`RecordRules.fileBytes(_:id:hint:)`), so a pull or a merge keeps it.
package enum EditorSchemaHint {
    /// The key, as JSON Schema and every editor spell it.
    package static let key = "$schema"

    /// `fields` without the hint, and the hint's value if there was one.
    package static func split(_ fields: Fields) -> (fields: Fields, hint: Value?) {
        guard let hint = fields[key] else { return (fields, nil) }
        var rest = fields
        rest[key] = nil
        return (rest, hint)
    }

    /// Why a hint's value cannot be kept, or nil: it must be a string (a URI
    /// or relative path), as editors read it.
    package static func problem(with value: Value) -> String? {
        if case .string = value { return nil }
        return "field '\(key)' is the editor's schema hint and must be a string such as \"./.booksync/record.schema.json\", found \(value.kindName)"
    }

    /// A cheap test for files that certainly have no hint, so writers parse
    /// a file only when its bytes contain `"$schema"`, or a `\u` escape that
    /// could spell it (`"\u0024schema"`).
    /// One pass over the bytes: a pull rewrites many files, and the standard
    /// library's generic `firstRange(of:)` made that pull costly (<doc:Benchmarks>).
    package static func mayBeIn(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            let needle = quotedKey
            var i = 0
            while i + 1 < buffer.count {
                switch (buffer[i], buffer[i + 1]) {
                case (0x5C, 0x75):  // \u
                    return true
                case (0x22, 0x24) where i + needle.count <= buffer.count:  // "$
                    if (2..<needle.count).allSatisfy({ buffer[i + $0] == needle[$0] }) { return true }
                default:
                    break
                }
                i += 1
            }
            return false
        }
    }

    /// `"$schema"` with its quotes, as bytes.
    private static let quotedKey = Array("\"\(key)\"".utf8)
}
