import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The queries of a scoped collection (config `"scope"`) through the HTTP
/// seam: what is asked, how a page continues, and the composite-index
/// error production Firestore answers with, link whole.
@Suite struct ScopedQueryTests {
    static let target = FirestoreTarget(project: "p", collectionPath: "books")

    static func remote(_ scope: String, changeField: String? = nil, transport: @escaping HTTPTransport) throws -> FirestoreRemote {
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("secret-token-123")))
        let retry = RetryPolicy(maximumAttempts: 1, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), sleep: { _ in }, random: { 0.5 })
        var config = CollectionConfig(remote: target, schema: .idOnly, changeField: changeField)
        config.scope = try ScopeExpression.parse(scope)
        return FirestoreRemote(target: target, endpoint: endpoint, rules: config.rules, transport: transport, retry: retry)
    }

    /// Ordered by the inequality fields (sorted) before the name, the names-only
    /// select carries them, and the next page starts after the last document's values.
    @Test func aPageContinuesAfterTheScopeFieldsOfItsLastDocument() throws {
        let scope = try ScopeExpression.parse(#"rating >= 4 and genre != "x" and tags array-contains "a""#)
        let cursor = FirestoreRemote.QueryCursor(name: "projects/p/databases/(default)/documents/books/b7", changeTime: nil,
                                                 orderValues: [.map(["stringValue": .string("sf")]), .map(["integerValue": .string("5")])])
        let body = String(decoding: FirestoreRemote.listQuery("books", after: cursor, limit: 2, withBodies: false, filter: scope,
                                                              documentsRoot: "projects/p/databases/(default)/documents"), as: UTF8.self)
        #expect(body.contains(#""orderBy": [{"direction": "ASCENDING", "field": {"fieldPath": "genre"}}, {"direction": "ASCENDING", "field": {"fieldPath": "rating"}}, {"direction": "ASCENDING", "field": {"fieldPath": "__name__"}}]"#), "\(body)")
        #expect(body.contains(#""select": {"fields": [{"fieldPath": "__name__"}, {"fieldPath": "genre"}, {"fieldPath": "rating"}]}"#), "\(body)")
        #expect(body.contains(#""startAt": {"before": false, "values": [{"stringValue": "sf"}, {"integerValue": "5"}, {"referenceValue": "projects/p/databases/(default)/documents/books/b7"}]}"#), "\(body)")
        #expect(body.contains(#""op": "ARRAY_CONTAINS""#) && body.contains(#""op": "NOT_EQUAL""#))
    }

    /// Inequalities on a map and on a key inside it order by both, but the
    /// names-only select asks for the map alone, which holds the key; the
    /// cursor still takes both values from it. (A top-level field named
    /// `stats.rating`, backticked, is another field and is selected.)
    @Test func aPathInsideAnotherIsNotSelectedBesideIt() async throws {
        let scope = try ScopeExpression.parse(#"stats.rating > 1 and stats != {"x": 1} and `stats.rating` < 9"#)
        let body = String(decoding: FirestoreRemote.listQuery("books", after: nil, limit: 2, withBodies: false, filter: scope), as: UTF8.self)
        #expect(body.contains(#""select": {"fields": [{"fieldPath": "__name__"}, {"fieldPath": "`stats.rating`"}, {"fieldPath": "stats"}]}"#), "\(body)")
        #expect(body.contains(#"{"fieldPath": "stats"}}, {"direction": "ASCENDING", "field": {"fieldPath": "stats.rating"}}"#), "\(body)")
        let root = "projects/p/databases/(default)/documents/books/"
        let page = #"[{"document": {"name": "\#(root)a", "updateTime": "2026-01-01T00:00:00Z", "fields": {"stats": {"mapValue": {"fields": {"rating": {"integerValue": "5"}}}}, "stats.rating": {"integerValue": "3"}}}, "readTime": "2026-01-01T00:00:01Z"}, {"document": {"name": "\#(root)b", "updateTime": "2026-01-01T00:00:00Z", "fields": {"stats": {"mapValue": {"fields": {"rating": {"integerValue": "6"}}}}, "stats.rating": {"integerValue": "4"}}}, "readTime": "2026-01-01T00:00:01Z"}]"#
        let bodies = Mutex<[String]>([])
        var remote = try Self.remote(scope.description) { request in
            let sent = bodies.withLock { $0.append(String(decoding: request.body ?? [], as: UTF8.self)); return $0.count }
            return HTTPResponse(status: 200, body: Array((sent == 1 ? page : "[]").utf8))
        }
        remote.namesQueryBatch = 2
        let listing = try await remote.listRevisions { _ in }
        #expect(listing.revisions.count == 2)
        let second = try #require(bodies.withLock { $0.count == 2 ? $0[1] : nil })
        #expect(second.contains(#""values": [{"integerValue": "4"}, {"mapValue": {"fields": {"rating": {"integerValue": "6"}}}}, {"integerValue": "6"}, {"referenceValue": "\#(root)b"}]"#), "\(second)")
    }

    /// With the change field, its own order comes first, then the scope's fields.
    @Test func theChangeFieldOrdersFirst() throws {
        let scope = try ScopeExpression.parse("rating > 1")
        let mark = ChangeMark(field: "updatedAt", time: try Timestamp(rfc3339: "2026-01-01T00:00:00Z"), scope: scope.description)
        let body = String(decoding: FirestoreRemote.listQuery("books", after: nil, limit: 2, withBodies: true, changedSince: mark, filter: scope),
                          as: UTF8.self)
        #expect(body.contains(#""orderBy": [{"direction": "ASCENDING", "field": {"fieldPath": "updatedAt"}}, {"direction": "ASCENDING", "field": {"fieldPath": "rating"}}, {"direction": "ASCENDING", "field": {"fieldPath": "__name__"}}]"#), "\(body)")
    }

    /// Production Firestore refuses a scope with the change field until a
    /// composite index exists, with a link that creates it: the link reaches
    /// the user whole, however long (messages are otherwise cut at 500).
    @Test func theCompositeIndexLinkIsShownWhole() async throws {
        let link = "https://console.firebase.google.com/v1/r/project/p/firestore/indexes?create_composite=" + String(repeating: "Q2xKd2NtOXFaV04wY3k5d0wyUmhkR0ZpWVhObGN5OG9aR1ZtWVhWc2RDa3ZZ", count: 10)
        let message = "The query requires an index. You can create it here: " + link
        let remote = try Self.remote("rating > 1", changeField: "updatedAt") { _ in
            HTTPResponse(status: 400, body: Array(#"{"error": {"code": 400, "message": "\#(message)", "status": "FAILED_PRECONDITION"}}"#.utf8))
        }
        do {
            _ = try await remote.listRevisions { _ in }
            Issue.record("the refusal was not reported")
        } catch {
            #expect(error.description.hasSuffix(link), "\(error.description)")
            #expect(error.description.contains("FAILED_PRECONDITION"))
        }
        // Any other long message is still cut.
        let long = String(repeating: "x", count: 900)
        let other = try Self.remote("rating > 1") { _ in
            HTTPResponse(status: 400, body: Array(#"{"error": {"code": 400, "message": "\#(long)", "status": "INVALID_ARGUMENT"}}"#.utf8))
        }
        await #expect { _ = try await other.listRevisions { _ in } } throws: { error in
            (error as? RemoteError)?.description.hasSuffix("x …") == true
        }
    }

    /// A server without `:runQuery` cannot filter by the scope: listing its
    /// pages would take every document for the scope's (and `seed --delete`
    /// would delete those outside it), so the refusal stands.
    @Test func noPagedFallbackForAScopedListing() async throws {
        let requests = Mutex(0)
        let remote = try Self.remote("rating > 1") { _ in
            requests.withLock { $0 += 1 }
            return HTTPResponse(status: 404, body: Array(#"{"error": {"code": 404, "message": "no", "status": "NOT_FOUND"}}"#.utf8))
        }
        await #expect(throws: RemoteError.self) { _ = try await remote.listRevisions { _ in } }
        #expect(requests.withLock { $0 } == 1, "no documents.list page was asked for")
    }

    /// Ordered by a scope's field, names need not increase, but an answer of
    /// names listed before is a server going round in circles: refused, not
    /// followed forever.
    @Test func anAnswerOfOldNamesEndsAScopedListing() async throws {
        let root = "projects/p/databases/(default)/documents/books/"
        let page = Array(("[" + ["a", "b"].map { #"{"document": {"name": "\#(root)\#($0)", "updateTime": "2026-01-01T00:00:00Z", "fields": {"rating": {"integerValue": "5"}}}, "readTime": "2026-01-01T00:00:01Z"}"# }.joined(separator: ", ") + "]").utf8)
        var remote = try Self.remote("rating > 1") { _ in HTTPResponse(status: 200, body: page) }
        remote.namesQueryBatch = 2
        await #expect { _ = try await remote.listRevisions { _ in } } throws: { error in
            (error as? RemoteError)?.description.contains("an answer listed only documents listed before") == true
        }
    }

    /// A document the parser refuses (a number past a double) ends a page:
    /// its scope values are unread, so the next page starts after the one
    /// before it, lists it again, and it is handed on once; nothing is skipped.
    @Test func aRefusedDocumentAtAPageEndIsListedOnceAndNothingIsSkipped() async throws {
        let root = "projects/p/databases/(default)/documents/books/"
        func entry(_ id: String, rating: Int, refused: Bool = false) -> String {
            let extra = refused ? #", "n": {"doubleValue": 1e999}"# : ""
            return #"{"document": {"name": "\#(root)\#(id)", "updateTime": "2026-01-01T00:00:00Z", "fields": {"rating": {"integerValue": "\#(rating)"}\#(extra)}}, "readTime": "2026-01-01T00:00:01Z"}"#
        }
        let answers = [[entry("a", rating: 2), entry("b", rating: 3, refused: true)],
                       [entry("b", rating: 3, refused: true), entry("c", rating: 4)],
                       [String]()]
        let bodies = Mutex<[String]>([])
        let served = Mutex(0)
        var remote = try Self.remote("rating > 1") { request in
            bodies.withLock { $0.append(String(decoding: request.body ?? [], as: UTF8.self)) }
            let index = served.withLock { value in defer { value += 1 }; return min(value, answers.count - 1) }
            return HTTPResponse(status: 200, body: Array(("[" + answers[index].joined(separator: ", ") + "]").utf8))
        }
        remote.namesQueryBatch = 2
        let listing = try await remote.listRevisions { _ in }
        #expect(listing.revisions.keys.map(\.rawValue).sorted() == ["a", "b", "c"])
        let sent = bodies.withLock { $0 }
        #expect(sent.count == 3)
        #expect(sent[1].contains(#""values": [{"integerValue": "2"}, {"referenceValue": "\#(root)a"}]"#), "\(sent[1])")
        #expect(sent[2].contains(#""values": [{"integerValue": "4"}, {"referenceValue": "\#(root)c"}]"#), "\(sent[2])")
    }

    /// The refused document again, alone on the last page, ends the listing
    /// (it is no server going round in circles); a full page of refused
    /// documents, which no cursor can continue after, is an error rather than
    /// the silent end of the listing.
    @Test(arguments: [false, true])
    func refusedDocumentsAtTheEndOfAListing(fullPageRefused: Bool) async throws {
        let root = "projects/p/databases/(default)/documents/books/"
        func entry(_ id: String, rating: Int, refused: Bool = false) -> String {
            let extra = refused ? #", "n": {"doubleValue": 1e999}"# : ""
            return #"{"document": {"name": "\#(root)\#(id)", "updateTime": "2026-01-01T00:00:00Z", "fields": {"rating": {"integerValue": "\#(rating)"}\#(extra)}}, "readTime": "2026-01-01T00:00:01Z"}"#
        }
        let answers = fullPageRefused
            ? [[entry("a", rating: 2, refused: true), entry("b", rating: 3, refused: true)], [entry("c", rating: 4)]]
            : [[entry("a", rating: 2), entry("b", rating: 3, refused: true)], [entry("b", rating: 3, refused: true)]]
        let served = Mutex(0)
        var remote = try Self.remote("rating > 1") { _ in
            let index = served.withLock { value in defer { value += 1 }; return min(value, answers.count - 1) }
            return HTTPResponse(status: 200, body: Array(("[" + answers[index].joined(separator: ", ") + "]").utf8))
        }
        remote.namesQueryBatch = 2
        do {
            let listing = try await remote.listRevisions { _ in }
            #expect(!fullPageRefused)
            #expect(listing.revisions.keys.map(\.rawValue).sorted() == ["a", "b"])
        } catch {
            #expect(fullPageRefused, "\(error)")
            #expect(error.description.contains("a full page of documents booksync cannot read"), "\(error)")
        }
    }

    /// A scoped listing reads every page at its first answer's time, so a
    /// document edited between pages cannot move back past the cursor
    /// unseen; a listing in name order, where nothing moves, reads at the present.
    @Test(arguments: [("rating > 1", true), (nil, false)])
    func laterPagesOfAScopedListingReadAtTheFirstAnswersTime(scope: String?, pinned: Bool) async throws {
        let root = "projects/p/databases/(default)/documents/books/"
        func entry(_ id: String, rating: Int, readTime: String) -> String {
            #"{"document": {"name": "\#(root)\#(id)", "updateTime": "2026-01-01T00:00:00Z", "fields": {"rating": {"integerValue": "\#(rating)"}}}, "readTime": "\#(readTime)"}"#
        }
        // Read times may grow within an answer: its documents are unchanged up to its last.
        let answers = [[entry("a", rating: 2, readTime: "2026-01-01T00:00:01.5Z"), entry("b", rating: 3, readTime: "2026-01-01T00:00:01.7Z")],
                       [entry("c", rating: 4, readTime: "2026-01-01T00:00:09Z"), entry("d", rating: 5, readTime: "2026-01-01T00:00:09Z")],
                       [#"{"readTime": "2026-01-01T00:00:10Z"}"#]]
        let bodies = Mutex<[String]>([])
        let served = Mutex(0)
        let transport: HTTPTransport = { request in
            bodies.withLock { $0.append(String(decoding: request.body ?? [], as: UTF8.self)) }
            let index = served.withLock { value in defer { value += 1 }; return min(value, answers.count - 1) }
            return HTTPResponse(status: 200, body: Array(("[" + answers[index].joined(separator: ", ") + "]").utf8))
        }
        var remote: FirestoreRemote
        if let scope {
            remote = try Self.remote(scope, transport: transport)
        } else {
            let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("t")))
            remote = FirestoreRemote(target: Self.target, endpoint: endpoint, rules: CollectionConfig(remote: Self.target, schema: .idOnly).rules,
                                     transport: transport)
        }
        remote.namesQueryBatch = 2
        let listing = try await remote.listRevisions { _ in }
        #expect(listing.revisions.keys.map(\.rawValue).sorted() == ["a", "b", "c", "d"])
        #expect(listing.readTime == "2026-01-01T00:00:01.5Z", "the first, for the change mark")
        let sent = bodies.withLock { $0 }
        #expect(sent.count == 3)
        #expect(!sent[0].contains("readTime"), "\(sent[0])")
        for body in sent.dropFirst() {
            #expect(body.contains(#""readTime": "2026-01-01T00:00:01.7Z""#) == pinned, "\(body)")
            #expect(!body.contains("00:00:09") && !body.contains("01.5Z"), "only the first answer's last time is sent: \(body)")
        }
    }

    /// A listing that has run past `pinnedReadLimit` reads at the present:
    /// documents listed before may then come again, moved forward, and a
    /// page of only those continues after them (the cursor advances); while
    /// pinned, such a page is a server going round in circles.
    @Test(arguments: [true, false])
    func pastTheLimitALaterPageReadsThePresent(expired: Bool) async throws {
        let root = "projects/p/databases/(default)/documents/books/"
        func entry(_ id: String, rating: Int) -> String {
            #"{"document": {"name": "\#(root)\#(id)", "updateTime": "2026-01-01T00:00:00Z", "fields": {"rating": {"integerValue": "\#(rating)"}}}, "readTime": "2026-01-01T00:00:01Z"}"#
        }
        let answers = [[entry("a", rating: 2), entry("b", rating: 3)], [entry("a", rating: 6), entry("b", rating: 7)], [entry("c", rating: 8)]]
        let bodies = Mutex<[String]>([])
        var remote = try Self.remote("rating > 1") { request in
            let index = bodies.withLock { $0.append(String(decoding: request.body ?? [], as: UTF8.self)); return min($0.count, answers.count) - 1 }
            return HTTPResponse(status: 200, body: Array(("[" + answers[index].joined(separator: ", ") + "]").utf8))
        }
        remote.namesQueryBatch = 2
        if expired { remote.pinnedReadLimit = .zero }
        do {
            let listing = try await remote.listRevisions { _ in }
            #expect(expired)
            #expect(listing.revisions.keys.map(\.rawValue).sorted() == ["a", "b", "c"])
            let sent = bodies.withLock { $0 }
            #expect(sent.count == 3 && !sent.contains { $0.contains("readTime") }, "\(sent)")
            #expect(sent[2].contains(#""values": [{"integerValue": "7"}, {"referenceValue": "\#(root)b"}]"#), "after the moved b: \(sent[2])")
        } catch {
            #expect(!expired, "\(error)")
            #expect(error.description.contains("an answer listed only documents listed before"), "\(error)")
        }
    }

    /// A change query with a scope is pinned too: its later pages read at the first answer's time.
    @Test func aScopedChangeQueryIsPinned() async throws {
        let root = "projects/p/databases/(default)/documents/books/"
        func entry(_ id: String, rating: Int) -> String {
            #"{"document": {"name": "\#(root)\#(id)", "updateTime": "2026-01-01T00:00:00Z", "fields": {"rating": {"integerValue": "\#(rating)"}, "updatedAt": {"timestampValue": "2026-01-01T00:00:00Z"}}}, "readTime": "2026-01-01T00:00:03Z"}"#
        }
        let answers = [[entry("a", rating: 2), entry("b", rating: 3)], [entry("c", rating: 4)]]
        let bodies = Mutex<[String]>([])
        var remote = try Self.remote("rating > 1", changeField: "updatedAt") { request in
            let index = bodies.withLock { $0.append(String(decoding: request.body ?? [], as: UTF8.self)); return min($0.count, answers.count) - 1 }
            return HTTPResponse(status: 200, body: Array(("[" + answers[index].joined(separator: ", ") + "]").utf8))
        }
        remote.queryBatch = 2
        remote.firstQueryBatch = 2
        let mark = ChangeMark(field: "updatedAt", time: try Timestamp(rfc3339: "2025-01-01T00:00:00Z"), scope: "rating > 1")
        let changes = try #require(try await remote.changes(since: mark, counting: false) { _ in })
        #expect(changes.documents.keys.map(\.rawValue).sorted() == ["a", "b", "c"])
        let sent = bodies.withLock { $0.filter { $0.contains("structuredQuery") && $0.contains("startAt") } }
        #expect(!sent.isEmpty && sent.allSatisfy { $0.contains(#""readTime": "2026-01-01T00:00:03Z""#) }, "\(sent)")
    }
}
