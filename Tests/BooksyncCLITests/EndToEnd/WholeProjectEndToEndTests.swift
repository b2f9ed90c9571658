import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// `booksync clone --firestore P` without `--collection`: the whole database
/// as a workspace, every subcollection discovered (<doc:WholeProject>); its
/// dry run's price against count_proxy.py's; `status` and `discover` from the
/// workspace for what appears later.
@Suite struct WholeProjectEndToEndTests {
    /// Documents by full path (collection/doc[/collection/doc…]).
    static func seed(_ rest: RESTClient, _ paths: [String]) async throws {
        let root = RESTClient(host: rest.host, project: rest.project, collection: "")
        for path in paths {
            let (status, answer) = try await root.request("POST", root.base + ":commit", body: CanonicalJSON.encodeInline(.map(["writes": .array([.map(["update": .map([
                "name": .string("\(root.root)/\(path)"), "fields": .map(["n": .map(["stringValue": .string(path)])]),
            ])])])])))
            #expect(status == 200, "\(path): \(CanonicalJSON.encodeInline(answer))")
        }
    }

    static let layout = [
        "books/b1", "books/b2", "books/é t",
        "books/b1/reviews/r1", "books/b1/reviews/r1/likes/l1", "books/b1/reviews/r1/likes/l1/flags/f1",
        // Below a document that does not exist.
        "books/missing/notes/n1",
        "café/c1", "a b/x", "100%/p1", ".booksync/z1", "..x/y",
    ]

    @Test func theWholeDatabaseBecomesAWorkspaceAndLaterCollectionsAreFoundAndAdded() async throws {
        let upstream = try Emulator.requireHost()
        let proxy = try CountProxy(upstream: upstream)
        let project = Emulator.uniqueProject("whole")
        let rest = RESTClient(host: upstream, project: project, collection: "books")
        try await Self.seed(rest, Self.layout)
        let scratch = try ScratchDirectory()
        let environment = ["FIRESTORE_EMULATOR_HOST": proxy.host, "NO_COLOR": "1"]
        _ = try proxy.takeBilledReads()

        // The dry run: the layout, the counts, the price; nothing written.
        let dry = try BinaryTests.run(["-v", "clone", "--firestore", project, "--dry-run"], in: scratch.path, environment: environment)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
        for line in [
            "firestore \(project)/(default): 6 root collections, 12 documents",
            "\(project)/books/: 3 documents", "  subcollection notes: 1 document", "  subcollection reviews/likes/flags: 1 document",
            "\(project)/caf%C3%A9/ (collection café): 1 document", "\(project)/%2Ebooksync/ (collection .booksync): 1 document",
            "\(project)/100%25/ (collection 100%): 1 document", "\(project)/a%20b/ (collection a b): 1 document",
            "\(project)/%2E.x/ (collection ..x): 1 document",
            // 1 listCollectionIds page, 6 names queries: 1 + 12 reads.
            "discovery: 7 requests, 12 documents read (estimated billed reads: 13)",
            "dry run: nothing was written",
        ] {
            #expect(dry.stdout.contains(line + "\n"), "\(line)\n\(dry.stdout)")
        }
        try proxy.expectBilled(13, by: dry)
        let estimate = try #require(Self.cloneEstimate(dry.stdout), "\(dry.stdout)")

        // The clone: what the dry run said, to the read.
        let clone = try BinaryTests.run(["-v", "clone", "--firestore", project, "db"], in: scratch.path, environment: environment)
        #expect(clone.status == 0, "\(clone.stdout)\n\(clone.stderr)")
        try proxy.expectBilled(estimate, by: clone)
        #expect(BilledReadsEndToEndTests.estimate(clone.stderr) == estimate, "\(clone.stderr)")
        let db = scratch.path + "/db"
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["db"])
        for file in [
            ".booksync-workspace.json", "books/b1.json", "books/%C3%A9%20t.json", "books/b1/reviews/r1.json", "books/b1/reviews/r1/likes/l1.json",
            "books/b1/reviews/r1/likes/l1/flags/f1.json", "books/missing/notes/n1.json", "caf%C3%A9/c1.json", "a%20b/x.json",
            "100%25/p1.json", "%2Ebooksync/z1.json", "%2E.x/y.json", "%2Ebooksync/.booksync/config.json",
        ] {
            #expect(FileManager.default.fileExists(atPath: db + "/" + file), "\(file)")
        }
        let status = try BinaryTests.run(["status", "--short"], in: db, environment: environment)
        #expect(status.status == 0, "\(status.stdout)\n\(status.stderr)")
        #expect(!status.stdout.contains("new since the clone"), "\(status.stdout)")

