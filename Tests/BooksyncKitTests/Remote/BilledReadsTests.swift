import Synchronization
import Testing
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The billed-reads estimate (`FirestoreUsage`) through the HTTP seam: a
/// listing of several pages, a batchGet with found and missing documents, a
/// retried request and a count aggregation add up to the exact total, also
/// when requests run in parallel.
@Suite struct BilledReadsTests {
    static let target = FirestoreTarget(project: "rec", collectionPath: "books")
    static let root = "projects/rec/databases/(default)/documents"
    static let base = "http://127.0.0.1:9/v1/"

    static func remote(_ transport: @escaping HTTPTransport) -> FirestoreRemote {
        let endpoint = FirestoreEndpoint(baseURL: base, isEmulator: true, tokens: AccessTokens(source: .fixed("secret-token-123")))
        let retry = RetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), sleep: { _ in }, random: { 0.5 })
        return FirestoreRemote(target: target, endpoint: endpoint, rules: CollectionConfig(remote: target).rules, transport: transport, retry: retry)
    }

    /// A `:runQuery` answer listing `ids` (names and revisions), with the readTime-only entry an empty answer has.
    static func page(_ ids: [String]) -> [UInt8] {
        let entries = ids.map { #"{"document": {"name": "\#(root)/books/\#($0)", "updateTime": "2024-01-01T00:00:00.000000Z"}, "readTime": "2024-01-01T00:00:00Z"}"# }
        return Array(("[" + (entries.isEmpty ? [#"{"readTime": "2024-01-01T00:00:00Z"}"#] : entries).joined(separator: ",") + "]").utf8)
    }

    /// A `:batchGet` answer entry: the document, or `missing`.
    static func batchEntry(_ name: String, found: Bool) -> String {
        found
            ? #"{"found": {"name": "\#(name)", "fields": {"title": {"stringValue": "t"}}, "updateTime": "2024-01-01T00:00:00.000000Z"}, "readTime": "2024-01-01T00:00:00Z"}"#
            : #"{"missing": "\#(name)", "readTime": "2024-01-01T00:00:00Z"}"#
    }

    /// Listing pages of 2, 2 and 0 documents (4 documents, 5 reads: the empty
    /// query costs one), a batchGet of 4 found and 2 missing after one 503
    /// (6 reads, the 503 costs none) and a count of 1,500 (2 reads): 13.
    @Test func listingBatchGetAndCountAddUp() async throws {
        let ids = ["a", "b", "c", "d", "e", "f"]
        let batchGet = "[" + ids.enumerated().map { Self.batchEntry("\(Self.root)/books/\($1)", found: $0 < 4) }.joined(separator: ",") + "]"
        let script = ScriptedTransport([
            .response(200, Self.page(["a", "b"])), .response(200, Self.page(["c", "d"])), .response(200, Self.page([])),
            .response(503, errorBody(503, "UNAVAILABLE")), .response(200, Array(batchGet.utf8)),
            .response(200, Array(#"[{"result": {"aggregateFields": {"count": {"integerValue": "1500"}}}, "readTime": "2024-01-01T00:00:00Z"}]"#.utf8)),
        ])
        var remote = Self.remote(script.transport)
        remote.namesQueryBatch = 2
        let listing = try await remote.listRevisions(progress: { _ in })
        #expect(listing.revisions.count == 4)
        #expect(remote.usage.totals == FirestoreUsage.Totals(requests: 3, documents: 4, billedReads: 5))

        let fetched = try await remote.fetch(ids.map { try! RecordID($0) }, progress: { _ in })
        #expect(fetched.count == 4)
        #expect(remote.usage.totals == FirestoreUsage.Totals(requests: 5, documents: 8, billedReads: 11))

        let count = Array(#"{"structuredAggregationQuery": {"aggregations": [{"alias": "count", "count": {}}], "structuredQuery": {"from": [{"collectionId": "books"}]}}}"#.utf8)
        _ = try await remote.client.send(HTTPRequest(method: "POST", url: Self.base + Self.root + ":runAggregationQuery", body: count), during: "count books")
        #expect(remote.usage.totals == FirestoreUsage.Totals(requests: 6, documents: 8, billedReads: 13))
        #expect(script.remaining == 0)
    }

    /// Each answer on its own, by Firestore's rules (table).
    @Test(arguments: [
        ("POST", root + ":runQuery", #"[{"readTime": "x"}]"#, 0, 1),
        ("POST", root + ":runQuery", #"[{"document": {}}, {"document": {}}]"#, 2, 2),
        ("POST", root + ":batchGet", #"[{"found": {}}, {"missing": "n"}, {"missing": "m"}]"#, 1, 3),
        ("POST", root + ":runAggregationQuery", #"[{"result": {"aggregateFields": {"n": {"integerValue": "0"}}}}]"#, 0, 1),
        ("POST", root + ":runAggregationQuery", #"[{"result": {"aggregateFields": {"n": {"integerValue": "1000"}}}}]"#, 0, 1),
        ("POST", root + ":runAggregationQuery", #"[{"result": {"aggregateFields": {"n": {"integerValue": "1001"}}}}]"#, 0, 2),
        ("GET", root + "/books?pageSize=300&mask.fieldPaths=__name__", #"{"documents": [{}, {}, {}]}"#, 3, 3),
        ("GET", root + "/books?pageSize=300", #"{}"#, 0, 1),
        ("GET", root + "/books/b1", #"{"name": "n"}"#, 1, 1),
        ("GET", root + "/users/u1/books", #"{"documents": [{}]}"#, 1, 1),
        ("POST", root + ":commit", #"{"writeResults": [{}]}"#, 0, 0),
        ("POST", root + ":batchWrite", #"{"writeResults": [{}]}"#, 0, 0),
    ])
    func costOfOneAnswer(method: String, path: String, answer: String, documents: Int, billed: Int) throws {
        let cost = FirestoreUsage.cost(method: method, url: Self.base + path, answer: try JSONParser.parse(Array(answer.utf8), decodeTags: false))
        #expect(cost.documents == documents)
        #expect(cost.billedReads == billed)
    }

    /// 1,000 ids fetched by 5 batchGets, up to 4 in flight, one of them
    /// retried after a 503; every tenth document is missing: 900 documents,
    /// 1,000 billed reads, 6 requests.
    @Test func parallelAndRetriedBatchGetsAreCountedOnce() async throws {
        let failedOnce = Mutex(false)
        let transport: HTTPTransport = { (request: HTTPRequest) async throws(TransportError) -> HTTPResponse in
            if failedOnce.withLock({ let first = !$0; $0 = true; return first }) {
                return HTTPResponse(status: 503, body: errorBody(503, "UNAVAILABLE"))
            }
            guard case .map(let body)? = try? JSONParser.parse(request.body ?? [], decodeTags: false),
                  case .array(let names)? = body["documents"] else { return HTTPResponse(status: 400, body: []) }
            let entries = names.compactMap { name -> String? in
                guard case .string(let name) = name, let number = Int(name.suffix(4)) else { return nil }
                return Self.batchEntry(name, found: number % 10 != 0)
            }
            return HTTPResponse(status: 200, body: Array(("[" + entries.joined(separator: ",") + "]").utf8))
        }
        let remote = Self.remote(transport)
        let ids = (0..<1000).map { try! RecordID("b" + String(String($0 + 10000).dropFirst())) }
        let fetched = try await remote.fetch(ids, progress: { _ in })
        #expect(fetched.count == 900)
        #expect(remote.usage.totals == FirestoreUsage.Totals(requests: 6, documents: 900, billedReads: 1000))
    }
}
