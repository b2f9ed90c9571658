import BooksyncCodable
import BooksyncCore
import Testing

/// A DTO through a record file and back: encode, add the id, write the
/// canonical bytes, load them as booksync loads a file (parser, schema,
/// Firestore limits), decode.
enum RecordFiles {
    /// No required fields beyond `id`, so any DTO's fields make a valid record.
    static let rules = RecordRules(schema: RecordSchema(requiredFields: []))

    /// The canonical bytes of `value` as the record `id`.
    static func bytes<T: Encodable>(of value: T, id: String = "r") throws -> [UInt8] {
        var fields = try RecordEncoder().encode(value)
        if fields["id"] == nil { fields["id"] = .string(id) }
        return CanonicalRecord(id: try RecordID(id), fields: fields, leadingKeys: rules.schema.leadingKeys).canonicalBytes
    }

    /// The record booksync reads from `bytes`, or a test failure listing its problems.
    static func load(_ bytes: [UInt8], id: String = "r") throws -> CanonicalRecord {
        switch rules.load(bytes, id: try RecordID(id)) {
        case .success(let record): return record
        case .failure(let problems):
            Issue.record("not a valid record file: \(problems.diagnostics)\n\(String(decoding: bytes, as: UTF8.self))")
            throw problems
        }
    }

    /// `value` written as a file, read back and decoded; the second encoding's
    /// bytes must equal the first's.
    static func roundTrip<T: Codable>(_ value: T, id: String = "r") throws -> (decoded: T, file: [UInt8]) {
        let file = try bytes(of: value, id: id)
        let record = try load(file, id: id)
        let decoded = try RecordDecoder().decode(T.self, from: record, file: "books/\(id).json")
        let again = try bytes(of: decoded, id: id)
        #expect(again == file, "second encoding differs:\n\(String(decoding: file, as: UTF8.self))\n\(String(decoding: again, as: UTF8.self))")
        return (decoded, file)
    }
}
