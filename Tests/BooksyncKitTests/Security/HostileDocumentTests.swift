import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

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

    /// A document sent without an updateTime failed the whole listing (after
    /// retries); it is now invalid by name, the rest of the answer used, and
    /// never taken for deleted.
    @Test func aDocumentWithoutUpdateTimeIsInvalidAloneNotTheListing() async throws {
        let fields = #""fields": {"id": {"stringValue": "ID"}, "title": {"stringValue": "T"}, "author": {"stringValue": "A"}, "genre": {"stringValue": "g"}}"#
        func entry(_ id: String, updateTime: Bool) -> String {
            let time = updateTime ? #", "updateTime": "2026-11-29T14:38:54.974642Z""# : ""
            return #"{"document": {"name": "projects/rec/databases/(default)/documents/books/\#(id)", \#(fields.replacingOccurrences(of: "ID", with: id))\#(time)}, "readTime": "2026-11-29T14:38:54.983414Z"}"#
        }
        let page = Array(("[" + [entry("a", updateTime: true), entry("b", updateTime: false), entry("c", updateTime: true)].joined(separator: ",") + "]").utf8)
        let script = ScriptedTransport([.response(200, page), .response(200, page)])
        let remote = FirestoreRemoteTests().remote(script)
        let listing = try await remote.listRevisions { _ in }
        #expect(listing.revisions.keys.map(\.rawValue).sorted() == ["a", "b", "c"], "b is listed, so never taken for deleted")
        #expect(listing.revisions[try RecordID("b")] == FirestoreRemote.missingRevision)
        let documents = Mutex<[RecordID: RemoteDocument]>([:])
        try await remote.listDocuments(batch: { _, found in documents.withLock { $0.merge(found) { a, _ in a } } }, progress: { _ in })
        let all = documents.withLock { $0 }
        #expect(all[try RecordID("b")]?.content == .invalid([FirestoreRemote.missingRevisionProblem]))
        if case .record? = all[try RecordID("a")]?.content {} else { Issue.record("a is a record: \(String(describing: all[try RecordID("a")]))") }
        // A remote invalid document is left alone by the rules whatever the base says.
        #expect(SyncRules.classify(base: BaseEntry(hash: "sha256:00", revision: "2026-11-29T14:38:54.974642Z"), local: .present(hash: "sha256:01"),
                                   remote: .invalid(revision: FirestoreRemote.missingRevision, [FirestoreRemote.missingRevisionProblem]), merge: { nil })
                == .invalidRemote([FirestoreRemote.missingRevisionProblem]))
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

    /// Fields the JSON parser refuses in any answer, with the parser's reason:
    /// nested 450 levels deep, and a number beyond a double.
    static let unreadableFields: [(kind: String, fields: String, reason: String)] = [
        ("too deep", bookFields("bad", extra: #", "deep": "# + String(repeating: #"{"mapValue": {"fields": {"x": "#, count: 150)
            + #"{"nullValue": null}"# + String(repeating: "}}}", count: 150)), "nesting deeper than 256 levels"),
        ("huge number", bookFields("bad", extra: #", "n": {"doubleValue": 1e999}"#), "number 1e999 is too large for a double"),
    ]

    /// A document as `documents.list` and `:runQuery` carry it.
    static func listedDocument(_ id: String, fields: String) -> String {
        #"{"name": "\#(root)/books/\#(id)", "fields": \#(fields), "createTime": "2024-01-01T00:00:00.000001Z", "updateTime": "2024-01-01T00:00:00.000002Z"}"#
    }

    /// The answers of a listing (`:runQuery`, or `documents.list` where that
    /// is refused) and of `:batchGet`, each holding a document the parser
    /// refuses between two good ones.
    static func answers(_ fields: String) -> (runQuery: String, listPage: String, batchGet: String) {
        let ids = ["a", "bad", "c"]
        func body(_ id: String) -> String { id == "bad" ? fields : bookFields(id) }
        return ("[" + ids.map { #"{"document": \#(listedDocument($0, fields: body($0))), "readTime": "2024-01-01T00:00:01Z"}"# }.joined(separator: ", ") + "]",
                #"{"documents": ["# + ids.map { listedDocument($0, fields: body($0)) }.joined(separator: ", ") + "]}",
                "[" + ids.map { wireDocument($0, fields: body($0)) }.joined(separator: ", ") + "]")
    }

    /// One document the JSON parser refuses failed the whole answer (after
    /// retries), so no listing or pull got past it: now the answer is read
    /// entry by entry, that document is invalid by its name (with the
    /// parser's reason, and its revision, so never taken for deleted), and the
    /// others are records. In `:runQuery` and `documents.list` listings and
    /// in `:batchGet`, each at its first attempt.
    @Test(arguments: unreadableFields.map(\.kind))
    func aDocumentTheParserRefusesIsInvalidAloneInEveryAnswer(kind: String) async throws {
        let row = try #require(Self.unreadableFields.first { $0.kind == kind })
        let (runQuery, listPage, batchGet) = Self.answers(row.fields)
        let ids = try ["a", "bad", "c"].map { try RecordID($0) }
        let problem = FirestoreRemote.unreadableProblem(row.reason)
        func expectOneInvalid(_ documents: [RecordID: RemoteDocument], _ answer: String) {
            #expect(Set(documents.keys) == Set(ids), "\(answer)")
            #expect(documents[ids[0]]?.record != nil && documents[ids[2]]?.record != nil, "\(answer)")
            #expect(documents[ids[1]]?.content == .invalid([problem]), "\(answer)")
            #expect(documents[ids[1]]?.revision == "2024-01-01T00:00:00.000002Z" || answer == ":batchGet", "\(answer)")
        }
        for (answer, script) in [(":runQuery", ScriptedTransport([.response(200, Array(runQuery.utf8))])),
                                 ("documents.list", ScriptedTransport([.response(501, errorBody(501, "UNIMPLEMENTED")), .response(200, Array(listPage.utf8))]))] {
            let documents = Mutex<[RecordID: RemoteDocument]>([:])
            let revisions = Mutex<[RecordID: String]>([:])
            try await FirestoreRemoteTests().remote(script, attempts: 1).listDocuments(batch: { listing, found in
                documents.withLock { $0.merge(found) { a, _ in a } }
                revisions.withLock { $0.merge(listing.revisions.map { ($0.key, $0.value) }) { a, _ in a } }
            }, progress: { _ in })
            expectOneInvalid(documents.withLock { $0 }, answer)
            #expect(Set(revisions.withLock { $0 }.keys) == Set(ids), "\(answer): bad is listed")
            #expect(script.remaining == 0)
        }
        let fetching = ScriptedTransport([.response(200, Array(batchGet.utf8))])
        expectOneInvalid(try await FirestoreRemoteTests().remote(fetching, attempts: 1).fetch(ids) { _ in }, ":batchGet")
    }

    /// An answer that is not well-formed JSON besides (here cut short) still
    /// fails as a whole after its retries, as does a refused entry without a
    /// name to report it by.
    @Test(arguments: unreadableFields.map(\.kind))
    func anAnswerBrokenBesidesOrWithoutANameStillFails(kind: String) async throws {
        let row = try #require(Self.unreadableFields.first { $0.kind == kind })
        let (runQuery, _, _) = Self.answers(row.fields)
        let truncated = Array(runQuery.utf8.dropLast(2))
        let script = ScriptedTransport([.response(200, truncated), .response(200, truncated)])
        await #expect {
            try await FirestoreRemoteTests().remote(script, attempts: 2).listRevisions { _ in }
        } throws: { error in
            guard case .malformedResponse(let during, let detail)? = error as? RemoteError else { return false }
            return during == "list books" && detail.hasPrefix("the answer is not valid JSON")
        }
        #expect(script.remaining == 0, "retried, as any unreadable answer")

        let nameless = runQuery.replacingOccurrences(of: #""name": "\#(Self.root)/books/bad", "#, with: "")
        await #expect(throws: RemoteError.malformedResponse(during: "list books", detail: "an entry without a name that cannot be read: \(row.reason)")) {
            try await FirestoreRemoteTests().remote(ScriptedTransport([.response(200, Array(nameless.utf8))]), attempts: 1).listRevisions { _ in }
        }
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

/// `status` and `pull` see documents that cannot be records the same way.
@Suite struct InvalidRemoteStatusTests {
    /// An in-memory remote; records which bodies were asked for.
    final class MemoryRemote: RemoteCollection {
        let documents: [RecordID: RemoteDocument]
        let fetched = Mutex<[RecordID]>([])
        var displayName: String { "memory" }

        init(_ documents: [RemoteDocument]) {
            self.documents = Dictionary(uniqueKeysWithValues: documents.map { ($0.id, $0) })
        }

        var listing: RemoteListing { RemoteListing(revisions: RemoteRevisions(documents.mapValues(\.revision))) }

        func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing { listing }
        func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                           progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
            batch(listing, documents)
        }
        func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument] {
            fetched.withLock { $0 += ids }
            return documents.filter { ids.contains($0.key) }
        }
        func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] { [:] }
    }

    static let rules = CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")).rules

    static func document(_ id: String, _ change: (inout Fields) -> Void = { _ in }) -> RemoteDocument {
        var fields: Fields = ["id": .string(id), "title": .string("T"), "author": .string("A"), "genre": .string("g")]
        change(&fields)
        let recordID = try! RecordID(id)
        return RemoteDocument(id: recordID, revision: "2024-01-01T00:00:00.000001Z", content: FirestoreRemote.recordContent(&fields, id: recordID, rules: rules))
    }

    static func nested(_ depth: Int) -> Value { depth == 0 ? .integer(1) : .map(["n": nested(depth - 1)]) }

    static let invalidDocuments: [(String, @Sendable (inout Fields) -> Void)] = [
        ("wrong type", { $0["author"] = .integer(3) }),
        ("missing field", { $0["genre"] = nil }),
        ("mismatched id", { $0["id"] = .string("other") }),
        ("single-$ map", { $0["price"] = .map(["$amount": .integer(3)]) }),
        ("too deep", { $0["deep"] = nested(25) }),
        ("oversized", { $0["blob"] = .string(String(repeating: "x", count: 1_100_000)) }),
    ]

    @Test(arguments: invalidDocuments.map(\.0))
    func statusClassifiesLikePull(name: String) async throws {
        let change = Self.invalidDocuments.first { $0.0 == name }!.1
        let scratch = try ScratchDirectory()
        let collection = try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
        let remote = MemoryRemote([Self.document("good"), Self.document("bad", change)])
        let bad = try RecordID("bad")

        // Before any pull (no base), after the first pull, and again: always invalid.
        for round in 1...3 {
            let status = try await collection.status(remote: remote)
            let statusInvalid = status.records.filter { if case .invalidRemote = $0.state { true } else { false } }.map(\.id)
            #expect(statusInvalid == [bad], "round \(round): \(status.records)")
            #expect(status.needsAttention)
            #expect(!status.records.contains { $0.id == bad && $0.state == .remoteChange(.added) })
            if round < 3 {
                let report = try await collection.pull(remote: remote)
                let pullInvalid = report.events.filter { if case .invalidRemote = $0.kind { true } else { false } }.map(\.id)
                #expect(pullInvalid == statusInvalid, "round \(round): pull and status agree")
                #expect(report.needsAttention)
                #expect(!FileManager.default.fileExists(atPath: scratch.path + "/bad.json"))
            }
        }
        // Status never fetched the body of the synced, unchanged document.
        let good = try RecordID("good")
        let fetched = remote.fetched.withLock { $0 }
        #expect(fetched.filter { $0 == good }.count == 1, "only the status before the first pull asked for it: \(fetched)")
    }
}
