import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// Targets and their sync states, end to end against two real emulators:
/// the one of `FIRESTORE_EMULATOR_HOST`, and a second one that scripts/test
/// starts (`BOOKSYNC_TEST_SECOND_EMULATOR_HOST`), reached through
/// `BOOKSYNC_FIRESTORE_URL` with a token as production would be.
@Suite struct RemotesEndToEndTests {
    static func secondHost() throws -> String {
        try TestEmulator.secondHost()
    }

    /// "Production": the second emulator behind a URL and a token, never the emulator variable.
    static func production(_ host: String) -> [String: String] {
        ["FIRESTORE_EMULATOR_HOST": "", "BOOKSYNC_FIRESTORE_URL": "http://\(host)/v1/", "BOOKSYNC_ACCESS_TOKEN": "owner", "NO_COLOR": "1"]
    }

    /// The issue's scenario: synced with production, switched to a fresh
    /// emulator with FIRESTORE_EMULATOR_HOST, back again. No file is lost or
    /// resurrected, production's documents do not change, and each command
    /// says which target it used.
    @Test func switchingToTheEmulatorAndBackLosesNothing() async throws {
        let emulator = try Emulator.requireHost()
        let productionHost = try Self.secondHost()
        let ws = try Workspace(project: Emulator.uniqueProject("switch"), host: emulator)
        let production = Self.production(productionHost)
        let onEmulator = production.merging(["FIRESTORE_EMULATOR_HOST": emulator]) { _, new in new }
        func run(_ environment: [String: String], _ arguments: String...) throws -> BinaryTests.Output {
            try BinaryTests.run(arguments, in: ws.root, environment: environment)
        }
        #expect(try run(production, "init", "--firestore", ws.project, "--collection", "books").status == 0)
        for id in ["b1", "b2", "b3", "b4", "b5"] { try ws.write("\(id).json", bookFile(id)) }
        let pushed = try run(production, "push")
        // Under load a create can time out after the server applied it: the
        // retry then finds the same content and records it (pushed 4, recorded 1).
        #expect(pushed.status == 0, "\(pushed.stdout) \(pushed.stderr)")
        for id in ["b1", "b2", "b3", "b4", "b5"] {
            #expect(pushed.stdout.contains("create   \(id)\n") || pushed.stdout.contains("record   \(id) (the remote already had this content)"),
                    "\(id): \(pushed.stdout) \(pushed.stderr)")
        }
        let productionREST = RESTClient(host: productionHost, project: ws.project, collection: "books")
        let before = try await productionREST.all().mapValues(\.revision)
        #expect(before.count == 5)
        let originManifest = ws.read(".booksync/manifest.json")
        #expect(originManifest?.contains("\"target\": \"http://\(productionHost)/v1/ projects/\(ws.project)/databases/(default)/documents/books\"") == true)

