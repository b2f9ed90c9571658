import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Token commands: only from the user, bounded in time, their complaints shown.
@Suite struct TokenCommandTests {
    @Test func aCommandThatHangsIsStoppedWithItsWholeProcessGroup() async throws {
        let scratch = try ScratchDirectory()
        let pidFile = scratch.path + "/pid"
        let started = ContinuousClock.now
        let tokens = AccessTokens(source: .command("sleep 30 & echo $! > \(pidFile); wait"), commandTimeout: 1)
        await #expect(throws: RemoteError.authentication("the token command 'sleep 30 & echo $! > \(pidFile); wait' (from BOOKSYNC_TOKEN_COMMAND) printed no token within 1 s and was stopped; run it by hand to see what it waits for (BOOKSYNC_REQUEST_TIMEOUT sets the limit)")) {
            try await tokens.token()
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        let pid = try #require(Int32(try scratch.read("pid").trimmingCharacters(in: .whitespacesAndNewlines)))
        // The background sleep was in the command's process group: killed with it.
        var gone = false
        for _ in 0..<100 where !gone {
            gone = Self.isDead(pid)
            if !gone { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(gone, "sleep \(pid) outlived the timeout")
    }

    /// No such process, or a zombie (killed, not yet reaped by init, which may be slow in a container).
    static func isDead(_ pid: Int32) -> Bool {
        if kill(pid, 0) != 0 { return true }
        #if os(Linux)
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
        #else
        // No /proc: ps names a zombie's state with a Z too.
        let ps = Process()
        ps.executableURL = URL(fileURLWithPath: "/bin/ps")
        ps.arguments = ["-o", "stat=", "-p", String(pid)]
        let pipe = Pipe()
        ps.standardOutput = pipe
        guard (try? ps.run()) != nil else { return false }
        ps.waitUntilExit()
        let state = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return state.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("Z")
        #endif
    }

    /// The command starts with no signal blocked, whatever the calling thread
    /// blocks: a shell that inherited a blocked SIGCHLD never returns from `wait`.
    @Test func aCommandStartsWithTheSignalsOfAFreshProcess() async throws {
        let started = ContinuousClock.now
        #expect(try await AccessTokens(source: .command("sleep 0.1 & wait; echo waited"), commandTimeout: 5).token() == "waited")
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    /// Its lines joined into the one-line message (control characters are
    /// escaped at the console gate, as in every message: see TokenSafetyTests).
    @Test func failingCommandShowsItsStandardError() async {
        let command = "printf 'ERROR: no credentials\\r\\n\\n  run: gcloud auth login\\n' >&2; exit 1"
        let tokens = AccessTokens(source: .command(command), commandTimeout: 5)
        await #expect(throws: RemoteError.authentication(
            "the token command '\(command)' (from BOOKSYNC_TOKEN_COMMAND) failed (exit 1): ERROR: no credentials run: gcloud auth login")) {
            try await tokens.token()
        }
    }

    @Test(arguments: [
        ("printf ''", "printed no token"), ("echo two words", "printed more than one word"), ("exit 3", "failed (exit 3)"),
        ("kill -9 $$", "failed (exit 137)"),
    ])
    func unusableOutputIsAClearError(command: String, says: String) async {
        await #expect(throws: RemoteError.authentication("the token command '\(command)' (from BOOKSYNC_TOKEN_COMMAND) \(says)")) {
            try await AccessTokens(source: .command(command), commandTimeout: 5).token()
        }
    }

    /// Parallel requests do not each run a failing command again.
    @Test func aFailureIsRememberedNotRetriedByEveryRequest() async throws {
        let scratch = try ScratchDirectory()
        let tokens = AccessTokens(source: .command("echo run >> \(scratch.path)/runs; exit 1"), commandTimeout: 5)
        for _ in 0..<3 { _ = try? await tokens.token() }
        #expect(try scratch.read("runs") == "run\n")
    }

    @Test func subprocessCaptureSeparatesOutputErrorAndStatus() {
        let result = Subprocess.capture(["/bin/sh", "-c", "echo out; echo err >&2; exit 4"], timeout: 5)
        #expect(result == Subprocess.Captured(status: 4, output: Array("out\n".utf8), error: Array("err\n".utf8)))
        // A program that exits but leaves a child holding its output open does not make the caller wait for the child.
        let started = ContinuousClock.now
        let leaving = Subprocess.capture(["/bin/sh", "-c", "echo tok; sleep 3 &"], timeout: 10)
        #expect(leaving.status == 0 && leaving.output == Array("tok\n".utf8))
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(Subprocess.capture(["booksync-no-such-program-\(UInt32.random(in: 0...UInt32.max))"], timeout: 1).status == 127)
    }
}

