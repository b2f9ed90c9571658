import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The built `booksync` binary against the real Firestore emulator, one project per test.
@Suite struct EndToEndTests {
    static let demoBooks = Fixtures.root + "/demo/books"

    func workspace(_ name: String, collection: String = "books") throws -> Workspace {
        try Workspace(project: Emulator.uniqueProject(name), host: try Emulator.requireHost(), collection: collection)
    }

    /// Copies the demo books (every value type) into a workspace.
    func addDemoBooks(_ workspace: Workspace) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.demoBooks) where name.hasSuffix(".json") {
            try FileManager.default.copyItem(atPath: Self.demoBooks + "/" + name, toPath: workspace.root + "/" + name)
        }
    }

    @Test func firstPullOfAPopulatedCollection() async throws {
        let ws = try workspace("firstpull")
        try await ws.rest.put((0..<25).map { (id: "b\($0)", fields: bookFields("b\($0)", title: "Book \($0)", extra: ["n": .integer(Int64($0))])) })
        try ws.initialize()
        let pull = try ws.run("pull")
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(pull.stdout.hasSuffix("pulled 25\n"))
        let files = try ws.recordFiles()
        #expect(files.count == 25)
        #expect(ws.read("b7.json") == bookFile("b7", title: "Book 7", extra: ["n": .integer(7)]))
        let status = try ws.run("status", "--short")
        #expect(status.status == 0)
        #expect(status.stdout.isEmpty)
    }

    @Test func everyValueTypeRoundTripsByteForByte() async throws {
        let a = try workspace("roundtrip")
        try a.initialize()
        try addDemoBooks(a)
        let push = try a.run("push")
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        let before = try await a.rest.all()
        #expect(before.count == 30)

        let b = try Workspace(project: a.project, host: a.host, name: "second", scratch: a.scratch)
        try b.initialize()
        #expect(try b.run("pull").status == 0)
        #expect(try b.recordFiles() == a.recordFiles(), "pulled files differ from pushed files")
        // Pushing the pulled copy changes nothing remotely.
        let again = try b.run("push")
        #expect(again.stdout == "nothing to do\n")
        let after = try await a.rest.all()
        #expect(after.mapValues(\.revision) == before.mapValues(\.revision))
        // Pull again: still identical, nothing to do.
        #expect(try b.run("pull").stdout == "nothing to do\n")
        #expect(try b.recordFiles() == a.recordFiles())
    }

    @Test func localChangesArePushed() async throws {
        let ws = try workspace("localchanges")
        try ws.initialize()
        try ws.write("keep.json", bookFile("keep"))
        try ws.write("edit.json", bookFile("edit"))
        try ws.write("gone.json", bookFile("gone"))
        #expect(try ws.run("push").status == 0)
        try ws.write("edit.json", bookFile("edit", title: "Edited"))
        try ws.remove("gone.json")
        try ws.write("new.json", bookFile("new", extra: ["year": .integer(2024)]))
        let short = try ws.run("status", "--short")
        #expect(short.stdout == "M  edit\nD  gone\nA  new\n")
        let push = try ws.run("-v", "push")
        #expect(push.status == 0)
        #expect(push.stdout.hasSuffix("pushed 3\n"))
        // O(changes): one batchWrite, no listing.
        let requests = push.stderr.split(separator: "\n").filter { $0.hasPrefix("booksync: GET ") || $0.hasPrefix("booksync: POST ") }
        #expect(requests.count == 1, "\(requests)")
        #expect(requests.first?.contains(":batchWrite → 200") == true)
        let remote = try await ws.rest.all()
        #expect(Set(remote.keys) == ["keep", "edit", "new"])
        #expect(remote["edit"]?.fields["title"] == .string("Edited"))
        #expect(remote["new"]?.fields["year"] == .integer(2024))
        #expect(try ws.run("status", "--short").stdout.isEmpty)
    }

    @Test func remoteChangesArePulled() async throws {
        let ws = try workspace("remotechanges")
        try await ws.rest.put([(id: "keep", fields: bookFields("keep")), (id: "edit", fields: bookFields("edit")), (id: "gone", fields: bookFields("gone"))])
        try ws.initialize()
        #expect(try ws.run("pull").status == 0)
        try await ws.rest.put([(id: "edit", fields: bookFields("edit", title: "Remote edit")), (id: "new", fields: bookFields("new"))])
        try await ws.rest.delete("gone")
        #expect(try ws.run("status", "--short").stdout == " M edit\n D gone\n A new\n")
        let pull = try ws.run("pull")
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(ws.read("edit.json") == bookFile("edit", title: "Remote edit"))
        #expect(ws.read("gone.json") == nil)
        #expect(ws.read("new.json") == bookFile("new"))
        #expect(try ws.run("status", "--short").stdout.isEmpty)
    }

    @Test func convergedChangesAreRecorded() async throws {
        let ws = try workspace("converged")
        try await ws.rest.put([(id: "same", fields: bookFields("same")), (id: "both-gone", fields: bookFields("both-gone"))])
        try ws.initialize()
        #expect(try ws.run("pull").status == 0)
        try ws.write("same.json", bookFile("same", title: "Both"))
        try await ws.rest.put([(id: "same", fields: bookFields("same", title: "Both"))])
        try ws.remove("both-gone.json")
        try await ws.rest.delete("both-gone")
        #expect(try ws.run("status", "--short").stdout == "== both-gone\n== same\n")
        let pull = try ws.run("pull")
        #expect(pull.stdout.contains("record   same.json (same content on both sides)"))
        #expect(try ws.run("status", "--short").stdout.isEmpty)
        let manifest = try String(contentsOfFile: ws.root + "/.booksync/manifest.json", encoding: .utf8)
        #expect(!manifest.contains("both-gone"))
    }

    @Test func concurrentRemoteChangeIsNeverOverwritten() async throws {
        let ws = try workspace("concurrent")
        try ws.initialize()
        try ws.write("dune.json", bookFile("dune"))
        try ws.write("other.json", bookFile("other"))
        #expect(try ws.run("push").status == 0)
        // Someone else edits the document after our last sync; we edit it too.
        try await ws.rest.put([(id: "dune", fields: bookFields("dune", title: "Their title"))])
        try ws.write("dune.json", bookFile("dune", title: "Our title"))
        try ws.write("other.json", bookFile("other", title: "Fine"))
        let push = try ws.run("push")
        #expect(push.status == 1)
        #expect(push.stdout.contains("remote changed 'dune' since your last pull; run 'booksync pull'"))
        let remote = try await ws.rest.all()
        #expect(remote["dune"]?.fields["title"] == .string("Their title"))
        #expect(remote["other"]?.fields["title"] == .string("Fine"))
        #expect(ws.read("dune.json") == bookFile("dune", title: "Our title"))
        // A remote create races our create: ALREADY_EXISTS, never overwritten.
        try await ws.rest.put([(id: "race", fields: bookFields("race", title: "Theirs"))])
        try ws.write("race.json", bookFile("race", title: "Ours"))
        let second = try ws.run("push")
        #expect(second.stdout.contains("remote changed 'race'"))
        #expect(try await ws.rest.all()["race"]?.fields["title"] == .string("Theirs"))
    }

    @Test func dryRunWritesNothing() async throws {
        let ws = try workspace("dryrun")
        try await ws.rest.put([(id: "r1", fields: bookFields("r1")), (id: "r2", fields: bookFields("r2"))])
        try ws.initialize()
        #expect(try ws.run("pull").status == 0)
        try await ws.rest.put([(id: "r1", fields: bookFields("r1", title: "Remote")), (id: "r3", fields: bookFields("r3"))])
        try ws.write("r2.json", bookFile("r2", title: "Local"))
        try ws.write("l1.json", bookFile("l1"))
        try ws.remove(".booksync/index")
        let localBefore = try ws.snapshot()
        let remoteBefore = try await ws.rest.all().mapValues(\.revision)
        for command in ["pull", "push", "sync"] {
            let result = try ws.run("-v", command, "--dry-run")
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(result.stdout.contains("dry run: nothing written"), "\(command): \(result.stdout)")
            let writes = result.stderr.split(separator: "\n").filter { $0.contains(":batchWrite") || $0.contains(":commit") }
            #expect(writes.isEmpty, "\(command) sent writes: \(writes)")
            #expect(try ws.snapshot() == localBefore, "\(command) --dry-run changed the directory")
        }
        #expect(try ws.run("pull", "--dry-run").stdout.contains("would pull     r1.json"))
        #expect(try ws.run("push", "--dry-run").stdout.contains("would create   l1"))
        #expect(try await ws.rest.all().mapValues(\.revision) == remoteBefore)
    }

    @Test func massDeleteIsRefusedUnlessForced() async throws {
        let ws = try workspace("massdelete")
        try ws.initialize()
        for i in 0..<10 { try ws.write("m\(i).json", bookFile("m\(i)")) }
        #expect(try ws.run("push").status == 0)
        for i in 0..<6 { try ws.remove("m\(i).json") }
        let refused = try ws.run("push")
        #expect(refused.status == 4)
        #expect(refused.stderr.contains("push would delete 6 of 10 records, more than --max-delete 50%"))
        #expect(try await ws.rest.all().count == 10)
        #expect(try ws.run("push", "--max-delete", "70%").status == 0)
        #expect(try await ws.rest.all().count == 4)

        // The same rail on pull: the remote loses most documents.
        for i in 6..<10 { try await ws.rest.delete("m\(i)") }
        let pullRefused = try ws.run("pull")
        #expect(pullRefused.status == 4)
        #expect(ws.read("m9.json") != nil)
        #expect(try ws.run("pull", "--force").status == 0)
        #expect(try ws.recordFiles().isEmpty)
    }

    /// Listing queries with bodies return 300 documents, then up to 5,000 each (10,000 names
    /// without bodies); the next continues after the last name.
    @Test func listingMoreDocumentsThanOneQueryReturns() async throws {
        let ws = try workspace("paging")
        try await ws.rest.put((0..<5_321).map { (id: String(format: "p%05d", $0), fields: bookFields(String(format: "p%05d", $0))) })
        try ws.initialize()
        let pull = try ws.run("-v", "pull")
        #expect(pull.status == 0)
        #expect(try ws.recordFiles().count == 5_321)
        func queries(_ output: String) -> Int { output.split(separator: "\n").filter { $0.contains("POST ") && $0.contains(":runQuery") }.count }
        #expect(queries(pull.stderr) == 3, "\(pull.stderr)")  // 300 + 5,000 + 21
        try await ws.rest.put([(id: "p00007", fields: bookFields("p00007", title: "Changed"))])
        let status = try ws.run("-v", "status", "--short")
        #expect(status.stdout == " M p00007\n")
        #expect(queries(status.stderr) == 1)
        #expect(try ws.run("pull").status == 0)
        #expect(try ws.run("status", "--short").stdout.isEmpty)
    }

    @Test func nestedCollectionPath() async throws {
        let ws = try workspace("nested", collection: "users/u1/books")
        try ws.initialize()
        try ws.write("n1.json", bookFile("n1"))
        #expect(try ws.run("push").status == 0)
        let remote = try await ws.rest.all()
        #expect(Set(remote.keys) == ["n1"])
        let other = try Workspace(project: ws.project, host: ws.host, collection: "users/u1/books", name: "other", scratch: ws.scratch)
        try other.initialize()
        #expect(try other.run("pull").status == 0)
        #expect(other.read("n1.json") == bookFile("n1"))
    }

    @Test func hostileRemoteIdsStayInsideTheDirectory() async throws {
        let ws = try workspace("hostile")
        let ids = [".hidden", "a b", "100%", "ümlaut", "CON", "a\\b"]
        try await ws.rest.put(ids.map { (id: $0, fields: bookFields($0)) })
        try ws.initialize()
        let pull = try ws.run("pull")
        #expect(pull.status == 0, "\(pull.stdout)\(pull.stderr)")
        let names = Set(try ws.recordFiles().keys)
        #expect(names == ["%2Ehidden.json", "a%20b.json", "100%25.json", "%C3%BCmlaut.json", "CON.json", "a%5Cb.json"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: ws.scratch.path) == ["books"])
        #expect(try ws.run("status", "--short").stdout.isEmpty)
    }

    @Test func invalidRemoteDocumentIsReportedNotPulled() async throws {
        let ws = try workspace("invalidremote")
        try await ws.rest.put([(id: "ok", fields: bookFields("ok")), (id: "nogenre", fields: ["title": .string("T"), "author": .string("A")])])
        try ws.initialize()
        let pull = try ws.run("pull")
        #expect(pull.status == 1)
        #expect(pull.stdout.contains("invalid  remote nogenre: missing required field 'genre' (string) (not pulled)"))
        #expect(ws.read("ok.json") != nil)
        #expect(ws.read("nogenre.json") == nil)
    }
}
