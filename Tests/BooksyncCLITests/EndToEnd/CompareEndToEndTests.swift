import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// `booksync compare` run as a process against two real emulators, each
/// behind its own count proxy: "staging" on the second emulator
/// (`BOOKSYNC_TEST_SECOND_EMULATOR_HOST`), "production" on the first. What it
/// reports, its exit codes, that the reads it states are what each proxy
/// counted on the wire, and that it leaves the files and `.booksync` alone.
@Suite struct CompareEndToEndTests {
    /// A collection synced with production, with staging and production as
    /// remotes through the proxies, and documents on each: 40 shared, b005
    /// different in a nested map field, one only on each, `bad` invalid on production.
    final class Setup {
        let ws: Workspace
        let staging: CountProxy
        let production: CountProxy

        init() async throws {
            let emulator = try Emulator.requireHost()
            let second = try RemotesEndToEndTests.secondHost()
            staging = try CountProxy(upstream: second)
            production = try CountProxy(upstream: emulator)
            ws = try Workspace(project: Emulator.uniqueProject("compare"), host: emulator)
            let name = { (n: Int) in String(format: "b%03d", n) }
            let shared = (0..<40).map { (id: name($0), fields: bookFields(name($0), extra: ["stats": .map(["rating": .integer(4), "pages": .integer(100)])])) }
            try await RESTClient(host: second, project: ws.project, collection: "books").put(shared + [
                (id: "only-s", fields: bookFields("only-s")), (id: "bad", fields: bookFields("bad")),
            ])
            var onProduction = shared
            onProduction[5].fields["stats"] = .map(["rating": .integer(5), "pages": .integer(100)])
            try await ws.rest.put(onProduction + [
                (id: "only-p", fields: bookFields("only-p")), (id: "bad", fields: bookFields("bad", extra: ["title": .integer(1)])),
            ])
            try ws.initialize()
            #expect(try ws.run("remote", "add", "staging", "--emulator-host", staging.host).status == 0)
            #expect(try ws.run("remote", "add", "production", "--emulator-host", production.host).status == 0)
            let pull = try ws.run("pull")
            #expect(pull.status == 1 && pull.stdout.contains("invalid"), "bad stays invalid: \(pull.stdout) \(pull.stderr)")
            try ws.write("b001.json", bookFile("b001", title: "edited here"))
            _ = try staging.takeBilledReads()
            _ = try production.takeBilledReads()
        }

        func run(_ arguments: String...) throws -> BinaryTests.Output { try ws.run(arguments) }
    }

    /// The `--json` document's value at `key` of `object`.
    static func member(_ value: Value?, _ key: String) -> Value? {
        guard case .map(let fields)? = value else { return nil }
        return fields[key]
    }

    static func ids(_ value: Value?) -> [String] {
        guard case .array(let items)? = value else { return [] }
        return items.compactMap { if case .string(let id)? = member($0, "id") { id } else { nil } }
    }

