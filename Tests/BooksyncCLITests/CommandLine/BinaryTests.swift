import Foundation
import Testing
import BooksyncTestSupport

/// Runs the built `booksync` executable as users do: real process, real exit status.
@Suite struct BinaryTests {
    /// The booksync executable built next to the test bundle.
    static let executable: String = {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            let candidate = url.path + "/booksync"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return ""
    }()

    typealias Output = ProgramOutput

    /// Runs `program` (the built booksync unless given) with this process's
    /// environment plus `environment`, or with `environment` alone when `cleanEnvironment`.
    static func run(_ arguments: [String], in directory: String, environment: [String: String] = [:],
                    program: String = executable, cleanEnvironment: Bool = false) throws -> Output {
        // No progress lines unless a test asks: a transfer slowed past two
        // seconds by a loaded machine would otherwise add lines to stderr.
        let quiet = ["BOOKSYNC_PROGRESS": "none"]
        return try runProgram(program, arguments, in: directory,
                              environment: cleanEnvironment ? environment : ProcessInfo.processInfo.environment.merging(quiet) { _, new in new }
                                  .merging(environment) { _, new in new })
    }

    @Test func executableWasBuilt() {
        #expect(!Self.executable.isEmpty, "booksync executable not found near \(CommandLine.arguments[0])")
    }

    @Test func versionAndExitCodes() throws {
        let scratch = try ScratchDirectory()
        let version = try Self.run(["--version"], in: scratch.path)
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("booksync "))
        // A build from a work tree; scripts/release checks that its build names the commit.
        #expect(version.stdout.hasSuffix(" (development build)\n"), "\(version.stdout)")

        let notCollection = try Self.run(["status", "--offline"], in: scratch.path)
        #expect(notCollection.status == 2)
        #expect(notCollection.stdout.isEmpty)
        #expect(notCollection.stderr.contains("not a booksync collection"))

        let root = try scratch.copyFixture("sample")
        // Without FIRESTORE_EMULATOR_HOST: the fixture's base records no target, so the emulator would get a state of its own.
        let status = try Self.run(["status", "--offline", "--short"], in: root, environment: ["NO_COLOR": "", "FIRESTORE_EMULATOR_HOST": ""])
        #expect(status.status == 1)
        #expect(status.stdout.split(separator: "\n").count == 6)
        #expect(!status.stdout.contains("\u{1B}["), "no colour when stdout is a pipe")

        let forced = try Self.run(["--color", "always", "status", "--offline", "--short"], in: root, environment: ["NO_COLOR": ""])
        #expect(forced.stdout.contains("\u{1B}[31m! \u{1B}[0m broken"))
        let noColor = try Self.run(["--color", "always", "status", "--offline", "--short"], in: root, environment: ["NO_COLOR": "1"])
        #expect(!noColor.stdout.contains("\u{1B}["))
    }

    /// `booksync` starts without Foundation; remote commands run in
    /// `booksync-network` beside it (see NetworkAccess).
    @Test func localCommandsDoNotLoadFoundation() throws {
        #if os(Linux)
        let ldd = Process()
        ldd.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ldd.arguments = ["ldd", Self.executable]
        let out = Pipe()
        ldd.standardOutput = out
        try ldd.run()
        let libraries = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ldd.waitUntilExit()
        #expect(libraries.contains("libc.so"), "ldd output: \(libraries)")
        #expect(!libraries.contains("Foundation"), "booksync links Foundation:\n\(libraries)")
        #expect(!libraries.contains("libcurl"))
        #endif
        // Linked statically, Foundation would not show in ldd: look for its symbols too.
        let binary = try Data(contentsOf: URL(fileURLWithPath: Self.executable))
        for module in ["$s10Foundation", "$s20FoundationEssentials", "$s20FoundationNetworking"] {
            #expect(binary.range(of: Data(module.utf8)) == nil, "booksync contains \(module) symbols")
        }
        #expect(FileManager.default.isExecutableFile(atPath: Self.executable + "-network"))
    }

    @Test func aMissingNetworkHelperIsReportedAndLocalCommandsStillWork() throws {
        let scratch = try ScratchDirectory()
        let alone = scratch.path + "/bin/booksync"
        try FileManager.default.createDirectory(atPath: scratch.path + "/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.executable, toPath: alone)
        let root = try scratch.copyFixture("sample")
        func run(_ arguments: [String], emulator: String = "127.0.0.1:9") throws -> Output {
            try Self.run(["-C", root] + arguments, in: scratch.path, environment: ["FIRESTORE_EMULATOR_HOST": emulator, "PATH": "/usr/bin:/bin"],
                         program: alone, cleanEnvironment: true)
        }
        // The fixture's base records no target: offline, origin's is compared only without the emulator variable.
        let offline = try run(["status", "--offline", "--short"], emulator: "")
        #expect(offline.status == 1)
        #expect(offline.stdout.split(separator: "\n").count == 6)
        let online = try run(["status"])
        #expect(online.status == 3)
        #expect(online.stdout.isEmpty)
        let bin = URL(fileURLWithPath: scratch.path + "/bin").resolvingSymlinksInPath().path
        #expect(online.stderr == "booksync: error: \(bin)/booksync-network is missing: remote commands run through it; install it beside booksync\n", "\(online.stderr)")
        // The hand-off is at the front door: right after parsing, before any
        // collection is looked for (a usage error still comes first).
        for arguments in [["pull"], ["push", "--dry-run"], ["clone", "--collection", "books"], ["verify"]] {
            let outside = try Self.run(arguments, in: scratch.path, environment: ["PATH": "/usr/bin:/bin"], program: alone, cleanEnvironment: true)
            #expect(outside.status == 3 && outside.stderr.contains("booksync-network is missing"), "\(arguments): \(outside.stderr)")
        }
        let usage = try Self.run(["pull", "--bogus"], in: scratch.path, environment: ["PATH": "/usr/bin:/bin"], program: alone, cleanEnvironment: true)
        #expect(usage.status == 2 && usage.stderr.contains("unknown option '--bogus'"), "\(usage.stderr)")
        // A value its option's kind refuses is a usage error of the parser, found before the hand-off too.
        let value = try Self.run(["push", "--max-delete", "200%"], in: scratch.path, environment: ["PATH": "/usr/bin:/bin"], program: alone, cleanEnvironment: true)
        #expect(value.status == 2 && value.stderr.contains("--max-delete takes a percentage from 0 to 100"), "\(value.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/books"), "clone created nothing before the hand-off")
    }
}
