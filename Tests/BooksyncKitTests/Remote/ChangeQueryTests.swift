import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The wire side of the change-field path: the query and write bodies, paging
/// by (change time, name), and the mark a pull records from a snapshot.
@Suite struct ChangeQueryTests {
    static let target = FirestoreTarget(project: "p", collectionPath: "books")
    static let mark = ChangeMark(field: "updatedAt", time: try! Timestamp(rfc3339: "2026-12-01T09:59:00.5Z"))
    static func id(_ s: String) -> RecordID { try! RecordID(s) }

    static func remote(changeField: String?, transport: @escaping HTTPTransport = { _ in HTTPResponse(status: 500, body: []) }) -> FirestoreRemote {
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("test-token-0123456789")))
        let retry = RetryPolicy(maximumAttempts: 1, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), sleep: { _ in }, random: { 0.5 })
        return FirestoreRemote(target: target, endpoint: endpoint, rules: CollectionConfig(remote: target, changeField: changeField).rules,
                               transport: transport, retry: retry)
    }

    @Test func theChangeQueryFiltersOrdersAndContinuesByChangeTimeThenName() {
        let first = String(decoding: FirestoreRemote.listQuery("books", after: nil, limit: 300, withBodies: true, changedSince: Self.mark), as: UTF8.self)
        #expect(first == #"{"structuredQuery": {"from": [{"collectionId": "books"}], "limit": 300, "orderBy": [{"direction": "ASCENDING", "field": {"fieldPath": "updatedAt"}}, {"direction": "ASCENDING", "field": {"fieldPath": "__name__"}}], "where": {"fieldFilter": {"field": {"fieldPath": "updatedAt"}, "op": "GREATER_THAN_OR_EQUAL", "value": {"timestampValue": "2026-12-01T09:59:00.500000Z"}}}}}"#)
        let next = String(decoding: FirestoreRemote.listQuery("books", after: .init(name: "projects/p/databases/(default)/documents/books/b7", changeTime: "2026-12-01T10:00:00.123Z"),
                                                              limit: 2000, withBodies: true, changedSince: Self.mark), as: UTF8.self)
        #expect(next.contains(#""startAt": {"before": false, "values": [{"timestampValue": "2026-12-01T10:00:00.123Z"}, {"referenceValue": "projects/p/databases/(default)/documents/books/b7"}]}"#), "\(next)")
        // The plain listing is unchanged.
        let plain = String(decoding: FirestoreRemote.listQuery("books", after: .init(name: "n", changeTime: nil), limit: 10, withBodies: false), as: UTF8.self)
        #expect(plain == #"{"structuredQuery": {"from": [{"collectionId": "books"}], "limit": 10, "orderBy": [{"direction": "ASCENDING", "field": {"fieldPath": "__name__"}}], "select": {"fields": [{"fieldPath": "__name__"}]}, "startAt": {"before": false, "values": [{"referenceValue": "n"}]}}}"#)
    }

    @Test(arguments: [
        ("updatedAt", "updatedAt"), ("_x9", "_x9"), ("9lives", "`9lives`"), ("updated-at", "`updated-at`"),
        ("a.b", "`a.b`"), ("back`tick", "`back\\`tick`"), ("back\\slash", "`back\\\\slash`"), ("ünï", "`ünï`"),
    ])
    func fieldPathsAreQuotedUnlessSimple(name: String, path: String) {
        #expect(FieldPathSyntax.quoted(name) == path)
    }

    @Test func everyCreateAndUpdateSetsTheChangeFieldToTheServerTime() throws {
        let record = CanonicalRecord(id: Self.id("dune"), fields: ["id": .string("dune"), "title": .string("Dune"), "author": .string("H"), "genre": .string("sf")], leadingKeys: [])
        let stamped = Self.remote(changeField: "updated-at")
        let transform = #""updateTransforms": [{"fieldPath": "`updated-at`", "setToServerValue": "REQUEST_TIME"}]"#
        for write in [RemoteWrite.create(record), .update(record, baseRevision: "r1")] {
            #expect(CanonicalJSON.encodeInline(stamped.encode(write)).contains(transform))
            #expect(!CanonicalJSON.encodeInline(Self.remote(changeField: nil).encode(write)).contains("updateTransforms"))
        }
        #expect(!CanonicalJSON.encodeInline(stamped.encode(.delete(Self.id("dune"), baseRevision: "r1"))).contains("updateTransforms"))
    }

    /// A server that answers `:runQuery` in pages of two, continuing where
    /// each request's cursor says, and `:runAggregationQuery` with a count.
    @Test func changesArePagedByTheCursorAndCountedAlongside() async throws {
        let root = "projects/p/databases/(default)/documents/books/"
        // Five changed documents, two with the same change time (ordered by name).
        let changed: [(String, String)] = [("e", "2026-12-01T10:00:01Z"), ("a", "2026-12-01T10:00:02Z"), ("c", "2026-12-01T10:00:02Z"),
                                           ("b", "2026-12-01T10:00:03Z"), ("d", "2026-12-01T10:00:04Z")]
        let bodies = Mutex<[String]>([])
        let countsAsked = Mutex(0)
        let transport: HTTPTransport = { request async throws(TransportError) -> HTTPResponse in
            if request.url.hasSuffix(":runAggregationQuery") {
                countsAsked.withLock { $0 += 1 }
                return HTTPResponse(status: 200, body: Array(#"[{"result": {"aggregateFields": {"n": {"integerValue": "42"}}}, "readTime": "2026-12-01T10:00:09Z"}]"#.utf8))
            }
            let body = String(decoding: request.body ?? [], as: UTF8.self)
            bodies.withLock { $0.append(body) }
            var start = 0
            if let range = body.range(of: #"{"referenceValue": ""#) {
                let name = body[range.upperBound...].prefix { $0 != "\"" }
                start = changed.firstIndex { root + $0.0 == name }! + 1
            }
            let page = changed[start..<min(start + 2, changed.count)].map { name, time in
                #"{"document": {"name": "\#(root + name)", "fields": {"id": {"stringValue": "\#(name)"}, "title": {"stringValue": "T"}, "author": {"stringValue": "A"}, "genre": {"stringValue": "g"}, "updatedAt": {"timestampValue": "\#(time)"}}, "updateTime": "r-\#(name)"}, "readTime": "2026-12-01T10:00:0\#(start)Z"}"#
            }
            return HTTPResponse(status: 200, body: Array(("[" + (page.isEmpty ? [#"{"readTime": "2026-12-01T10:00:09Z"}"#] : page).joined(separator: ", ") + "]").utf8))
        }
        var remote = Self.remote(changeField: "updatedAt", transport: transport)
        remote.firstQueryBatch = 2
        remote.queryBatch = 2
        let changes = try #require(try await remote.changes(since: Self.mark, counting: true) { _ in })
        #expect(changes.count == 42)
        #expect(changes.readTime == "2026-12-01T10:00:00Z", "the first answer's read time")
        #expect(changes.documents.keys.map(\.rawValue).sorted() == ["a", "b", "c", "d", "e"])
        #expect(changes.documents[Self.id("c")]?.changeTime == "2026-12-01T10:00:02Z")
        #expect(changes.documents[Self.id("c")]?.record?.fields["updatedAt"] == nil, "the change field is not part of the record")
        let sent = bodies.withLock { $0 }
        #expect(sent.count == 3)
        #expect(sent[1].contains(#""values": [{"timestampValue": "2026-12-01T10:00:02Z"}, {"referenceValue": "\#(root)a"}]"#), "\(sent[1])")
        // A mark for another field is not this remote's: no query.
        #expect(try await remote.changes(since: ChangeMark(field: "modified", time: Self.mark.time), counting: true) { _ in } == nil)
        #expect(try await Self.remote(changeField: nil).changes(since: Self.mark, counting: true) { _ in } == nil)
        // A live sync's poll between counts: the same query, no count asked.
        let uncounted = try #require(try await remote.changes(since: Self.mark, counting: false) { _ in })
        #expect(uncounted.count == nil)
        #expect(uncounted.documents.count == 5)
        #expect(bodies.withLock { $0 }.count == 6, "three more query pages")
        #expect(countsAsked.withLock { $0 } == 1, "only the counting call counted")
    }

    /// The mark a pull records: (listed id → revision and change time, the
    /// base after the pull, expected mark).
    @Test func aPullRecordsAMarkThatKeepsUnrecordedDocumentsAfterIt() throws {
        let readTime = "2026-12-01T10:00:00Z"
        func document(_ id: String, _ revision: String, _ changeTime: String?) -> RemoteDocument {
            RemoteDocument(id: Self.id(id), revision: revision, content: .invalid([]), changeTime: changeTime)
        }
        func base(_ entries: [String: String]) -> Manifest {
            Manifest(entries: Dictionary(uniqueKeysWithValues: entries.map { (Self.id($0.key), BaseEntry(hash: "sha256:x", revision: $0.value)) }))
        }
        let listing = RemoteListing(revisions: [Self.id("a"): "r1", Self.id("b"): "r2"], readTime: readTime)
        let bodies = [Self.id("b"): document("b", "r2", "2026-12-01T08:00:00Z")]
        let snapshot = RemoteSnapshot(listing: listing, bodies: bodies)
        // Everything recorded: a minute before the read.
        #expect(snapshot.nextChangeMark(field: "updatedAt", base: base(["a": "r1", "b": "r2"]))?.time.rfc3339 == "2026-12-01T09:59:00.000000Z")
        // b left unrecorded (a conflict): the mark stays before its change time.
        #expect(snapshot.nextChangeMark(field: "updatedAt", base: base(["a": "r1", "b": "r0"]))?.time.rfc3339 == "2026-12-01T08:00:00.000000Z")
        // b is not in the base at all (invalid remotely): the same.
        #expect(snapshot.nextChangeMark(field: "updatedAt", base: base(["a": "r1"]))?.time.rfc3339 == "2026-12-01T08:00:00.000000Z")
        // a unrecorded without a body: no query finds it again, so no mark.
        #expect(snapshot.nextChangeMark(field: "updatedAt", base: base(["a": "r0", "b": "r2"])) == nil)
        // The base keeps a record the remote no longer has: only a full listing sees that.
        #expect(snapshot.nextChangeMark(field: "updatedAt", base: base(["a": "r1", "b": "r2", "c": "r3"])) == nil)
        // A remote name that cannot be a record: the same.
        var unusable = snapshot
        unusable.listing.unusable = [UnusableRemoteDocument(name: "..", message: "dots")]
        #expect(unusable.nextChangeMark(field: "updatedAt", base: base(["a": "r1", "b": "r2"])) == nil)
    }
}
