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

    /// A clone's state files at each cap and one past it (<doc:CollectionFormat>):
    /// `body(n)` is the file with `n` of what is capped. At the cap every
    /// command that reads the file (all read config.json; those that choose
    /// a remote read remotes.json) works; past it, each refuses with the
    /// sentence, naming the file. (`scripts/check-state-caps.py` times them.)
    static let caps: [(file: String, cap: Int, body: @Sendable (Int) -> String, refusal: String)] = [
        ("config.json", 4 << 20, { size in padded(#"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "books"}}"#, size) },
         "the file is larger than 4 MiB, the most booksync reads of it"),
        ("remotes.json", 1 << 20, { size in padded(#"{"version": 1, "remotes": {}}"#, size) },
         "the file is larger than 1 MiB, the most booksync reads of it"),
        ("remotes.json", 1_000, { count in
            #"{"version": 1, "remotes": {"# + (0..<count).map { #""r\#($0)": {"project": "p", "collection": "books"}"# }.joined(separator: ", ") + "}}"
        }, "remotes are defined; booksync reads at most 1000"),
        ("config.json", 10_000, { count in
            #"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "books"}, "schema": {"required": [{"name": "g", "type": "string", "enum": ["#
                + (0..<count).map { "\"v\($0)\"" }.joined(separator: ", ") + "]}]}}"
        }, #"schema.required field 'g': "enum" lists 10001 values; booksync takes at most 10000"#),
    ]

    static func padded(_ text: String, _ size: Int) -> String { text + String(repeating: " ", count: size - text.utf8.count) }

    static let choosingARemote = [["status", "--offline"], ["remote", "list"], ["diff", "--offline"]]
    static let commands = choosingARemote + [["validate"], ["fmt", "--check"], ["schema", "--check"]]

    @Test(arguments: caps)
    func everyCommandReadsAtTheCapAndRefusesPastIt(_ cap: (file: String, cap: Int, body: @Sendable (Int) -> String, refusal: String)) throws {
        let scratch = try ScratchDirectory()
        let root = try Self.collection(scratch)
        let path = root + "/.booksync/" + cap.file
        for (count, refused) in [(cap.cap, false), (cap.cap + 1, true)] {
            try Data(cap.body(count).utf8).write(to: URL(fileURLWithPath: path))
            for command in Self.commands {
                let run = try BinaryTests.run(command, in: root, environment: Self.environment)
                let readsFile = cap.file == "config.json" || Self.choosingARemote.contains(command)
                if refused && readsFile {
                    #expect(run.status == 3 && run.stderr.contains(path + ": ") && run.stderr.contains(cap.refusal),
                            "\(cap.file) \(count): \(command): \(run.status) \(run.stderr)")
                } else {
                    #expect(run.status <= 1 && !run.stderr.contains(path + ": "), "\(cap.file) \(count): \(command): \(run.status) \(run.stderr)")
                }
            }
        }
    }
}

/// A clone's config.json `"scope"` (<doc:WholeProject>): untrusted like the
/// rest of the file. What it says reaches the terminal escaped, and one too
/// long or too deep is refused with a sentence naming the file.
@Suite struct ClonedScopeTests {
    static func config(_ scope: String) -> String {
        #"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "books"}, "scope": "# + scope + "}"
    }

    @Test func aScopesTextReachesTheTerminalEscaped() throws {
        let scratch = try ScratchDirectory()
        let root = try ClonedStateFileTests.collection(scratch)
        // ESC [2J (clear the screen) and a right-to-left override in a value:
        // raw in the scope's text (refused: a JSON string holds no raw control
        // character), then escaped in its literal (a valid scope, shown escaped).
        try Data(Self.config(#""genre == \"\u001b[2J\u202esf\"""#).utf8).write(to: URL(fileURLWithPath: root + "/.booksync/config.json"))
        let raw = try BinaryTests.run(["status", "--offline"], in: root, environment: ClonedStateFileTests.environment)
        #expect(raw.status == 3 && raw.stderr.contains("config.json: scope: column"), "\(raw.stderr)")
        #expect(!(raw.stdout + raw.stderr).unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" }, "\(raw.stderr)")
        try Data(Self.config(#""genre == \"\\u001b[2J\u202esf\"""#).utf8).write(to: URL(fileURLWithPath: root + "/.booksync/config.json"))
        try Data(#"{"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "fiction"}"#.utf8)
            .write(to: URL(fileURLWithPath: root + "/dune.json"))
        for command in [["validate"], ["status", "--offline"]] {
            let result = try BinaryTests.run(command, in: root, environment: ClonedStateFileTests.environment)
            let output = result.stdout + result.stderr
            #expect(!output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" }, "\(command): \(output)")
        }
        let validate = try BinaryTests.run(["validate"], in: root, environment: ClonedStateFileTests.environment)
        #expect(validate.stdout.contains("dune.json: warning: does not match the scope"), "\(validate.stdout)")
        let status = try BinaryTests.run(["status", "--offline", "--short"], in: root, environment: ClonedStateFileTests.environment)
        #expect(status.stdout == "O  dune\n", "\(status.stdout)")
    }

    @Test(arguments: [
        (String(repeating: "(", count: 40) + "a == 1" + String(repeating: ")", count: 40), "scope: column"),
        ((0..<600).map { "f\($0) == 1" }.joined(separator: " and "), "scope: "),
        ("\"rating >= \"", "scope: column 11: expected a value"),
    ])
    func aScopeBeyondItsBoundsIsRefusedNamingTheFile(scope: String, message: String) throws {
        let scratch = try ScratchDirectory()
        let root = try ClonedStateFileTests.collection(scratch)
        let quoted = scope.hasPrefix("\"") ? scope : "\"" + scope + "\""
        try Data(Self.config(quoted).utf8).write(to: URL(fileURLWithPath: root + "/.booksync/config.json"))
        let refused = try BinaryTests.run(["status", "--offline"], in: root, environment: ClonedStateFileTests.environment)
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains(root + "/.booksync/config.json: " + message), "\(refused.stderr)")
    }
}
