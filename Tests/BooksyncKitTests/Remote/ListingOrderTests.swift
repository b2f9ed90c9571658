import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// A listing that never ends is a malformed answer, named, after a bounded
/// number of requests: names must increase (by path segment, as Firestore
/// orders them), page tokens must not repeat, and empty pages are bounded.
@Suite struct ListingOrderTests {
    static let root = "projects/rec/databases/(default)/documents/books/"

    /// Names in the order a listing may send them, and whether it may.
    @Test(arguments: [
        (["a", "b", "c"], true),
        (["a", "a-b"], true),
        // By segment: `a/…` comes before `a-b/…` though '/' sorts after '-' as a byte.
        (["a/reviews/r1", "a-b/reviews/r1"], true),
        (["a/reviews/r1", "a/reviews/r2", "b/reviews/r1"], true),
        (["Z", "a", "é", "\u{10FFFF}"], true),
        // Numeric ids (legacy `__id<n>__`) come first, by number, as the emulator lists them.
        (["__id9__", "__id10__", "__id-3__x", "a"], true),
        (["__id-5__", "__id9__", "__id10__", "Z"], true),
        (["__id10__", "__id9__"], false),
        (["a", "__id1__"], false),
        (["a", "a"], false),
        (["b", "a"], false),
        (["a", "b", "a", "b"], false),
        (["a-b/reviews/r1", "a/reviews/r1"], false),
    ])
    func namesMustIncrease(names: [String], accepted: Bool) {
        var order = ListingOrder()
        let all = Result { () throws(RemoteError) in
            for name in names { try order.accept(Self.root + name, during: "list books") }
        }
        #expect((try? all.get()) != nil ? accepted : !accepted, "\(names)")
    }

    /// A change query is ordered by its change time first.
    @Test func aChangeQueryIsOrderedByTimeThenName() throws {
        var order = ListingOrder()
        try order.accept(Self.root + "z", changeTime: "2026-01-01T00:00:00Z", during: "q")
        try order.accept(Self.root + "a", changeTime: "2026-01-01T00:00:00.5Z", during: "q")
        try order.accept(Self.root + "b", changeTime: "2026-01-01T00:00:00.500000Z", during: "q")
        #expect(throws: RemoteError.self) { try order.accept(Self.root + "c", changeTime: "2026-01-01T00:00:00Z", during: "q") }
    }

    @Test func aRepeatedPageTokenOrEndlessEmptyPagesAreRefused() throws {
        var order = ListingOrder()
        try order.accept(pageToken: "t1", documents: 3, during: "list")
        try order.accept(pageToken: "t2", documents: 3, during: "list")
        #expect(throws: RemoteError.self) { try order.accept(pageToken: "t1", documents: 3, during: "list") }
        var empty = ListingOrder()
        #expect(throws: RemoteError.self) {
            for page in 0...ListingOrder.maximumEmptyPages { try empty.accept(pageToken: "e\(page)", documents: 0, during: "list") }
        }
        var ending = ListingOrder()
        try ending.accept(pageToken: nil, documents: 0, during: "list")
    }

    static func runQueryPage(_ ids: [String]) -> [UInt8] {
        Array(("[" + ids.map { #"{"document": {"name": "\#(root)\#($0)", "updateTime": "2026-11-29T14:38:54.974642Z"}, "readTime": "2026-11-29T14:38:54.983414Z"}"# }
            .joined(separator: ",") + "]").utf8)
    }

    /// Listing through `remote` ends in a malformed answer whose detail says `detail`.
    static func expectMalformedListing(_ remote: FirestoreRemote, saying detail: String) async {
        await #expect {
            _ = try await remote.listRevisions { _ in }
        } throws: { error in
            guard case .malformedResponse(_, let said)? = error as? RemoteError else { return false }
            return said.contains(detail)
        }
    }

    /// A server whose `:runQuery` pages alternate between two sets of names
    /// kept booksync asking forever; now the third page is refused.
    @Test func alternatingQueryPagesAreAMalformedAnswer() async throws {
        let pages = (0..<50).map { Self.runQueryPage($0 % 2 == 0 ? ["a", "b"] : ["c", "d"]) }
        let script = ScriptedTransport(pages.map { .response(200, $0) })
        var remote = FirestoreRemoteTests().remote(script)
        remote.namesQueryBatch = 2
        await Self.expectMalformedListing(remote, saying: "names must increase")
        #expect(script.requests.withLock { $0.count } == 3)
    }

    /// `documents.list` (the fallback without `:runQuery`) whose next page
    /// token never ends: refused once a token comes back.
    @Test func anEndlessPageTokenIsAMalformedAnswer() async throws {
        let refused = ScriptedTransport.Answer.response(404, errorBody(404, "NOT_FOUND"))
        let pages = (0..<50).map { index -> ScriptedTransport.Answer in
            .response(200, Array(#"{"documents": [{"name": "\#(Self.root)d\#(index)", "updateTime": "2026-11-29T14:38:54.974642Z"}], "nextPageToken": "t\#(index % 3)"}"#.utf8))
        }
        let script = ScriptedTransport([refused] + pages)
        let remote = FirestoreRemoteTests().remote(script)
        await Self.expectMalformedListing(remote, saying: "page token came back")
        #expect(script.requests.withLock { $0.count } == 5)
    }
}
