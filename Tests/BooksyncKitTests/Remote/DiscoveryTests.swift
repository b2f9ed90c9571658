import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Discovery over the wire (<doc:WholeProject>): root collections by paged
/// `listCollectionIds`, everything below a collection by one kindless
/// names-only query, with answers recorded from the emulator.
@Suite struct DiscoveryTests {
    static let root = "projects/p/databases/(default)/documents"

    static func remote(_ script: ScriptedTransport, batch: Int? = nil) -> FirestoreRemote {
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("test-token-0123456789")))
        let retry = RetryPolicy(maximumAttempts: 1, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), sleep: { _ in }, random: { 0.5 })
        let target = FirestoreTarget(project: "p", collectionPath: "_")
        var remote = FirestoreRemote(target: target, endpoint: endpoint, rules: CollectionConfig(remote: target, schema: .idOnly).rules,
                                     transport: script.transport, retry: retry)
        if let batch { remote.namesQueryBatch = batch }
        return remote
    }

    static func names(_ names: [String]) -> ScriptedTransport.Answer {
        SubcollectionQueryTests.answer(names.map { $0 })
    }

    /// Root collections are listed several at once, in their order; the
    /// first failure cancels the listings under way instead of waiting for
    /// them (each could page through a whole collection, billed). No clock
    /// is asserted (a loaded machine may delay any task): the other two
    /// requests wait for cancellation, or give up after ten minutes, and
    /// must have been cancelled.
    @Test(.timeLimit(.minutes(20))) func aFailedListingCancelsTheOthers() async throws {
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("test-token-0123456789")))
        let retry = RetryPolicy(maximumAttempts: 1, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20),
                                requestTimeout: .seconds(900), totalDeadline: .seconds(900), sleep: { _ in }, random: { 0.5 })
        let target = FirestoreTarget(project: "p", collectionPath: "_")
        let waits = Mutex<[String]>([])
        let waiting = Mutex(0)
        let transport: HTTPTransport = { request throws(TransportError) in
            let body = String(decoding: request.body ?? [], as: UTF8.self)
            if body.contains("/documents/broken") {
                // Fails once the other two are waiting, so that there is something to cancel.
                for _ in 0..<60_000 {
                    if waiting.withLock({ $0 }) >= 2 { break }
                    try? await Task.sleep(for: .milliseconds(10))
                }
                return HTTPResponse(status: 403, body: Array(#"{"error": {"code": 403, "message": "no", "status": "PERMISSION_DENIED"}}"#.utf8))
            }
            waiting.withLock { $0 += 1 }
            do {
                try await Task.sleep(for: .seconds(600))
            } catch {
                waits.withLock { $0.append("cancelled") }
                throw TransportError(.cancelled, "cancelled")
            }
            waits.withLock { $0.append("not cancelled") }
            return HTTPResponse(status: 200, body: Array("[]".utf8))
        }
        let remote = FirestoreRemote(target: target, endpoint: endpoint, rules: CollectionConfig(remote: target, schema: .idOnly).rules,
                                     transport: transport, retry: retry)
        await #expect { _ = try await remote.discover(["slow1", "broken", "slow2"]) } throws: { error in
            (error as? RemoteError)?.description.contains("PERMISSION_DENIED") == true
        }
        #expect(waits.withLock { $0 } == ["cancelled", "cancelled"])
    }

    @Test func rootCollectionsArePagedByTheirToken() async throws {
        // As the emulator answered for pageSize 2 (`a b`, `books`, then `café`, `users`).
        let script = ScriptedTransport([
            .response(200, Array(#"{"collectionIds": ["a b", "books"], "nextPageToken": "CgVib29rcxIIfK97nqEetAk="}"#.utf8)),
            .response(200, Array(#"{"collectionIds": ["café", "users"]}"#.utf8)),
        ])
        let remote = Self.remote(script)
        #expect(try await remote.listCollectionIDs() == ["a b", "books", "café", "users"])
        let requests = script.requests.withLock { $0 }
        #expect(requests.map(\.url) == Array(repeating: "http://127.0.0.1:9/v1/projects/p/databases/(default)/documents:listCollectionIds", count: 2))
        #expect(String(decoding: requests[1].body ?? [], as: UTF8.self) == #"{"pageSize": 300, "pageToken": "CgVib29rcxIIfK97nqEetAk="}"#)
        // One billed read per page, whatever it lists.
        #expect(remote.usage.totals == FirestoreUsage.Totals(requests: 2, documents: 0, billedReads: 2))
    }

    @Test func belowADocumentTheURLNamesIt() async throws {
        let script = ScriptedTransport([.response(200, Array(#"{"collectionIds": ["notes"]}"#.utf8))])
        #expect(try await Self.remote(script).listCollectionIDs(below: "books/missing") == ["notes"])
        #expect(script.requests.withLock { $0[0].url }.hasSuffix("/documents/books/missing:listCollectionIds"))
    }

    @Test func oneKindlessQueryFindsEveryPathEvenBelowMissingDocuments() async throws {
        // The emulator's answer for books: b1 and b2 exist, `missing` does not, nor does notes/x.
        let script = ScriptedTransport([Self.names([
            "books/b1", "books/b1/reviews/r1", "books/b1/reviews/r1/likes/l1", "books/b2",
            "books/b2/notes/x/reviews/r9", "books/missing/notes/n1",
        ])])
        let remote = Self.remote(script)
        let found = try await remote.discover("books")
        #expect(found == DiscoveredCollection(path: "books", documents: 2, subcollections: ["reviews": 1, "reviews/likes": 1, "notes/reviews": 1, "notes": 1]))
        #expect(found.total == 6)
        #expect(found.configurable.paths == ["notes", "notes/reviews", "reviews", "reviews/likes"])
        let request = script.requests.withLock { $0[0] }
        #expect(request.url.hasSuffix("/documents:runQuery"))
        let body = String(decoding: request.body ?? [], as: UTF8.self)
        #expect(body.contains(#""from": [{"allDescendants": true}]"#), "\(body)")
        #expect(body.contains(#""select": {"fields": [{"fieldPath": "__name__"}]}"#), "\(body)")
        #expect(body.contains(#""referenceValue": "projects/p/databases/(default)/documents/books/\u0000""#), "\(body)")
        #expect(remote.usage.totals.billedReads == 6)
    }

    @Test func pagesFollowTheLastNameAndTheCostIsPredicted() async throws {
        let script = ScriptedTransport([Self.names(["books/a", "books/b"]), Self.names(["books/c", "books/c/x/d"]), Self.names([])])
        let remote = Self.remote(script, batch: 2)
        let found = try await remote.discover("books")
        #expect(found.documents == 3 && found.subcollections == ["x": 1])
        let bodies = script.requests.withLock { $0 }.map { String(decoding: $0.body ?? [], as: UTF8.self) }
        #expect(bodies.count == 3)
        #expect(bodies[1].contains(#""startAt": {"before": false, "values": [{"referenceValue": "projects/p/databases/(default)/documents/books/b"}]}"#), "\(bodies[1])")
        // 4 names in pages of 2: a last, empty page, billed one read.
        #expect(remote.usage.totals.billedReads == 5)
        #expect(remote.discoveryCost(documents: 4) == (3, 5))
        #expect(remote.discoveryCost(documents: 3) == (2, 3))
        #expect(remote.discoveryCost(documents: 0) == (1, 1))
    }

    @Test func aNameOutsideTheCollectionIsAMalformedAnswer() async throws {
        let script = ScriptedTransport([Self.names(["books/b1", "bookshelf/x"])])
        await #expect(throws: RemoteError.self) { try await Self.remote(script).discover("books") }
        let even = ScriptedTransport([Self.names(["books/b1/reviews"])])
        await #expect(throws: RemoteError.self) { try await Self.remote(even).discover("books") }
    }

    @Test func pathsBooksyncCannotSyncAreSetApart() {
        var tree = DiscoveredCollection(path: "books")
        for name in ["b1/a:b/c", "b1/ok/c", "b1/caf\u{E9}/x", "b1/100%/y"] {
            let added = tree.add(relativePath: Substring(name))
            #expect(added)
        }
        #expect(tree.configurable.paths == ["100%", "caf\u{E9}", "ok"])
        #expect(tree.configurable.refused.map(\.path) == ["a:b"])
    }

    @Test func theCapCountsDistinctCollectionIdsNotPaths() throws {
        // 500 paths ending in 5 ids: accepted, and listed by 5 group queries.
        let paths = (0..<100).flatMap { n in ["a\(n)/reviews", "a\(n)/likes", "a\(n)/notes", "a\(n)/tags", "a\(n)/x"] }
        let many = try Subcollections.parse(paths: paths, requirements: [])
        #expect(many.entries.count == 500)
        #expect(Set(many.groupIDs) == ["reviews", "likes", "notes", "tags", "x"])
        #expect(many.entry(forPath: "a7/notes") != nil && many.entry(forPath: "a7") == nil)
        #expect(many.collectionIDs(after: ["a7"]).sorted() == ["likes", "notes", "reviews", "tags", "x"])
        #expect(throws: RequirementSyntaxError.self) { try Subcollections.parse(paths: (0...100).map { "s\($0)" }, requirements: []) }
    }
}
