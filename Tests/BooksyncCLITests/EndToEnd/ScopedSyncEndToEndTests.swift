import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
import BooksyncURLSession
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// A collection scoped by a query (config `"scope"`, `--where`) against the
/// emulator: listings page through the scope's order, reads follow the
/// matching documents, and documents leave and enter the scope on either
/// side without anything deleted (<doc:WholeProject>).
@Suite struct ScopedSyncEndToEndTests {
    /// A remote whose rules carry `scope`, paging two documents at a time so
    /// every listing takes several queries continued by the scope's cursor.
    static func remote(_ scope: ScopeExpression, host: String, project: String, changeField: String? = nil,
                       transport: @escaping HTTPTransport = URLSessionTransport.make(requestTimeout: .seconds(60))) throws -> FirestoreRemote {
        let target = FirestoreTarget(project: project, collectionPath: "books")
        var config = CollectionConfig(remote: target, schema: .idOnly, idField: .none, changeField: changeField)
        config.scope = scope
        let endpoint = try FirestoreEndpoint.resolve(environment: ["FIRESTORE_EMULATOR_HOST": host], transport: nil)
        var remote = FirestoreRemote(target: target, endpoint: endpoint, rules: config.rules, transport: transport)
        remote.namesQueryBatch = 2
        remote.firstQueryBatch = 2
        remote.queryBatch = 2
        return remote
    }

    /// Every scope of the matcher's table, listed as sync lists it (names,
    /// then bodies, then the count): the emulator accepts each query and
    /// its cursors, and the pages together are exactly the matching documents.
    @Test func scopedListingsPageToExactlyTheMatchingDocuments() async throws {
        let host = try Emulator.requireHost()
        let project = Emulator.uniqueProject("scoped-listing")
        let rest = RESTClient(host: host, project: project, collection: "books")
        let documents = ScopeQueryEndToEndTests.documents
        try await rest.put(documents)
        for text in ScopeQueryEndToEndTests.scopes {
            let scope = try ScopeExpression.parse(text)
            let remote = try Self.remote(scope, host: host, project: project)
            let expected = Set(documents.filter { scope.matches($0.fields) }.map(\.id))
            let listing = try await remote.listRevisions { _ in }
            #expect(Set(listing.revisions.keys.map(\.rawValue)) == expected, "names of \(text)")
            let bodies = Mutex<Set<String>>([])
            try await remote.listDocuments(batch: { _, documents in bodies.withLock { $0.formUnion(documents.keys.map(\.rawValue)) } }, progress: { _ in })
            #expect(bodies.withLock { $0 } == expected, "bodies of \(text)")
            #expect(try await remote.documentCount() == expected.count, "count of \(text)")
        }
    }

    /// A document edited between two pages so that it sorts before the
    /// cursor is still listed, as it was at the first page: the later pages
    /// read at the first answer's time (without that, `d5` was missed and
    /// would have been reported as having left the scope).
    @Test func aDocumentEditedBackPastTheCursorIsStillListed() async throws {
        let host = try Emulator.requireHost()
        let project = Emulator.uniqueProject("scoped-pinned")
        let rest = RESTClient(host: host, project: project, collection: "books")
        try await rest.put((1...6).map { ("d\($0)", ["rating": .integer(Int64($0))]) })
        let live = URLSessionTransport.make(requestTimeout: .seconds(60))
        let queries = Mutex(0)
        // After the first page (d1, d2), d5 moves to 1.5: before the cursor (2, d2).
        let transport: HTTPTransport = { request throws(TransportError) in
            let answer = try await live(request)
            guard request.url.hasSuffix(":runQuery"), queries.withLock({ $0 += 1; return $0 }) == 1 else { return answer }
            do {
                try await rest.put([("d5", ["rating": .double(1.5)])])
            } catch {
                throw TransportError(.other, "the edit between pages failed: \(error)")
            }
            return answer
        }
        let remote = try Self.remote(try ScopeExpression.parse("rating >= 1"), host: host, project: project, transport: transport)
        let listing = try await remote.listRevisions { _ in }
        #expect(queries.withLock { $0 } >= 3, "the listing took several pages")
        #expect(listing.revisions.keys.map(\.rawValue).sorted() == ["d1", "d2", "d3", "d4", "d5", "d6"])
        // The next listing reads the present: d5 at 1.5.
        let bodies = Mutex<[String: Fields]>([:])
        try await remote.listDocuments(batch: { _, documents in
            bodies.withLock { for (id, document) in documents { $0[id.rawValue] = document.record?.fields } }
        }, progress: { _ in })
        #expect(bodies.withLock { $0["d5"]?["rating"] } == .double(1.5))
    }