        // Later: a root collection and a subcollection appear remotely.
        try await Self.seed(rest, ["orders/o1", "books/b2/quotes/q1"])
        let later = try BinaryTests.run(["-v", "status", "--short"], in: db, environment: environment)
        #expect(later.status == 0, "\(later.stdout)\n\(later.stderr)")
        #expect(later.stdout.contains("== firestore \(project)/(default): new since the clone ('booksync discover' adds them)\n"), "\(later.stdout)")
        #expect(later.stdout.contains("root collection orders: not cloned\n"), "\(later.stdout)")
        #expect(later.stdout.contains("books/: subcollection quotes (1 document): not configured\n"), "\(later.stdout)")
        #expect(later.stderr.contains("booksync: checking for new collections: "), "\(later.stderr)")

        let discover = try BinaryTests.run(["discover"], in: db, environment: environment)
        #expect(discover.status == 0, "\(discover.stdout)\n\(discover.stderr)")
        #expect(FileManager.default.fileExists(atPath: db + "/orders/o1.json"), "\(discover.stdout)")
        #expect(FileManager.default.fileExists(atPath: db + "/books/b2/quotes/q1.json"), "\(discover.stdout)")
        let after = try BinaryTests.run(["status", "--short"], in: db, environment: environment)
        #expect(after.status == 0 && !after.stdout.contains("new since the clone"), "\(after.stdout)\n\(after.stderr)")
        let again = try BinaryTests.run(["discover"], in: db, environment: environment)
        #expect(again.status == 0 && again.stdout.contains("nothing new in firestore \(project)/(default)"), "\(again.stdout)\n\(again.stderr)")

