import Foundation
import Testing
import BooksyncTestSupport

/// State files a stranger's clone commits (`.booksync/remotes.json`,
/// config.json), attacked through the built booksync as a user would meet
/// them (<doc:Safety>): each is refused with a sentence naming the file,
/// before any command does anything. No network: every command here is local.
@Suite struct ClonedStateFileTests {
    /// No emulator variable: with it set, a command picks a remote of its own accord.
    static let environment = ["FIRESTORE_EMULATOR_HOST": "", "NO_COLOR": "1"]

    /// A fresh collection of `books` in project `p`.
    static func collection(_ scratch: ScratchDirectory) throws -> String {
        let root = scratch.path + "/books"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let initialized = try BinaryTests.run(["-q", "init", "--firestore", "p", "--collection", "books"], in: root, environment: environment)
        #expect(initialized.status == 0, "\(initialized.stderr)")
        return root
    }

    /// `--remote emulator` is documented as the emulator's own state: a
    /// clone's remotes.json cannot make it production Firestore, with the
    /// endpoint named or left to its default.
    @Test(arguments: [#""endpoint": "production""#, #""state": "shared""#])
    func aClonedRemoteCalledEmulatorCannotBeProduction(setting: String) throws {
        let scratch = try ScratchDirectory()
        let root = try Self.collection(scratch)
        let remotes = #"{"version": 1, "remotes": {"emulator": {"project": "attacker-prod", "collection": "books", "# + setting + "}}}"
        try Data(remotes.utf8).write(to: URL(fileURLWithPath: root + "/.booksync/remotes.json"))
        for command in [["status", "--offline", "--remote", "emulator"], ["status", "--offline"], ["remote", "list"]] {
            let refused = try BinaryTests.run(command, in: root, environment: Self.environment)
            #expect(refused.status == 3, "\(command): \(refused.stdout) \(refused.stderr)")
            #expect(refused.stdout.isEmpty, "\(command): \(refused.stdout)")
            #expect(refused.stderr.contains(root + "/.booksync/remotes.json: remote 'emulator': the name 'emulator' is reserved for the Firestore emulator"),
                    "\(command): \(refused.stderr)")
        }
    }

    @Test func remoteAddEmulatorMustBeTheEmulator() throws {
        let scratch = try ScratchDirectory()
        let root = try Self.collection(scratch)
        for options in [["--firestore", "other"], [], ["--collection", "shelf", "--shared"]] {
            let refused = try BinaryTests.run(["remote", "add", "emulator"] + options, in: root, environment: Self.environment)
            #expect(refused.status == 2, "\(options): \(refused.stderr)")
            #expect(refused.stderr.contains("the name 'emulator' is reserved for the Firestore emulator (--remote emulator always means one); "
                + "add it with --emulator or --emulator-host HOST:PORT, or choose another name"), "\(options): \(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: root + "/.booksync/remotes.json"))
        let added = try BinaryTests.run(["remote", "add", "emulator", "--emulator-host", "127.0.0.1:8080"], in: root, environment: Self.environment)
        #expect(added.status == 0, "\(added.stderr)")
        let listed = try BinaryTests.run(["remote", "list"], in: root, environment: Self.environment)
        #expect(listed.stdout.contains("emulator\tfirestore p/(default) books (emulator 127.0.0.1:8080;"), "\(listed.stdout)")
    }
}
