import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The wire side of subcollection listing (<doc:Firestore>): one collection-group
/// query per configured subcollection id, scoped to the collection by a
/// `__name__` range, and its answers filtered to the configured paths.
@Suite struct SubcollectionQueryTests {
    static let target = FirestoreTarget(project: "p", collectionPath: "users/u1/books")
    static let root = "projects/p/databases/(default)/documents"

    static func remote(_ script: ScriptedTransport, subcollections: [String] = ["reviews", "reviews/likes", "notes/likes"]) throws -> FirestoreRemote {
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("test-token-0123456789")))
        let retry = RetryPolicy(maximumAttempts: 1, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), sleep: { _ in }, random: { 0.5 })
        let config = CollectionConfig(remote: target, schema: RecordSchema(requiredFields: []),
                                      subcollections: try Subcollections.parse(paths: subcollections, requirements: []))
        return FirestoreRemote(target: target, endpoint: endpoint, rules: config.rules, transport: script.transport, retry: retry)
    }

    static func answer(_ names: [String]) -> ScriptedTransport.Answer {
        let documents = names.map { #"{"document": {"name": "\#(root)/\#($0)", "updateTime": "2026-01-01T00:00:00.000001Z"}, "readTime": "2026-01-01T00:00:01Z"}"# }
        return .response(200, Array(("[" + (documents.isEmpty ? [#"{"readTime": "2026-01-01T00:00:01Z"}"#] : documents).joined(separator: ",") + "]").utf8))
    }

    @Test func theGroupQueryIsScopedToTheCollectionByName() {
        let range = FirestoreRemote.NameRange(lower: Self.root + "/users/u1/books/\u{0}", upper: Self.root + "/users/u1/books/\u{10FFFF}")
        let body = String(decoding: FirestoreRemote.listQuery("reviews", after: nil, limit: 10, withBodies: false, group: true, range: range), as: UTF8.self)
        #expect(body.contains(#""from": [{"allDescendants": true, "collectionId": "reviews"}]"#), "\(body)")
        #expect(body.contains(#""where": {"compositeFilter": {"filters": [{"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "GREATER_THAN_OR_EQUAL", "value": {"referenceValue": "projects/p/databases/(default)/documents/users/u1/books/\u0000"}}}, {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "LESS_THAN_OR_EQUAL", "value": {"referenceValue": "projects/p/databases/(default)/documents/users/u1/books/\#u{10FFFF}"}}}], "op": "AND"}}"#), "\(body)")
        // With a change mark, the three conditions go together, ordered by change time then name.
        let mark = ChangeMark(field: "updatedAt", time: try! Timestamp(rfc3339: "2026-12-01T09:59:00Z"))
        let changes = String(decoding: FirestoreRemote.listQuery("reviews", after: nil, limit: 10, withBodies: true, changedSince: mark, group: true, range: range), as: UTF8.self)
        #expect(changes.contains(#""op": "GREATER_THAN_OR_EQUAL", "value": {"timestampValue": "2026-12-01T09:59:00.000000Z"}}}], "op": "AND"}"#), "\(changes)")
    }

    @Test func listingQueriesTheCollectionThenEachGroupOnceAndKeepsOnlyConfiguredPaths() async throws {
        let script = ScriptedTransport([
            Self.answer(["users/u1/books/dune", "users/u1/books/emma"]),
            // Groups in the order of the sorted paths: likes (of notes/likes), then reviews.
            // Each in name order, as Firestore sends them (`ListingOrder`).
            Self.answer(["users/u1/books/dune/notes/n1/likes/l2", "users/u1/books/dune/other/o/likes/l3", "users/u1/books/dune/reviews/r1/likes/l1"]),
            Self.answer(["users/u1/books/dune/notes/n1/reviews/x", "users/u1/books/dune/reviews/r1", "users/u1/books/ghost/reviews/r2"]),
        ])
        let listing = try await Self.remote(script).listRevisions(progress: { _ in })
        #expect(listing.revisions.keys.map(\.rawValue).sorted() == [
            "dune", "dune/notes/n1/likes/l2", "dune/reviews/r1", "dune/reviews/r1/likes/l1", "emma", "ghost/reviews/r2",
        ])
        #expect(listing.unusable.isEmpty)
        let requests = script.requests.withLock { $0 }
        #expect(requests.count == 3)
        #expect(requests[0].url.hasSuffix("/documents/users/u1:runQuery"), "\(requests[0].url)")
        #expect(requests.dropFirst().allSatisfy { $0.url.hasSuffix("/documents:runQuery") })
        let groups = requests.dropFirst().map { String(decoding: $0.body ?? [], as: UTF8.self) }
        #expect(groups[0].contains(#""collectionId": "likes""#) && groups[1].contains(#""collectionId": "reviews""#))
    }

    @Test func withoutSubcollectionsOneQueryAndNoGroup() async throws {
        let script = ScriptedTransport([Self.answer(["users/u1/books/dune"])])
        let listing = try await Self.remote(script, subcollections: []).listRevisions(progress: { _ in })
        #expect(listing.revisions.keys.map(\.rawValue) == ["dune"])
        #expect(script.requests.withLock { $0.count } == 1)
    }
}