/// Where credentials come from: the environment, then the user's config file;
/// never the collection.
@Suite struct CredentialSourceTests {
    func userConfig(_ text: String?) throws -> (ScratchDirectory, [String: String]) {
        let scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path + "/xdg/booksync", withIntermediateDirectories: true)
        if let text { try scratch.write("xdg/booksync/config.json", text) }
        return (scratch, ["XDG_CONFIG_HOME": scratch.path + "/xdg", "HOME": scratch.path + "/home"])
    }

    @Test func userConfigNamesTheTokenCommand() async throws {
        let (scratch, environment) = try userConfig(#"{"tokenCommand": "echo from-user-config"}"#)
        let endpoint = try FirestoreEndpoint.resolve(environment: environment, transport: nil)
        #expect(try await endpoint.tokens.token() == "from-user-config")
        // The environment comes first: BOOKSYNC_ACCESS_TOKEN, then BOOKSYNC_TOKEN_COMMAND.
        let fromVariable = try FirestoreEndpoint.resolve(environment: environment.merging(["BOOKSYNC_TOKEN_COMMAND": "echo from-variable"]) { $1 }, transport: nil)
        #expect(try await fromVariable.tokens.token() == "from-variable")
        let fixed = try FirestoreEndpoint.resolve(environment: environment.merging(["BOOKSYNC_TOKEN_COMMAND": "echo x", "BOOKSYNC_ACCESS_TOKEN": "tok"]) { $1 }, transport: nil)
        #expect(try await fixed.tokens.token() == "tok")
        // HOME/.config when XDG_CONFIG_HOME is unset.
        try FileManager.default.createDirectory(atPath: scratch.path + "/home/.config/booksync", withIntermediateDirectories: true)
        try scratch.write("home/.config/booksync/config.json", #"{"tokenCommand": "echo from-home"}"#)
        #expect(try await FirestoreEndpoint.resolve(environment: ["HOME": scratch.path + "/home"], transport: nil).tokens.token() == "from-home")
    }

    @Test func withoutAnySourceTheErrorNamesTheSafePlaces() throws {
        let (scratch, environment) = try userConfig(nil)
        #expect(throws: RemoteError.authentication(
            "no Firestore credentials: set BOOKSYNC_ACCESS_TOKEN, or a token command in BOOKSYNC_TOKEN_COMMAND or as \"tokenCommand\" in "
                + scratch.path + "/xdg/booksync/config.json (e.g. \"gcloud auth print-access-token\"), or FIRESTORE_EMULATOR_HOST for the emulator"
                + "; or point GOOGLE_APPLICATION_CREDENTIALS at a service-account key file, or run 'gcloud auth application-default login' (see 'booksync help auth')")) {
            try FirestoreEndpoint.resolve(environment: environment, transport: nil)
        }
    }

    @Test func aBrokenUserConfigIsAClearErrorNamingIt() throws {
        let (scratch, environment) = try userConfig(#"{"tokenCommand": 42}"#)
        let path = scratch.path + "/xdg/booksync/config.json"
        #expect(throws: RemoteError.configuration("\(path): \"tokenCommand\" must be a non-empty string such as \"gcloud auth print-access-token\"")) {
            try FirestoreEndpoint.resolve(environment: environment, transport: nil)
        }
        try scratch.write("xdg/booksync/config.json", "{\"tokenCommand\": ")
        #expect(throws: RemoteError.self) { try FirestoreEndpoint.resolve(environment: environment, transport: nil) }
    }

    /// The user's own file may be a symlink (dotfile managers do that), but a
    /// FIFO there must not hang every command.
    @Test func userConfigMayBeASymlinkButMustBeARegularFile() async throws {
        let (scratch, environment) = try userConfig(nil)
        let path = scratch.path + "/xdg/booksync/config.json"
        try scratch.write("real.json", #"{"tokenCommand": "echo via-link"}"#)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: scratch.path + "/real.json")
        #expect(try await FirestoreEndpoint.resolve(environment: environment, transport: nil).tokens.token() == "via-link")
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o600) == 0)
        #expect(throws: RemoteError.configuration("\(path) is not a regular file; booksync reads its user settings from it")) {
            try FirestoreEndpoint.resolve(environment: environment, transport: nil)
        }
    }

    /// The size bound holds for a followed link too, and a missing file is
    /// no settings rather than an error.
    @Test func userConfigIsBoundedAndMayBeAbsent() throws {
        let (scratch, environment) = try userConfig(nil)
        let path = scratch.path + "/xdg/booksync/config.json"
        #expect(try UserConfig.contents(of: path) == nil)
        try scratch.write("big.json", String(repeating: " ", count: (1 << 20) + 1))
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: scratch.path + "/big.json")
        #expect(throws: RemoteError.configuration("\(path) is larger than 1 MiB; it should hold a few settings or one key")) {
            try FirestoreEndpoint.resolve(environment: environment, transport: nil)
        }
        try scratch.write("exact.json", String(repeating: " ", count: 1 << 20))
        #expect(try UserConfig.contents(of: scratch.path + "/exact.json")?.count == 1 << 20)
    }

    /// Old configs with remote.tokenCommand still load; resolving the endpoint
    /// never sees the key (it takes no collection config at all).
    @Test func collectionTokenCommandStillParses() throws {
        let config = try CollectionConfig.decode(Array(#"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "books", "tokenCommand": "touch /tmp/x"}}"#.utf8))
        #expect(config.tokenCommand == "touch /tmp/x")
    }
}
