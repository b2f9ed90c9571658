import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@testable import BooksyncKit

/// Remote documents booksync cannot hold: each is invalid on its own, never
/// the whole batch, and status classifies them exactly as pull does.
@Suite struct HostileDocumentTests {
    static let root = "projects/rec/databases/(default)/documents"
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    /// Field maps with two names equal under canonical equivalence, at several depths.
    @Test(arguments: [
        ("{\"\(nfc)\": {\"integerValue\": \"1\"}, \"\(nfd)\": {\"integerValue\": \"2\"}}",
         #"the document has two field names that differ only by Unicode normalization, "caf\u00E9" and "cafe\u0301"; booksync cannot hold both in one record (field names are compared as Unicode text)"#),
        ("{\"a\": {\"mapValue\": {\"fields\": {\"b\": {\"mapValue\": {\"fields\": {\"\(nfd)\": {\"nullValue\": null}, \"\(nfc)\": {\"nullValue\": null}}}}}}}}",
         #"field 'a.b' has two field names that differ only by Unicode normalization, "cafe\u0301" and "caf\u00E9"; booksync cannot hold both in one record (field names are compared as Unicode text)"#),
        ("{\"list\": {\"arrayValue\": {\"values\": [{\"nullValue\": null}, {\"mapValue\": {\"fields\": {\"\u{212B}\": {\"nullValue\": null}, \"\u{C5}\": {\"nullValue\": null}}}}]}}}",
         #"field 'list[1]' has two field names that differ only by Unicode normalization, "\u212B" and "\u00C5"; booksync cannot hold both in one record (field names are compared as Unicode text)"#),
    ])
    func equivalentFieldNamesAreAnErrorOfTheDocument(wireFields: String, message: String) throws {
        let wire = try JSONParser.parse(Array(wireFields.utf8), decodeTags: false)
        #expect(throws: FirestoreValueCodec.DecodeError.self) { try FirestoreValueCodec.decodeFields(wire, documentsRoot: Self.root) }
        do { _ = try FirestoreValueCodec.decodeFields(wire, documentsRoot: Self.root) } catch { #expect(error.message == message) }
    }

    static func wireDocument(_ id: String, fields: String) -> String {
        #"{"found": {"name": "\#(root)/books/\#(id)", "updateTime": "2024-01-01T00:00:00.000001Z", "fields": \#(fields)}, "readTime": "2024-01-01T00:00:01Z"}"#
    }

    static func bookFields(_ id: String, extra: String = "") -> String {
        #"{"id": {"stringValue": "\#(id)"}, "title": {"stringValue": "T"}, "author": {"stringValue": "A"}, "genre": {"stringValue": "g"}\#(extra)}"#
    }

    /// One batchGet answer with one such document among good ones: the good ones
    /// are records, that one is invalid, nothing is thrown.
    @Test func oneDocumentWithEquivalentFieldNamesSparesTheBatch() async throws {
        let answer = "[" + [
            Self.wireDocument("a", fields: Self.bookFields("a")),
            Self.wireDocument("bad", fields: Self.bookFields("bad", extra: ", \"\(Self.nfc)\": {\"integerValue\": \"1\"}, \"\(Self.nfd)\": {\"integerValue\": \"2\"}")),
            Self.wireDocument("c", fields: Self.bookFields("c")),
        ].joined(separator: ", ") + "]"
        let script = ScriptedTransport([.response(200, Array(answer.utf8))])
        let remote = FirestoreRemoteTests().remote(script, attempts: 1)
        let documents = try await remote.fetch([try RecordID("a"), try RecordID("bad"), try RecordID("c")]) { _ in }
        #expect(documents.count == 3)
        #expect(documents[try RecordID("a")]?.record != nil)
        #expect(documents[try RecordID("c")]?.record != nil)
        guard case .invalid(let problems)? = documents[try RecordID("bad")]?.content else { Issue.record("bad is not invalid"); return }
        #expect(problems.map(\.message) == [
            #"the document has two field names that differ only by Unicode normalization, "caf\u00E9" and "cafe\u0301"; booksync cannot hold both in one record (field names are compared as Unicode text)"#,
        ])
    }

    /// Ids differing only by normalization come back as two documents, keyed by bytes.
    @Test func batchGetAnswersAreKeyedByIdBytes() async throws {
        let answer = "[" + [
            Self.wireDocument(Self.nfd, fields: Self.bookFields(Self.nfd)),
            Self.wireDocument(Self.nfc, fields: Self.bookFields(Self.nfc)),
        ].joined(separator: ", ") + "]"
        let remote = FirestoreRemoteTests().remote(ScriptedTransport([.response(200, Array(answer.utf8))]), attempts: 1)
        let ids = [try RecordID(Self.nfc), try RecordID(Self.nfd)]
        let documents = try await remote.fetch(ids) { _ in }
        #expect(documents.count == 2)
        for id in ids {
            #expect(documents[id]?.record?.fields["id"] == .string(id.rawValue), "\(Array(id.rawValue.utf8))")
        }
    }
}
