import Foundation
import Testing
import BooksyncTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A stopping signal sent while `booksync` hands a syncing command to
/// `booksync-network` (the exec, with the signal blocked across it) stops the
/// command: it waited, pending, until the helper listened. Found by the chaos
/// trials (`pull stopped by SIGHUP exited 0, not 129`): the helper set the
/// signal to SIG_IGN to learn whether `nohup` ignored it, which discards a
/// pending signal, and the pull ran to its end.
@Suite struct SignalHandoffTests {
    /// Starts `booksync-network ARGS` with `blocked` blocked, as the handoff
    /// leaves it, sends it `signal` at once (before its `main` runs), and
    /// returns its raw wait status.
    static func signalledAtStart(_ arguments: [String], blocking blocked: Int32, signal number: Int32,
                                 environment: [String: String]) throws -> Int32 {
        let helper = URL(fileURLWithPath: BinaryTests.executable).deletingLastPathComponent().appendingPathComponent("booksync-network").path
        #if canImport(Glibc)
        var attributes = posix_spawnattr_t()
        #else
        var attributes: posix_spawnattr_t?
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, blocked)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, number)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = ([helper] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, helper, nil, &attributes, argv, envp)
        try #require(spawned == 0, "posix_spawn: \(String(cString: strerror(spawned)))")
        kill(pid, number)
        var status: Int32 = 0
        // Bounded: a helper that lost the signal pulls and ends by itself.
        let deadline = ContinuousClock.now + .seconds(120)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if ContinuousClock.now > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                Issue.record("booksync-network did not end within 120 s of the signal")
                break
            }
            usleep(10_000)
        }
        return status
    }

    @Test(arguments: [SIGHUP, SIGTERM, SIGINT])
    func aSignalSentDuringTheHandoffStopsThePull(_ number: Int32) throws {
        let host = try Emulator.requireHost()
        let source = try Workspace(project: Emulator.uniqueProject("handoff"), host: host, name: "source")
        try source.initialize()
        for k in 0..<50 { try source.write("b\(k).json", bookFile("b\(k)")) }
        #expect(try source.run("push").status == 0)
        let target = try Workspace(project: source.project, host: host, name: "target", scratch: source.scratch)
        try target.initialize()

        let status = try Self.signalledAtStart(["-C", target.root, "pull"], blocking: number, signal: number, environment: target.environment)
        let exited = status & 0x7F == 0
        #expect(exited, "ended by signal \(status & 0x7F), not by an exit after stopping cleanly")
        #expect(!exited || (status >> 8) & 0xFF == 128 + number, "exit status \((status >> 8) & 0xFF), not \(128 + number)")
        let pulled = try FileManager.default.contentsOfDirectory(atPath: target.root).filter { $0.hasSuffix(".json") }
        #expect(pulled.count < 50, "the pull ran to its end: \(pulled.count) files")
    }

    /// `nohup` and `trap '' HUP` leave SIGHUP ignored, and booksync keeps it
    /// so, in the helper too; the signals it takes still stop the command.
    @Test func aSignalIgnoredAtStartStaysIgnored() async throws {
        let host = try Emulator.requireHost()
        let workspace = try Workspace(project: Emulator.uniqueProject("ignored"), host: host, name: "ignored")
        try workspace.initialize()
        let errors = workspace.scratch.path + "/ignored-watch.err"
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "trap '' HUP; exec \"$0\" watch --interval 1", BinaryTests.executable]
        process.currentDirectoryURL = URL(fileURLWithPath: workspace.root)
        process.environment = ProcessInfo.processInfo.environment.merging(workspace.environment) { _, new in new }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        // Listening once it says so (booksync-network took its signals before).
        try await WatchEndToEndTests.waitUntil("the watch starts", timeout: 60) {
            (try? String(contentsOfFile: errors, encoding: .utf8))?.contains("watching") == true
        }
        kill(process.processIdentifier, SIGHUP)
        try await Task.sleep(for: .seconds(1))
        #expect(process.isRunning, "SIGHUP, ignored when it started, stopped the watch")
        kill(process.processIdentifier, SIGTERM)
        try await WatchEndToEndTests.waitUntil("the watch exits", timeout: 60) { !process.isRunning }
        #expect(process.terminationReason == .exit && process.terminationStatus == 128 + SIGTERM,
                "SIGTERM ended it with \(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus)")
    }
}
