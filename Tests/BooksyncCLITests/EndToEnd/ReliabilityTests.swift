import Foundation
import Testing
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Edge cases that once lost data or blocked syncing, end to end against the emulator.
@Suite struct ReliabilityTests {
    func workspace(_ name: String) throws -> Workspace {
        try Workspace(project: Emulator.uniqueProject(name), host: try Emulator.requireHost())
    }

    @Test func freshCloneWithoutBaseDirectoryCanPush() async throws {
        let ws = try workspace("nobase")
        try ws.initialize()
        // git keeps no empty directories: a clone of a never-synced collection has no base/.
        try FileManager.default.removeItem(atPath: ws.root + "/.booksync/base")
        try ws.write("dune.json", bookFile("dune"))
        let push = try ws.run("push")
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        #expect(try ws.run("status", "--short").stdout.isEmpty)
    }

    @Test func longIdsSyncBothWays() async throws {
        let ws = try workspace("longids")
        let long = String(repeating: "x", count: 240)
        let longUnicode = String(repeating: "é", count: 41)  // 246 bytes encoded
        try ws.initialize()
        for id in [long, longUnicode, "r1", "r2"] { try ws.write(try RecordID(id).fileName, bookFile(id)) }
        let push = try ws.run("push")
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        try await ws.rest.put([(id: long, fields: bookFields(long, title: "Remote"))])
        let pull = try ws.run("pull")
        #expect(pull.status == 0, "\(pull.stdout)\(pull.stderr)")
        #expect(ws.read(long + ".json") == bookFile(long, title: "Remote"))
        #expect(try ws.run("status", "--short").stdout.isEmpty)
    }

    @Test func idsDifferingOnlyByNormalizationStayDistinct() async throws {
        let ws = try workspace("nfc")
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        try await ws.rest.put([(id: composed, fields: bookFields(composed, title: "one")), (id: decomposed, fields: bookFields(decomposed, title: "two"))])
        try ws.initialize()
        #expect(try ws.run("pull").status == 0)
        #expect(Set(try ws.recordFiles().keys) == ["caf%C3%A9.json", "cafe%CC%81.json"])
        try ws.write("cafe%CC%81.json", bookFile(decomposed, title: "two, edited"))
        #expect(try ws.run("push").stdout.hasSuffix("pushed 1\n"))
        let remote = try await ws.rest.documents()
        #expect(remote.count == 2)
        #expect(remote.first { $0.id.utf8.elementsEqual(composed.utf8) }?.fields["title"] == .string("one"))
        #expect(remote.first { $0.id.utf8.elementsEqual(decomposed.utf8) }?.fields["title"] == .string("two, edited"))
    }

    @Test func refusedAtomicCommitNamesTheConflictAndLeavesTheRestUnwritten() async throws {
        let ws = try workspace("atomic")
        try ws.initialize()
        for id in ["a", "b", "c"] { try ws.write("\(id).json", bookFile(id)) }
        #expect(try ws.run("push").status == 0)
        try await ws.rest.put([(id: "b", fields: bookFields("b", title: "Remote"))])
        for id in ["a", "b", "c"] { try ws.write("\(id).json", bookFile(id, title: "Local")) }
        let push = try ws.run("push", "--atomic")
        #expect(push.status == 1)
        #expect(push.stdout.contains("remote changed 'b' since your last pull"))
        #expect(push.stdout.contains("rejected a: not written: the --atomic commit was refused"))
        let remote = try await ws.rest.all()
        #expect(remote["a"]?.fields["title"] == .string("Title"))
        #expect(remote["b"]?.fields["title"] == .string("Remote"))
    }

