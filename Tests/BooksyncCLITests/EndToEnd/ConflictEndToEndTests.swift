import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Merges and conflicts end to end: two collection directories and a direct
/// REST writer change the same records in every combination; after the
/// documented commands all three agree and every change is either in the final
/// state or was reported as a conflict that resolve settled.
@Suite struct ConflictEndToEndTests {
    func workspaces(_ name: String) throws -> (Workspace, Workspace) {
        let a = try Workspace(project: Emulator.uniqueProject(name), host: try Emulator.requireHost(), name: "alice")
        let b = try Workspace(project: a.project, host: a.host, name: "bob", scratch: a.scratch)
        return (a, b)
    }

    func field(_ ws: Workspace, _ file: String, _ name: String) throws -> Value? {
        guard let text = ws.read(file) else { return nil }
        return try JSONParser.parseObject(Array(text.utf8))[name]
    }

    @Test func everyCombinationConvergesWithoutLosingAChange() async throws {
        let (alice, bob) = try workspaces("combos")
        let ids = ["merge", "clash", "del-mod", "mod-del", "same", "bob-del", "rest-add", "both-del"]
        try await alice.rest.put(ids.map { (id: $0, fields: bookFields($0, extra: ["year": .integer(2000)])) })
        try alice.initialize()
        try bob.initialize()
        #expect(try alice.run("pull").status == 0)
        #expect(try bob.run("pull").status == 0)

        // Alice edits locally.
        try alice.write("merge.json", bookFile("merge", title: "Alice title", extra: ["year": .integer(2000)]))
        try alice.write("clash.json", bookFile("clash", title: "Alice clash", extra: ["year": .integer(2000)]))
        try alice.remove("del-mod.json")
        try alice.write("mod-del.json", bookFile("mod-del", title: "Alice keeps", extra: ["year": .integer(2000)]))
        try alice.write("same.json", bookFile("same", title: "Same edit", extra: ["year": .integer(2000)]))
        try alice.write("new.json", bookFile("new", title: "Alice new"))
        try alice.remove("both-del.json")
        // Bob edits and pushes.
        try bob.write("clash.json", bookFile("clash", title: "Bob clash", extra: ["year": .integer(2000), "isbn": .string("b-1")]))
        try bob.remove("bob-del.json")
        try bob.write("new.json", bookFile("new", title: "Bob new"))
        #expect(try bob.run("push").status == 0)
        // An app writes directly.
        try await alice.rest.put([
            (id: "merge", fields: bookFields("merge", extra: ["year": .integer(2001)])),
            (id: "del-mod", fields: bookFields("del-mod", title: "App edit", extra: ["year": .integer(2000)])),
            (id: "same", fields: bookFields("same", title: "Same edit", extra: ["year": .integer(2000)])),
            (id: "rest-add", fields: bookFields("rest-add", title: "App update", extra: ["year": .integer(2000)])),
        ])
        try await alice.rest.delete("mod-del")
        try await alice.rest.delete("both-del")

        let status = try alice.run("status", "--short")
        #expect(status.stdout == """
             D bob-del
            == both-del
            UU clash
            DU del-mod
            MM merge
            UD mod-del
            AA new
             M rest-add
            == same

            """)

        let pull = try alice.run("pull")
        #expect(pull.status == 1, "conflicts need attention")
        #expect(pull.stdout.contains("merge    merge.json"))
        #expect(pull.stdout.contains("conflict clash.json: both modified (field 'title')"))
        #expect(pull.stdout.hasSuffix("pulled 2, merged 1, recorded 2, 4 conflicts\n"), "\(pull.stdout)")
        #expect(try field(alice, "merge.json", "title") == .string("Alice title"))
        #expect(try field(alice, "merge.json", "year") == .integer(2001))

        // Settle each conflict with a documented command.
        let diff = try alice.run("diff", "clash")
        #expect(diff.stdout.contains("isbn (changed remotely)"))
        #expect(try alice.run("resolve", "clash", "--ours").status == 0)  // our title, Bob's isbn kept
        #expect(try alice.run("resolve", "del-mod", "--theirs").status == 0)  // the app's edit wins over our delete
        #expect(try alice.run("resolve", "mod-del", "--ours").status == 0)  // our edit wins over the app's delete
        try alice.write("new.json", bookFile("new", title: "Alice and Bob new"))
        #expect(try alice.run("resolve", "new").status == 0)  // merged by hand
        let settled = try alice.run("status", "--short")
        #expect(settled.stdout == "M  clash\nM  merge\nA  mod-del\nM  new\n", "\(settled.stdout)")
        #expect(try alice.run("push").status == 0)
        #expect(try bob.run("pull").status == 0)

        // All three agree.
        let remote = try await alice.rest.all()
        #expect(try alice.recordFiles() == bob.recordFiles())
        #expect(Set(remote.keys) == Set(try alice.recordFiles().keys.map { String($0.dropLast(5)) }))
        for (id, document) in remote {
            #expect(alice.read(id + ".json") == String(decoding: CanonicalJSON.encode(document.fields, leadingKeys: RecordSchema.books.leadingKeys), as: UTF8.self), "\(id)")
        }
        // Every change is in the final state, or was a settled conflict.
        #expect(remote["merge"]?.fields["title"] == .string("Alice title"))
        #expect(remote["merge"]?.fields["year"] == .integer(2001))
        #expect(remote["clash"]?.fields["title"] == .string("Alice clash"))
        #expect(remote["clash"]?.fields["isbn"] == .string("b-1"))
        #expect(remote["del-mod"]?.fields["title"] == .string("App edit"))
        #expect(remote["mod-del"]?.fields["title"] == .string("Alice keeps"))
        #expect(remote["same"]?.fields["title"] == .string("Same edit"))
        #expect(remote["rest-add"]?.fields["title"] == .string("App update"))
        #expect(remote["new"]?.fields["title"] == .string("Alice and Bob new"))
        #expect(remote["bob-del"] == nil)
        #expect(remote["both-del"] == nil)
        #expect(try alice.run("status", "--short").stdout.isEmpty)
        #expect(try bob.run("status", "--short").stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: alice.root + "/.booksync/conflicts/clash.json"))
    }

    @Test func resolvedRecordBecomesAConflictAgainIfTheRemoteMovesOn() async throws {
        let (alice, _) = try workspaces("moveson")
        try await alice.rest.put([(id: "x", fields: bookFields("x"))])
        try alice.initialize()
        #expect(try alice.run("pull").status == 0)
        try alice.write("x.json", bookFile("x", title: "Ours"))
        try await alice.rest.put([(id: "x", fields: bookFields("x", title: "Theirs 1"))])
        #expect(try alice.run("pull").status == 1)
        #expect(try alice.run("resolve", "x", "--ours").status == 0)
        // The remote moves again before we push.
        try await alice.rest.put([(id: "x", fields: bookFields("x", title: "Theirs 2"))])
        let push = try alice.run("push")
        #expect(push.status == 1)
        #expect(push.stdout.contains("remote changed 'x' since your last pull"))
        #expect(try await alice.rest.all()["x"]?.fields["title"] == .string("Theirs 2"))
        #expect(try alice.run("status", "--short").stdout == "UU x\n")
    }

    /// `resolve --dry-run` says what it would do and changes nothing: the
    /// file, the base and the stored conflict stay byte for byte.
    @Test func aDryRunResolveWritesNothing() async throws {
        let (alice, _) = try workspaces("resolvedry")
        try await alice.rest.put([(id: "x", fields: bookFields("x"))])
        try alice.initialize()
        #expect(try alice.run("pull").status == 0)
        try alice.write("x.json", bookFile("x", title: "Ours"))
        try await alice.rest.put([(id: "x", fields: bookFields("x", title: "Theirs"))])
        #expect(try alice.run("pull").status == 1)
        let before = try alice.snapshot()
        for (flag, result) in [("--theirs", "with the remote version"), ("--ours", "with the local version")] {
            let dry = try alice.run("resolve", "--dry-run", flag, "x")
            #expect(dry.status == 0 && dry.stdout == "would resolve x.json \(result)\(flag == "--ours" ? "; booksync push publishes it" : "")\n", "\(dry.stdout)")
            #expect(dry.stderr == "dry run: nothing written\n", "\(dry.stderr)")
            #expect(try alice.snapshot() == before, "\(flag): nothing changed on disk")
        }
        #expect(try alice.run("status", "--short").stdout == "UU x\n")
        #expect(try alice.run("resolve", "--theirs", "x").stdout == "resolved x.json with the remote version\n")
    }

    /// `fmt --dry-run` names the files it would rewrite, rewrites none, and
    /// exits as the real run would.
    @Test func aDryRunFmtWritesNothing() throws {
        let (alice, _) = try workspaces("fmtdry")
        try alice.initialize()
        try alice.write("a.json", #"{"id": "a", "title": "T", "author": "A", "genre": "g"}"#)
        try alice.write("b.json", bookFile("b"))
        let before = try alice.snapshot()
        let dry = try alice.run("fmt", "--dry-run")
        #expect(dry.status == 0 && dry.stdout == "would format a.json\n", "\(dry.stdout) \(dry.stderr)")
        #expect(dry.stderr == "dry run: nothing written; 2 files checked, 1 would be formatted, 0 could not be parsed\n", "\(dry.stderr)")
        #expect(try alice.snapshot() == before)
        #expect(try alice.run("fmt", "--check", "--dry-run").status == 2)
        #expect(try alice.run("fmt").stdout == "formatted a.json\n")
    }

    @Test func pullTheirsAndOursSettleOnlyConflictingFields() async throws {
        let (alice, _) = try workspaces("oursTheirs")
        try await alice.rest.put([(id: "t", fields: bookFields("t", extra: ["year": .integer(1)])), (id: "o", fields: bookFields("o", extra: ["year": .integer(1)]))])
        try alice.initialize()
        #expect(try alice.run("pull").status == 0)
        for id in ["t", "o"] {
            try alice.write("\(id).json", bookFile(id, title: "Local", extra: ["year": .integer(1), "note": .string("local only")]))
        }
        try await alice.rest.put([
            (id: "t", fields: bookFields("t", title: "Remote", extra: ["year": .integer(2)])),
            (id: "o", fields: bookFields("o", title: "Remote", extra: ["year": .integer(2)])),
        ])
        let conflicts = try alice.run("pull", "--dry-run")
        #expect(conflicts.stdout.contains("conflict t.json"))
        // Only t with --theirs: write each separately by resolving o afterwards.
        #expect(try alice.run("pull", "--theirs").status == 0)
        #expect(try field(alice, "t.json", "title") == .string("Remote"))
        #expect(try field(alice, "t.json", "year") == .integer(2))
        #expect(try field(alice, "t.json", "note") == .string("local only"))
        #expect(try alice.run("push").status == 0)
        let remote = try await alice.rest.all()
        #expect(remote["t"]?.fields["note"] == .string("local only"))
        #expect(remote["t"]?.fields["title"] == .string("Remote"))
    }
}

/// booksync as git's merge driver, in a real repository.
@Suite struct GitMergeDriverTests {
    func git(_ args: String..., in dir: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + args
        process.currentDirectoryURL = URL(fileURLWithPath: dir)
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = URL(fileURLWithPath: BinaryTests.executable).deletingLastPathComponent().path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        env["GIT_AUTHOR_NAME"] = "t"; env["GIT_AUTHOR_EMAIL"] = "t@example.invalid"
        env["GIT_COMMITTER_NAME"] = "t"; env["GIT_COMMITTER_EMAIL"] = "t@example.invalid"
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func branchesEditingDifferentFieldsMergeCleanly() throws {
        let scratch = try ScratchDirectory()
        let repo = scratch.path
        #expect(try git("init", "-q", "-b", "main", in: repo).0 == 0)
        let books = repo + "/books"
        try FileManager.default.createDirectory(atPath: books, withIntermediateDirectories: true)
        let initialize = try BinaryTests.run(["init", "--firestore", "p", "--collection", "books", "--git"], in: books)
        #expect(initialize.status == 0, "\(initialize.stderr)")
        #expect(try String(contentsOfFile: books + "/.gitattributes", encoding: .utf8)
            == "/*.json merge=booksync\n/.booksync/manifest.json merge=booksync-manifest\n")
        #expect(try git("config", "merge.booksync.driver", in: repo).1 == "booksync merge-file -- %O %A %B %P\n")

        let original = bookFile("dune", title: "Dune", extra: ["year": .integer(1965), "pages": .integer(412)])
        try original.write(toFile: books + "/dune.json", atomically: true, encoding: .utf8)
        _ = try git("add", "-A", in: repo)
        #expect(try git("commit", "-qm", "base", in: repo).0 == 0)
        _ = try git("checkout", "-qb", "title", in: repo)
        try bookFile("dune", title: "Dune (1965)", extra: ["year": .integer(1965), "pages": .integer(412)]).write(toFile: books + "/dune.json", atomically: true, encoding: .utf8)
        #expect(try git("commit", "-qam", "title", in: repo).0 == 0)
        _ = try git("checkout", "-q", "main", in: repo)
        try bookFile("dune", title: "Dune", extra: ["year": .integer(1965), "pages": .integer(896)]).write(toFile: books + "/dune.json", atomically: true, encoding: .utf8)
        #expect(try git("commit", "-qam", "pages", in: repo).0 == 0)

        let merge = try git("merge", "--no-edit", "title", in: repo)
        #expect(merge.0 == 0, "git merge failed: \(merge.1)")
        #expect(try String(contentsOfFile: books + "/dune.json", encoding: .utf8)
            == bookFile("dune", title: "Dune (1965)", extra: ["year": .integer(1965), "pages": .integer(896)]))
    }

    @Test func mergeFileReportsConflictsAndKeepsOurs() throws {
        let scratch = try ScratchDirectory()
        let base = scratch.path + "/base", ours = scratch.path + "/ours", theirs = scratch.path + "/theirs"
        try bookFile("x", title: "Base", extra: ["year": .integer(1)]).write(toFile: base, atomically: true, encoding: .utf8)
        try bookFile("x", title: "Ours", extra: ["year": .integer(1)]).write(toFile: ours, atomically: true, encoding: .utf8)
        try bookFile("x", title: "Theirs", extra: ["year": .integer(2)]).write(toFile: theirs, atomically: true, encoding: .utf8)
        let result = try BinaryTests.run(["merge-file", base, ours, theirs], in: scratch.path)
        #expect(result.status == 1)
        #expect(result.stderr.contains("conflicting field 'title' (kept ours)"))
        #expect(try String(contentsOfFile: ours, encoding: .utf8) == bookFile("x", title: "Ours", extra: ["year": .integer(2)]))

        // Not JSON on one side: git's line merge takes over, with conflict markers.
        try "not json\n".write(toFile: theirs, atomically: true, encoding: .utf8)
        let fallback = try BinaryTests.run(["merge-file", base, ours, theirs], in: scratch.path)
        #expect(fallback.status == 1)
        #expect(fallback.stderr.contains("falling back to git's line merge"))
        #expect(try String(contentsOfFile: ours, encoding: .utf8).contains("<<<<<<< ours"))
    }
}