        // `-q`: no layout and no closing advice, and every pull's result under its collection's heading.
        let quiet = try BinaryTests.run(["clone", "-q", "--firestore", project, "quiet"], in: scratch.path, environment: environment)
        #expect(quiet.status == 0, "\(quiet.stdout)\n\(quiet.stderr)")
        let lines = quiet.stdout.split(separator: "\n")
        let folders = try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/quiet").filter { !$0.hasPrefix(".booksync-") }
        #expect(lines.first?.hasPrefix("== quiet/") == true, "\(quiet.stdout)")
        #expect(lines.filter { $0.hasPrefix("== quiet/") }.count == folders.count, "\(quiet.stdout)")
        #expect(!quiet.stdout.contains("the clone costs") && !quiet.stdout.contains("Cloned "), "\(quiet.stdout)")
    }

    /// `the clone costs about 31 billed reads: …`.
    static func cloneEstimate(_ stdout: String) -> Int? {
        guard let line = stdout.split(separator: "\n").first(where: { $0.hasPrefix("the clone costs about ") }) else { return nil }
        return Int(line.dropFirst("the clone costs about ".count).prefix { $0.isNumber || $0 == "," }.filter(\.isNumber))
    }

    /// `clone --collection` discovers the collection's subcollections too:
    /// the review below b1 arrives, and so does one below a missing book.
    @Test func cloningOneCollectionDiscoversItsSubcollections() async throws {
        let host = try Emulator.requireHost()
        let project = Emulator.uniqueProject("onecoll")
        let rest = RESTClient(host: host, project: project, collection: "books")
        try await Self.seed(rest, ["books/b1", "books/b2", "books/b1/reviews/r1", "books/gone/reviews/r2/likes/l1"])
        let scratch = try ScratchDirectory()
        let environment = ["FIRESTORE_EMULATOR_HOST": host, "NO_COLOR": "1"]
        let dry = try BinaryTests.run(["clone", "--firestore", project, "--collection", "books", "--dry-run"], in: scratch.path, environment: environment)
        #expect(dry.status == 0 && dry.stdout.contains("books/: 2 documents\n  subcollection reviews: 1 document\n  subcollection reviews/likes: 1 document\n"),
                "\(dry.stdout)\n\(dry.stderr)")
        #expect(dry.stdout.contains("discovery: 1 request, 4 documents read (estimated billed reads: 4)\n"), "\(dry.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
        let clone = try BinaryTests.run(["clone", "--firestore", project, "--collection", "books", "--require", "none"], in: scratch.path, environment: environment)
        #expect(clone.status == 0, "\(clone.stderr)")
        #expect(clone.stdout.contains("  subcollection: reviews, required: id only\n"), "\(clone.stdout)")
        #expect(clone.stdout.contains("  subcollection: reviews/likes, required: id only\n"), "\(clone.stdout)")
        for file in ["b1.json", "b1/reviews/r1.json", "gone/reviews/r2/likes/l1.json"] {
            #expect(FileManager.default.fileExists(atPath: scratch.path + "/books/" + file), "\(file)")
        }
        let status = try BinaryTests.run(["status", "--short"], in: scratch.path + "/books", environment: environment)
        #expect(status.status == 0 && status.stdout.isEmpty, "\(status.stdout)\n\(status.stderr)")
        // Inside the collection, discover finds what is new below it.
        try await Self.seed(rest, ["books/b2/notes/n1"])
        let look = try BinaryTests.run(["discover", "--dry-run"], in: scratch.path + "/books", environment: environment)
        #expect(look.status == 0 && look.stdout == "subcollection notes: 1 document\ndry run: nothing was changed\n", "\(look.stdout)\n\(look.stderr)")
        let discover = try BinaryTests.run(["discover"], in: scratch.path + "/books", environment: environment)
        #expect(discover.status == 0 && FileManager.default.fileExists(atPath: scratch.path + "/books/b2/notes/n1.json"), "\(discover.stdout)\n\(discover.stderr)")
    }

    /// A collection id no folder can be (a control character) is left out,
    /// named; nothing is written outside DIR.
    @Test func aHostileCollectionNameNeverEscapesTheFolder() async throws {
        let host = try Emulator.requireHost()
        let project = Emulator.uniqueProject("hostile")
        let rest = RESTClient(host: host, project: project, collection: "x")
        try await Self.seed(rest, ["bad\u{1B}[31mname/d1", "ok/d1", "ok/d1/a:b/x1", "..%2F..%2Fetc/d1", "__x/d1"])
        let scratch = try ScratchDirectory()
        let environment = ["FIRESTORE_EMULATOR_HOST": host, "NO_COLOR": "1"]
        let clone = try BinaryTests.run(["clone", "--firestore", project, "inner/db"], in: scratch.path, environment: environment)
        #expect(clone.status == 0, "\(clone.stdout)\n\(clone.stderr)")
        #expect(clone.stderr.contains("booksync: warning: the root collection bad") && clone.stderr.contains("is left out"), "\(clone.stderr)")
        #expect(!clone.stderr.contains("\u{1B}"), "\(clone.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["inner"])
        let made = Set(try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/inner/db"))
        #expect(made == [".booksync-workspace.json", "%2E.%252F..%252Fetc", "__x", "ok"], "\(made)")
        #expect(clone.stderr.contains("booksync: warning: ok: subcollection a:b (1 document) is left out"), "\(clone.stderr)")
        // What cannot be synced is not news: status counts (1 + 2 × 3 requests) and lists no names,
        // neither the collection left out nor the path left out.
        let status = try BinaryTests.run(["-v", "status", "--short"], in: scratch.path + "/inner/db", environment: environment)
        #expect(status.status == 0 && !status.stdout.contains("new since the clone"), "\(status.stdout)\n\(status.stderr)")
        #expect(status.stderr.contains("booksync: checking for new collections: 7 requests, 0 documents read (estimated billed reads: 7)\n"), "\(status.stderr)")
    }
}