    @Test func stagingAgainstProductionReportsDifferencesAndTheBilledReads() async throws {
        let setup = try await Setup()
        let before = try setup.ws.snapshot()

        let json = try setup.run("-v", "compare", "staging", "production", "--json")
        #expect(json.status == 1, "\(json.stdout) \(json.stderr)")
        let document = try JSONParser.parse(Array(json.stdout.utf8), decodeTags: false)
        #expect(Self.ids(Self.member(document, "onlyA")) == ["only-s"])
        #expect(Self.ids(Self.member(document, "onlyB")) == ["only-p"])
        #expect(Self.ids(Self.member(document, "different")) == ["b005"])
        #expect(Self.ids(Self.member(document, "invalid")) == ["bad"])
        #expect(Self.member(document, "identical") == .integer(39) && Self.member(document, "same") == .bool(false))
        guard case .array(let different)? = Self.member(document, "different"), case .array(let fields)? = Self.member(different.first, "fields") else {
            Issue.record("no fields: \(json.stdout)")
            return
        }
        #expect(fields == [.map(["name": .string("stats.rating"), "path": .array([.string("stats"), .string("rating")]),
                                 "a": .integer(4), "b": .integer(5)])])
        // 42 documents listed on each side, and b005 read again on staging.
        let a = Self.member(document, "a"), b = Self.member(document, "b")
        #expect(Self.member(a, "reads") == .map(["compared": .integer(42), "shown": .integer(1)]))
        #expect(Self.member(b, "reads") == .map(["compared": .integer(42), "shown": .integer(0)]))
        #expect(Self.member(a, "billedReads") == .integer(43) && Self.member(b, "billedReads") == .integer(42))
        #expect(Self.member(document, "billedReads") == .integer(85))
        try setup.staging.expectBilled(43, by: json)
        try setup.production.expectBilled(42, by: json)
        #expect(BilledReadsEndToEndTests.estimate(json.stderr) == 85, "-v adds up both remotes: \(json.stderr)")
        #expect(!json.stderr.contains("using remote"), "compare names both remotes itself: \(json.stderr)")

        let text = try setup.run("compare", "staging", "production")
        #expect(text.status == 1, "\(text.stderr)")
        #expect(text.stdout == """
            b005: different
              stats.rating
                staging:    4
                production: 5

            bad: invalid on production, not compared
              problem: field 'title' must be string, found integer

            only-p: only on production

            only-s: only on staging

            staging and production differ: 1 record only on staging, 1 only on production, 1 different, 1 invalid document; 39 identical
            read 42 documents from staging and 42 from production: 84 billed reads, plus 1 to show the differences

            """, "\(text.stdout)")
        try setup.staging.expectBilled(43, by: text)
        try setup.production.expectBilled(42, by: text)

        let markdown = try setup.run("compare", "staging", "production", "--markdown")
        #expect(markdown.status == 1)
        #expect(markdown.stdout.contains("| b005 | *different* | stats\\.rating | 4 | 5 |\n"), "\(markdown.stdout)")
        #expect(markdown.stdout.hasSuffix("|\n"), "no blank line after the table")
        _ = try setup.staging.takeBilledReads()
        _ = try setup.production.takeBilledReads()

        #expect(try setup.ws.snapshot() == before, "neither the files nor .booksync changed")
    }

    /// A glob lists only its id range on each side; ids named one by one are
    /// read by name; the same content exits 0.
    @Test func pathspecsReadOnlyTheirRecords() async throws {
        let setup = try await Setup()
        let before = try setup.ws.snapshot()

        let range = try setup.run("compare", "staging", "production", "b00*")
        #expect(range.status == 1, "\(range.stderr)")
        #expect(range.stdout.hasSuffix("""
            staging and production differ: 1 record different; 9 identical
            read 10 documents from staging and 10 from production: 20 billed reads, plus 1 to show the differences

            """), "\(range.stdout)")
        try setup.staging.expectBilled(11, by: range)
        try setup.production.expectBilled(10, by: range)

        let same = try setup.run("compare", "staging", "production", "b001", "b002.json", "missing")
        #expect(same.status == 0, "\(same.stdout) \(same.stderr)")
        #expect(same.stdout == "staging and production hold the same 2 records\nread 3 documents from staging and 3 from production: 6 billed reads\n")
        try setup.staging.expectBilled(3, by: same)
        try setup.production.expectBilled(3, by: same)

        let quiet = try setup.run("-q", "compare", "staging", "production", "b001")
        #expect(quiet.status == 0 && quiet.stdout == "staging and production hold the same 1 record\n", "\(quiet.stdout)")
        #expect(try setup.ws.snapshot() == before)
    }

    /// The same target twice is a usage error (2); a remote that fails is 3.
    @Test func exitCodesForUsageAndFailure() async throws {
        let setup = try await Setup()
        #expect(try setup.run("remote", "add", "direct", "--emulator-host", setup.ws.host).status == 0)
        #expect(try setup.run("remote", "add", "down", "--emulator-host", "127.0.0.1:1").status == 0)
        let before = try setup.ws.snapshot()

        let twice = try setup.run("compare", "staging", "staging")
        #expect(twice.status == 2 && twice.stderr.contains("'staging' twice"), "\(twice.stderr)")
        // origin works with FIRESTORE_EMULATOR_HOST, the same emulator and project as 'direct'.
        let sameTarget = try setup.run("compare", "origin", "direct")
        #expect(sameTarget.status == 2, "\(sameTarget.stdout) \(sameTarget.stderr)")
        #expect(sameTarget.stderr.contains("'origin' and 'direct' are the same target"), "\(sameTarget.stderr)")
        let one = try setup.run("compare", "staging")
        #expect(one.status == 2, "\(one.stderr)")
        let unknown = try setup.run("compare", "staging", "nowhere")
        #expect(unknown.status == 2 && unknown.stderr.contains("no remote named 'nowhere'"), "\(unknown.stderr)")
        let both = try setup.run("compare", "staging", "production", "--json", "--markdown")
        #expect(both.status == 2, "\(both.stderr)")

        let failed = try BinaryTests.run(["compare", "origin", "down"], in: setup.ws.root,
                                         environment: setup.ws.environment.merging(["BOOKSYNC_RETRY_DEADLINE": "1", "BOOKSYNC_REQUEST_TIMEOUT": "1"]) { _, new in new })
        #expect(failed.status == 3, "\(failed.stdout) \(failed.stderr)")
        #expect(failed.stdout.isEmpty)
        // origin against production through its proxy: the same documents, another address.
        let origin = try setup.run("compare", "origin", "production")
        #expect(origin.status == 1 && origin.stdout.contains("b001: different") == false, "the file edit is not the remote's: \(origin.stdout)")
        #expect(origin.stdout.contains("bad: invalid on origin, not compared"), "\(origin.stdout)")
        #expect(try setup.ws.snapshot() == before)
    }
}