    /// The change query and a scope together: only documents that match
    /// and changed since the mark, paged in the order of both.
    @Test func theChangeQueryCombinesWithTheScope() async throws {
        let host = try Emulator.requireHost()
        let project = Emulator.uniqueProject("scoped-changes")
        let rest = RESTClient(host: host, project: project, collection: "books")
        let old = Value.timestamp(try Timestamp(rfc3339: "2020-01-01T00:00:00Z"))
        let new = Value.timestamp(try Timestamp(rfc3339: "2026-01-01T00:00:00Z"))
        let documents: [(id: String, fields: Fields)] = (0..<9).map { i in
            ("d\(i)", ["rating": .integer(Int64(i)), "updatedAt": i % 3 == 0 ? old : new])
        }
        try await rest.put(documents)
        let scope = try ScopeExpression.parse("rating >= 4")
        let remote = try Self.remote(scope, host: host, project: project, changeField: "updatedAt")
        let mark = ChangeMark(field: "updatedAt", time: try Timestamp(rfc3339: "2025-01-01T00:00:00Z"), scope: scope.description)
        let changes = try #require(try await remote.changes(since: mark, counting: true) { _ in })
        #expect(Set(changes.documents.keys.map(\.rawValue)) == ["d4", "d5", "d7", "d8"])
        #expect(changes.count == 5, "the count is the scope's: d4 … d8")
        // A mark taken under another scope is not this scope's: no change query.
        let otherMark = ChangeMark(field: "updatedAt", time: mark.time, scope: "rating >= 1")
        #expect(try await remote.changes(since: otherMark, counting: true) { _ in } == nil)
    }