        // On the emulator: its own state; nothing is "deleted remotely".
        let status = try run(onEmulator, "status")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.hasPrefix("Comparing with remote 'emulator', firestore \(ws.project)/(default) books (emulator)"), "\(status.stdout)")
        #expect(status.stderr.contains("FIRESTORE_EMULATOR_HOST is set, so this uses the emulator's own sync state"), "\(status.stderr)")
        #expect(!status.stdout.contains("deleted"), "\(status.stdout)")
        #expect(status.stdout.contains("5 records: 5 local changes"), "\(status.stdout)")
        try ws.remove("b1.json")
        try ws.remove("b2.json")
        let pull = try run(onEmulator, "pull")
        #expect(pull.status == 0 && pull.stdout == "nothing to do\n", "\(pull.stdout) \(pull.stderr)")
        #expect(try Set(ws.recordFiles().keys) == ["b3.json", "b4.json", "b5.json"], "the emulator's empty state deletes nothing")
        try ws.write("b9.json", bookFile("b9"))
        let pushedToEmulator = try run(onEmulator, "push")
        #expect(pushedToEmulator.stdout.contains("pushed 4"), "\(pushedToEmulator.status): \(pushedToEmulator.stdout) \(pushedToEmulator.stderr)")
        #expect(try await ws.rest.all().keys.sorted() == ["b3", "b4", "b5", "b9"])
        #expect(ws.read(".booksync/manifest.json") == originManifest, "origin's base is untouched by the emulator's commands")

        // Back on production: b9 was never there, so it is a local addition, not a remote deletion.
        let back = try run(production, "status", "--short")
        #expect(back.stdout == "D  b1\nD  b2\nA  b9\n", "\(back.stdout) \(back.stderr)")
        let pullBack = try run(production, "pull")
        #expect(pullBack.status == 0, "\(pullBack.stderr)")
        #expect(try Set(ws.recordFiles().keys) == ["b3.json", "b4.json", "b5.json", "b9.json"])
        #expect(try await productionREST.all().mapValues(\.revision) == before, "no document changed on production")

        // Naming origin while the variable points at the emulator: refused, both targets named.
        let refused = try run(onEmulator, "status", "--remote", "origin")
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("was recorded against projects/\(ws.project)/databases/(default)/documents/books at http://\(productionHost)/v1/"), "\(refused.stderr)")
        #expect(refused.stderr.contains("but this command would use projects/\(ws.project)/databases/(default)/documents/books on the emulator"), "\(refused.stderr)")
    }

    /// A base recorded against one URL is not applied to another, and
    /// `remote forget` is the way out that loses nothing.
    @Test func anotherURLIsRefusedUntilTheBaseIsForgotten() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("otherurl"), host: try Emulator.requireHost())
        let first = Self.production(try Self.secondHost())
        let second = Self.production(ws.host)
        #expect(try BinaryTests.run(["init", "--firestore", ws.project, "--collection", "books"], in: ws.root, environment: first).status == 0)
        try ws.write("a.json", bookFile("a"))
        #expect(try BinaryTests.run(["push"], in: ws.root, environment: first).status == 0)
        let manifest = ws.read(".booksync/manifest.json")
        for command in [["status"], ["pull"], ["push"], ["diff"], ["verify"]] {
            let result = try BinaryTests.run(command, in: ws.root, environment: second)
            #expect(result.status == 4, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("booksync remote forget origin"), "\(command): \(result.stderr)")
        }
        #expect(ws.read(".booksync/manifest.json") == manifest)
        let forget = try BinaryTests.run(["remote", "forget", "origin"], in: ws.root, environment: second)
        #expect(forget.stdout.contains("forgot the base of 1 record"), "\(forget.stdout) \(forget.stderr)")
        let status = try BinaryTests.run(["status", "--short"], in: ws.root, environment: second)
        #expect(status.status == 0 && status.stdout == "A  a\n", "\(status.stdout) \(status.stderr)")
        #expect(ws.read("a.json") == bookFile("a"))
    }

    /// A pull that would delete every record because the target is empty is
    /// refused at any size; `--force` lets it through.
    @Test func anEmptiedTargetIsNamedNotMirrored() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("emptied"), host: try Emulator.requireHost())
        try ws.initialize()
        for id in ["x", "y"] { try ws.write("\(id).json", bookFile(id)) }
        #expect(try ws.run("push").status == 0)
        for id in ["x", "y"] { try await ws.rest.delete(id) }
        let refused = try ws.run("pull")
        #expect(refused.status == 4, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("has no documents, but the base of remote 'origin' records 2 synced records"), "\(refused.stderr)")
        #expect(refused.stderr.contains("'booksync seed'") && refused.stderr.contains("'booksync pull --force'"), "\(refused.stderr)")
        #expect(try ws.recordFiles().count == 2)
        // One of two remaining is an ordinary deletion.
        try await ws.rest.put([(id: "y", fields: bookFields("y"))])
        let partial = try ws.run("pull", "--theirs")
        #expect(partial.status == 0, "\(partial.stderr)")
        #expect(try Set(ws.recordFiles().keys) == ["y.json"])
        try await ws.rest.delete("y")
        #expect(try ws.run("pull").status == 4, "the last one too: the target is empty")
        #expect(try ws.run("pull", "--force").status == 0)
        #expect(try ws.recordFiles().isEmpty)
    }

    /// A named remote has its own state: pushing to it leaves origin's base
    /// byte for byte, and the remotes file admits only safe endpoints.
    @Test func aNamedRemoteKeepsItsOwnState() async throws {
        let second = try Self.secondHost()
        let ws = try Workspace(project: Emulator.uniqueProject("named"), host: try Emulator.requireHost())
        try ws.initialize()
        try ws.write("a.json", bookFile("a"))
        #expect(try ws.run("push").status == 0)
        let origin = ws.read(".booksync/manifest.json")
        let add = try ws.run("remote", "add", "other", "--emulator-host", second)
        #expect(add.status == 0, "\(add.stderr)")
        try ws.write("b.json", bookFile("b"))
        let push = try ws.run("push", "--remote", "other")
        #expect(push.stdout.contains("pushed 2"), "\(push.stdout) \(push.stderr)")
        #expect(push.stderr.contains("using remote 'other'"), "\(push.stderr)")
        #expect(ws.read(".booksync/manifest.json") == origin)
        #expect(ws.read(".booksync/local/other/manifest.json")?.contains("\"b\"") == true)
        #expect(ws.read(".booksync/local/.gitignore") == "*\n", "local states stay out of git")
        #expect(try ws.run("status", "--short", "--remote", "other").stdout == "")
        #expect(try ws.run("status", "--short").stdout == "A  b\n", "origin still has b to push")
        let list = try ws.run("remote")
        #expect(list.stdout.contains("other\tfirestore \(ws.project)/(default) books (emulator \(second); state .booksync/local/other, this machine only)"), "\(list.stdout)")

        #expect(try ws.run("remote", "add", "../x").status == 2)
        #expect(try ws.run("remote", "add", "origin").status == 2)
        #expect(try ws.run("remote", "add", "far", "--emulator-host", "10.0.0.1:8080").status == 2)
        #expect(try ws.run("status", "--remote", "nope").stderr.contains("no remote named 'nope'"))
        // A clone's remotes file that names another URL would receive the user's token: refused.
        try ws.write(".booksync/remotes.json", #"{"version": 1, "remotes": {"evil": {"project": "p", "collection": "books", "endpoint": "https://evil.example/v1/"}}}"#)
        let evil = try ws.run("push", "--remote", "evil")
        #expect(evil.status == 3 && evil.stderr.contains("never from a committed file"), "\(evil.stderr)")
    }

    /// A conflict stored with one remote is found from another: resolve
    /// names the remote that has it instead of saying there is none.
    @Test func resolvePointsAtTheRemoteThatHasTheConflict() async throws {
        let second = try Self.secondHost()
        let ws = try Workspace(project: Emulator.uniqueProject("resolvehint"), host: try Emulator.requireHost())
        try ws.initialize()
        #expect(try ws.run("remote", "add", "other", "--emulator-host", second).status == 0)
        try ws.write("a.json", bookFile("a"))
        #expect(try ws.run("push", "--remote", "other").status == 0)
        try await RESTClient(host: second, project: ws.project, collection: "books").put([(id: "a", fields: bookFields("a", title: "Theirs"))])
        try ws.write("a.json", bookFile("a", title: "Ours"))
        #expect(try ws.run("pull", "--remote", "other").status == 1, "a conflict is stored with 'other'")
        let resolve = try ws.run("resolve", "a")
        #expect(resolve.status == 1 && resolve.stderr.contains("'a' has no unresolved conflict; remote 'other' has one: booksync resolve --remote other a"),
                "\(resolve.stderr)")
        #expect(try ws.run("resolve", "--remote", "other", "--ours", "a").status == 0)
        #expect(try ws.run("resolve", "a").stderr.contains("(booksync pull detects and stores conflicts)"), "settled: no hint any more")
    }

    /// Seeding loads a fresh target from the files, records only that
    /// target's base, and two-way sync goes on from there.
    @Test func seedingLoadsAFreshTargetAndSyncGoesOn() async throws {
        let second = try Self.secondHost()
        let ws = try Workspace(project: Emulator.uniqueProject("seed"), host: try Emulator.requireHost())
        try ws.initialize()
        let ids = (0..<120).map { "s\($0)" }
        for id in ids { try ws.write("\(id).json", bookFile(id)) }
        try ws.write("broken.json", "{")
        #expect(try ws.run("push").status == 1, "the broken file is reported")
        let origin = ws.read(".booksync/manifest.json")
        #expect(try ws.run("remote", "add", "staging", "--emulator-host", second, "--shared").status == 2, "an emulator's state is never committed")
        #expect(try ws.run("remote", "add", "staging", "--emulator-host", second).status == 0)
        let staging = RESTClient(host: second, project: ws.project, collection: "books")
        try await staging.put([(id: "stale", fields: bookFields("stale")), (id: "s1", fields: bookFields("s1", title: "old"))])

        let dry = try ws.run("seed", "--remote", "staging", "--dry-run", "--delete")
        #expect(dry.stdout.contains("would delete   stale (no record file)") && dry.stdout.contains("would write    s1"), "\(dry.stdout)")
        #expect(try await staging.all().count == 2, "a dry run writes nothing")
        let seed = try ws.run("seed", "--remote", "staging", "--delete")
        #expect(seed.status == 1, "the broken file needs attention: \(seed.stderr)")
        #expect(seed.stdout.contains("invalid  broken.json"), "\(seed.stdout)")
        let documents = try await staging.all()
        #expect(documents.keys.sorted() == ids.sorted())
        #expect(documents["s1"]?.fields["title"] == .string("Title"), "overwritten whatever it held")
        #expect(ws.read(".booksync/manifest.json") == origin, "origin's base is untouched")
        #expect(ws.read(".booksync/local/.gitignore") == "*\n")
        #expect(try ws.run("status", "--short", "--remote", "staging").stdout == "!  broken\n")

        // Two-way from here: a remote edit pulls, a local edit pushes.
        try await staging.put([(id: "s2", fields: bookFields("s2", title: "edited there"))])
        try ws.write("s3.json", bookFile("s3", title: "edited here"))
        let sync = try ws.run("sync", "--remote", "staging")
        #expect(sync.stdout.contains("pull     s2.json") && sync.stdout.contains("update   s3"), "\(sync.stdout) \(sync.stderr)")
        #expect(try await staging.all()["s3"]?.fields["title"] == .string("edited here"))
    }

    /// What a hostile review found: each way a base could still reach
    /// another target, or state be written outside the collection.
    @Test func aBaseWithoutATargetIsNotGivenToTheEmulator() async throws {
        let emulator = try Emulator.requireHost()
        let productionHost = try Self.secondHost()
        let ws = try Workspace(project: Emulator.uniqueProject("legacy"), host: emulator)
        let production = Self.production(productionHost)
        let onEmulator = production.merging(["FIRESTORE_EMULATOR_HOST": emulator]) { _, new in new }
        #expect(try BinaryTests.run(["init", "--firestore", ws.project, "--collection", "books"], in: ws.root, environment: production).status == 0)
        for id in ["b1", "b2", "b3", "b4", "b5"] { try ws.write("\(id).json", bookFile(id)) }
        #expect(try BinaryTests.run(["push"], in: ws.root, environment: production).status == 0)
        // As an older booksync wrote it: no target line.
        let manifestPath = ".booksync/manifest.json"
        let legacy = try #require(ws.read(manifestPath)).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("  \"target\"") }.joined(separator: "\n")
        try ws.write(manifestPath, legacy)
        try await ws.rest.put(["b1", "b2"].map { (id: $0, fields: bookFields($0)) })
        let pull = try BinaryTests.run(["pull"], in: ws.root, environment: onEmulator)
        #expect(pull.status == 0 && !pull.stdout.contains("delete"), "\(pull.stdout) \(pull.stderr)")
        #expect(pull.stderr.contains("using remote 'emulator'"), "\(pull.stderr)")
        #expect(try ws.recordFiles().count == 5)
        #expect(ws.read(manifestPath) == legacy, "origin's base is not rebound to the emulator")
        let named = try BinaryTests.run(["pull", "--remote", "origin"], in: ws.root, environment: onEmulator)
        #expect(named.status == 4 && named.stderr.contains("a target an older booksync did not record"), "\(named.stderr)")
        // Production takes it as its own, as before.
        #expect(try BinaryTests.run(["status", "--short"], in: ws.root, environment: production).stdout == "")
    }

    @Test func anotherEmulatorIsAnotherTarget() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("twoemu"), host: try Emulator.requireHost())
        let second = try Self.secondHost()
        try ws.initialize()
        for id in ["b1", "b2", "b3", "b4", "b5"] { try ws.write("\(id).json", bookFile(id)) }
        #expect(try ws.run("push").status == 0)
        let secondREST = RESTClient(host: second, project: ws.project, collection: "books")
        try await secondREST.put(["b1", "b2", "b3"].map { (id: $0, fields: bookFields($0)) })
        let onSecond = ["FIRESTORE_EMULATOR_HOST": second, "NO_COLOR": "1"]
        let pull = try BinaryTests.run(["pull"], in: ws.root, environment: onSecond)
        #expect(pull.status == 0 && !pull.stdout.contains("delete"), "\(pull.stdout) \(pull.stderr)")
        #expect(try ws.recordFiles().count == 5, "the first emulator's base is not applied to the second")

        // A committed emulator host is used only when it is the one the user set.
        #expect(try ws.run("remote", "add", "mine", "--emulator-host", second).status == 0)
        try ws.write("b4.json", bookFile("b4", title: "changed"))
        let status = try ws.run("status")
        #expect(!status.stderr.contains("using remote"), "origin, synced with this emulator: \(status.stderr)")
        #expect(status.stdout.contains("modified:  b4.json"), "\(status.stdout)")
        #expect(try await secondREST.all().count == 3)
    }

    @Test func aLinkedStateFolderIsRefused() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("linkstate"), host: try Emulator.requireHost())
        try ws.initialize()
        try ws.write("a.json", bookFile("a"))
        let victim = ws.scratch.path + "/victim"
        try FileManager.default.createDirectory(atPath: victim, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: ws.root + "/.booksync/local", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: ws.root + "/.booksync/local/other", withDestinationPath: victim)
        #expect(try ws.run("remote", "add", "other", "--emulator-host", try Self.secondHost()).status == 0)
        for command in [["push", "--remote", "other"], ["seed", "--remote", "other"], ["status", "--remote", "other"]] {
            let result = try ws.run(command)
            #expect(result.status == 4, "\(command): \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim).isEmpty, "nothing written through the link")
    }

    /// The mass-delete guard refusing `seed --delete` names what it counts
    /// (the target's documents) and a command that, run as printed, does
    /// what was refused: with `--delete`, without which seed deletes nothing.
    @Test(arguments: [[], ["--remote", "emulator"]])
    func aRefusedSeedDeleteAdvisesACommandThatDeletes(remote: [String]) async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("seedguard"), host: try Emulator.requireHost())
        try ws.initialize()
        for id in ["a", "b"] { try ws.write("\(id).json", bookFile(id)) }
        try await ws.rest.put(["a", "b", "c", "d", "e", "f"].map { (id: $0, fields: bookFields($0)) })
        let refused = try ws.run(["seed", "--delete"] + remote)
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("seed --delete would delete 4 of the 6 documents in the target, more than --max-delete 50%"), "\(refused.stderr)")
        let advice = try #require(refused.stderr.components(separatedBy: "then run '").last?.components(separatedBy: "'").first)
        #expect(advice == (["booksync", "seed"] + remote + ["--delete", "--force"]).joined(separator: " "), "\(refused.stderr)")
        let forced = try ws.run(Array(advice.split(separator: " ").dropFirst().map(String.init)))
        #expect(forced.status == 0, "\(advice): \(forced.stderr)")
        #expect(try await ws.rest.all().keys.sorted() == ["a", "b"], "run as printed, it deletes what was refused")
    }

    @Test func seedNeedsTheTargetNamedUnlessItIsTheEmulator() async throws {
        let productionHost = try Self.secondHost()
        let ws = try Workspace(project: Emulator.uniqueProject("seedprod"), host: try Emulator.requireHost())
        let production = Self.production(productionHost)
        #expect(try BinaryTests.run(["init", "--firestore", ws.project, "--collection", "books"], in: ws.root, environment: production).status == 0)
        try ws.write("a.json", bookFile("a"))
        let refused = try BinaryTests.run(["seed"], in: ws.root, environment: production)
        #expect(refused.status == 2 && refused.stderr.contains("booksync seed --remote origin"), "\(refused.stderr)")
        let productionREST = RESTClient(host: productionHost, project: ws.project, collection: "books")
        #expect(try await productionREST.all().isEmpty)
        #expect(try BinaryTests.run(["seed", "--remote", "origin"], in: ws.root, environment: production).status == 0)
        #expect(try await productionREST.all().count == 1)
    }

    /// `.booksync/.gitignore` keeps stored conflicts out of git, and nothing else:
    /// a remote called `conflicts` is committed like any other.
    @Test func gitIgnoresConflictsButNotARemoteCalledConflicts() throws {
        let ws = try Workspace(project: Emulator.uniqueProject("ignore"), host: "127.0.0.1:9")
        try ws.initialize()
        let git = { (arguments: [String]) throws -> Int32 in
            try runProgram("/usr/bin/env", ["git"] + arguments, in: ws.root, environment: ProcessInfo.processInfo.environment).status
        }
        #expect(try git(["init", "-q"]) == 0)
        #expect(try git(["check-ignore", "-q", ".booksync/remotes/conflicts/manifest.json"]) == 1)
        #expect(try git(["check-ignore", "-q", ".booksync/remotes/staging/conflicts/a.json"]) == 0)
        #expect(try git(["check-ignore", "-q", ".booksync/conflicts/a.json"]) == 0)
        #expect(try git(["check-ignore", "-q", ".booksync/remotes/staging/manifest.json"]) == 1)
    }
}