    /// More writes than one commit takes: refused before anything is sent,
    /// by the dry run as by the real run, with the same safety-rail exit code.
    @Test func anOversizedAtomicPushIsRefusedAndSoIsItsDryRun() async throws {
        let ws = try workspace("atomiclimit")
        try ws.initialize()
        for n in 0..<501 { try ws.write("b\(n).json", bookFile("b\(n)")) }
        for arguments in [["push", "--atomic", "--dry-run"], ["push", "--atomic"]] {
            let push = try ws.run(arguments)
            #expect(push.status == 4, "\(arguments): \(push.stdout.suffix(200)) \(push.stderr)")
            #expect(push.stderr.contains("push --atomic would send 501 writes in one commit, and Firestore takes at most 500; nothing was sent"),
                    "\(push.stderr)")
            #expect(!push.stdout.contains("pushed"))
        }
        #expect(try await ws.rest.all().isEmpty)
        try ws.remove("b500.json")
        #expect(try ws.run("push", "--atomic").stdout.hasSuffix("pushed 500\n"))
    }

    /// More bytes than one commit takes (12 documents of about 900 KB): refused
    /// before anything is sent, by the dry run as by the real run, with the
    /// safety-rail exit code, not as a remote failure.
    @Test func anAtomicPushOverTheRequestSizeIsRefusedAndSoIsItsDryRun() async throws {
        let ws = try workspace("atomicbytes")
        try ws.initialize()
        let blurb = String(repeating: "x", count: 900_000)
        for n in 0..<12 {
            try ws.write("b\(n).json", """
                {"id": "b\(n)", "title": "T", "author": "A", "genre": "g", "blurb": "\(blurb)"}

                """)
        }
        for arguments in [["push", "--atomic", "--dry-run"], ["push", "--atomic"]] {
            let push = try ws.run(arguments)
            #expect(push.status == 4, "\(arguments): \(push.stdout.suffix(200)) \(push.stderr)")
            #expect(push.stderr.contains("push --atomic would send 10") && push.stderr.contains("KiB in one commit"),
                    "\(push.stderr)")
            #expect(push.stderr.contains("nothing was sent"), "\(push.stderr)")
            #expect(!push.stdout.contains("pushed"))
        }
        #expect(try await ws.rest.all().isEmpty)
        // Without --atomic the same files go in several requests. On a loaded
        // machine an answer can come too late for its request: the retry then
        // finds the document written with this content and records it
        // ("the remote already had this content"), which is as good a push.
        // So what is checked is the remote, not which of the two words.
        let push = try ws.run("push")
        #expect(push.status == 0, "exit \(push.status): \(push.stdout.suffix(300)) \(push.stderr)")
        let remote = try await ws.rest.all()
        #expect(remote.count == 12, "\(remote.keys.sorted())")
        #expect(remote.values.allSatisfy { $0.fields["blurb"] == .string(blurb) })
        let again = try ws.run("push")
        #expect(again.status == 0 && !again.stdout.contains("pushed"), "a second push found something left to send: \(again.stdout)")
    }

    @Test func secondCommandIsRefusedWhileTheLockIsHeld() throws {
        let ws = try workspace("lock")
        try ws.initialize()
        // Hold the lock from this process, as a long pull would.
        let lock = try CollectionLock.acquire(at: ws.root + "/.booksync/lock")
        let refused = try ws.run("push")
        #expect(refused.status == 4)
        #expect(refused.stderr.contains("another booksync (pid \(getpid())) is working in this collection"))
        lock.release()
        // A killed holder leaves its PID; the next command takes over with a notice.
        try "2147483646\n".write(toFile: ws.root + "/.booksync/lock", atomically: false, encoding: .utf8)
        try ws.write(".booksync-tmp-2147483646-1", "half-written")
        let push = try ws.run("push")
        #expect(push.status == 0)
        #expect(push.stderr.contains("took over a lock left by process 2147483646"))
        #expect(ws.read(".booksync-tmp-2147483646-1") == nil, "stale temporary files are removed")
    }

    @Test func tokensNeverAppearInOutput() async throws {
        let ws = try workspace("secrets")
        try ws.initialize()
        try ws.write("dune.json", bookFile("dune"))
        let secret = "s3cr3t-token-\(UUID().uuidString)"
        // The emulator refuses tokens that are not JWTs: every command fails, and says so without the token.
        let environment = ["FIRESTORE_EMULATOR_HOST": "", "BOOKSYNC_FIRESTORE_URL": "http://\(ws.host)/v1/", "BOOKSYNC_ACCESS_TOKEN": secret]
        for arguments in [["-v", "status"], ["-v", "push"], ["-v", "pull"], ["diff", "--json"], ["-v", "sync", "--dry-run"]] {
            let result = try BinaryTests.run(arguments, in: ws.root, environment: environment)
            #expect(result.status == 3, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("INVALID_ARGUMENT"), "\(arguments): \(result.stderr)")
            #expect(!(result.stdout + result.stderr).contains(secret), "token printed by \(arguments)")
        }
        // A token from the user's token command: same.
        let viaCommand = try BinaryTests.run(["-v", "push"], in: ws.root, environment: [
            "FIRESTORE_EMULATOR_HOST": "", "BOOKSYNC_FIRESTORE_URL": "http://\(ws.host)/v1/", "BOOKSYNC_TOKEN_COMMAND": "echo \(secret)-cmd",
        ])
        #expect(viaCommand.status == 3, "\(viaCommand.stderr)")
        #expect(!(viaCommand.stdout + viaCommand.stderr).contains(secret + "-cmd"))
        // Plain HTTP to anything but loopback is refused before any request.
        let remoteHTTP = try BinaryTests.run(["status"], in: ws.root, environment: ["FIRESTORE_EMULATOR_HOST": "", "BOOKSYNC_FIRESTORE_URL": "http://example.com/v1/", "BOOKSYNC_ACCESS_TOKEN": secret])
        #expect(remoteHTTP.status == 3)
        #expect(remoteHTTP.stderr.contains("refusing plain HTTP to example.com"))
    }

    @Test func remoteIdsThatCannotBeFilesAreReportedAndTheRestPulled() async throws {
        let ws = try workspace("badids")
        let tooLong = String(repeating: "z", count: 300)
        try await ws.rest.put([(id: tooLong, fields: bookFields(tooLong)), (id: "Dune", fields: bookFields("Dune")), (id: "dune", fields: bookFields("dune"))])
        try ws.initialize()
        let pull = try ws.run("pull")
        #expect(pull.status == 1)
        #expect(pull.stdout.contains("encodes to a 300-byte file name; file systems allow 255 bytes with '.json' (not pulled)"))
        // Ids that differ only by case are two records (on a case-sensitive file system).
        #expect(ws.read("Dune.json") == bookFile("Dune"))
        #expect(ws.read("dune.json") == bookFile("dune"))
        #expect(try ws.run("status", "--short").stdout == " ! \(tooLong)\n")
    }
}