    /// The whole life of a scoped directory, with the billed reads counted on
    /// the wire: the clone reads only what matches; a document edited out of
    /// the scope remotely is let go (file kept, nothing deleted), one edited
    /// in arrives; a new file outside the scope is never created; narrowing
    /// the scope in config.json deletes nothing, widening it pulls the rest.
    @Test func documentsLeaveAndEnterTheScopeWithoutAnythingDeleted() async throws {
        let upstream = try Emulator.requireHost()
        let proxy = try CountProxy(upstream: upstream)
        let ws = try Workspace(project: Emulator.uniqueProject("scoped"), host: proxy.host)
        func book(_ i: Int, genre: String, rating: Int) -> (id: String, fields: Fields) {
            ("b\(i)", bookFields("b\(i)", extra: ["genre": .string(genre), "rating": .integer(Int64(rating))]))
        }
        try await ws.rest.put((1...40).map { book($0, genre: $0 % 2 == 1 ? "sf" : "fantasy", rating: $0 % 10) })
        try ws.initialize("--where", "rating >= 7 and genre == \"sf\"")
        #expect(ws.read(".booksync/config.json")?.contains(#""scope": "rating >= 7 and genre == \"sf\"""#) == true)
        _ = try proxy.takeBilledReads()

        // b7, b9, b17, b19, b27, b29, b37, b39: 8 of 40, and 8 billed reads.
        let clone = try ws.run("-v", "pull")
        #expect(clone.status == 0, "\(clone.stderr)")
        let matching = ["b17", "b19", "b27", "b29", "b37", "b39", "b7", "b9"]
        #expect(try ws.recordFiles().keys.sorted() == matching.map { $0 + ".json" }.sorted())
        try proxy.expectBilled(8, by: clone)

        // Remotely: b9 leaves (its genre changes), b1 enters (its rating does).
        try await ws.rest.put([book(9, genre: "fantasy", rating: 9), book(1, genre: "sf", rating: 8)])
        // Locally: a new record outside the scope, and one inside it.
        try ws.write("b41.json", bookFile("b41", genre: "sf", extra: ["rating": .integer(1)]))
        try ws.write("b43.json", bookFile("b43", genre: "sf", extra: ["rating": .integer(9)]))
        let status = try ws.run("status", "--short")
        #expect(status.stdout == " A b1\nO  b41\nA  b43\n L b9\n", "\(status.stdout)")
        let validate = try ws.run("validate")
        #expect(validate.stdout.contains("b41.json: warning: does not match the scope"), "\(validate.stdout)")

        let pull = try ws.run("pull")
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(pull.stdout.contains("let go   b9.json (left the scope remotely"), "\(pull.stdout)")
        #expect(ws.read("b9.json") == bookFile("b9", genre: "sf", extra: ["rating": .integer(9)]), "the file is kept as it was")
        #expect(ws.read(".booksync/manifest.json")?.contains("\"b9\"") == false, "its base entry is let go")
        #expect(ws.read("b1.json") != nil)

        // Push creates b43 only: b41 does not match, b9's document exists outside the scope.
        let push = try ws.run("push")
        #expect(push.status == 1, "records outside the scope need attention: \(push.stdout)")
        #expect(push.stdout.contains("outside  b41.json"), "\(push.stdout)")
        let remote = try await ws.rest.all()
        #expect(remote["b43"] != nil && remote["b41"] == nil)
        #expect(remote["b9"]?.fields["genre"] == .string("fantasy"), "the document that left is untouched")
        let after = try ws.run("status", "--short")
        #expect(after.stdout == "O  b41\nO  b9\n", "\(after.stdout)")
        // A reviewed plan holds them, saying why; discover has nothing to add to a scoped collection.
        let plan = try ws.run("plan", "--markdown")
        #expect(plan.stdout.contains("| b41 | outside the collection"), "\(plan.stdout)")
        #expect(try ws.run("discover").stdout.contains("syncs no subcollections"))

        // Narrowing the scope deletes nothing: records outside it are let go.
        try ws.setScope("rating >= 9 and genre == \"sf\"")
        let narrow = try ws.run("pull")
        #expect(narrow.status == 0, "\(narrow.stderr)")
        #expect(try ws.recordFiles().count == matching.count + 3, "no file removed: \(narrow.stdout)")
        #expect(try await ws.rest.all().count == 41, "no document removed")
        #expect(narrow.stdout.contains("let go   b17.json"), "\(narrow.stdout)")

        // Widening it pulls what now matches; files that were kept and agree are recorded.
        try ws.setScope("genre == \"sf\"")
        let wide = try ws.run("pull")
        #expect(wide.status == 0, "\(wide.stdout)\(wide.stderr)")
        #expect(wide.stdout.contains("pull     b11.json"), "\(wide.stdout)")
        #expect(wide.stdout.contains("record   b17.json (same content on both sides)"), "\(wide.stdout)")
        // b41 matches the wider scope: an addition now; b9's document is still outside it.
        let widened = try ws.run("status", "--short")
        #expect(widened.stdout == "A  b41\nO  b9\n", "\(widened.stdout)")

        // seed publishes what the scope covers, and no more.
        try ws.write("b44.json", bookFile("b44", genre: "fantasy"))
        let seed = try ws.run("seed")
        #expect(seed.stdout.contains("outside  b44.json"), "\(seed.stdout)")
        #expect(try await ws.rest.all()["b44"] == nil)
        #expect(try await ws.rest.all()["b41"]?.fields["genre"] == .string("sf"))
    }
}

extension Workspace {
    /// Rewrites config.json's `"scope"`, as a user edits it.
    func setScope(_ scope: String) throws {
        let path = root + "/.booksync/config.json"
        var config = try CollectionConfig.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        config.scope = try ScopeExpression.parse(scope)
        try Data(config.encoded()).write(to: URL(fileURLWithPath: path))
    }
}
