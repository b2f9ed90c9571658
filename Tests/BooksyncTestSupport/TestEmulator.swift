import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Firestore emulators the end-to-end tests run against, so that a plain
/// `swift test` on a fresh clone works as `scripts/test` does.
///
/// Each host is, in order: the one the environment names
/// (`FIRESTORE_EMULATOR_HOST`, `BOOKSYNC_TEST_SECOND_EMULATOR_HOST`, as
/// `scripts/test` and CI set them); else an emulator this test process starts
/// from the installed one with `scripts/emulator` (a free port on 127.0.0.1,
/// shared by every test, stopped by its PID when the process exits); else,
/// when none is installed, the test is skipped with one line saying so —
/// unless `BOOKSYNC_REQUIRE_EMULATOR=1` (`scripts/test`, CI), which makes a
/// missing emulator a failure.
package enum TestEmulator {
    /// The emulator of `FIRESTORE_EMULATOR_HOST`, or the first one started here.
    package static func host() throws -> String {
        try resolve(variable: "FIRESTORE_EMULATOR_HOST", slot: 0)
    }

    /// A second, independent emulator (another target, e.g. "production").
    package static func secondHost() throws -> String {
        try resolve(variable: "BOOKSYNC_TEST_SECOND_EMULATOR_HOST", slot: 1)
    }

    /// Where the installed emulator is, as `scripts/emulator` looks for it.
    package static var installedPath: String {
        let variable = ProcessInfo.processInfo.environment["BOOKSYNC_FIRESTORE_EMULATOR"] ?? ""
        return variable.isEmpty ? "/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator/cloud_firestore_emulator" : variable
    }

    /// What each slot became: a host, or why there is none.
    private static let started = Mutex<[Int: Result<String, StartFailure>]>([:])
    /// The state folders of the emulators started here, stopped at exit.
    private static let stateFolders = Mutex<[String]>([])
    /// Whether the one line about skipping was printed.
    private static let toldSkip = Mutex(false)

    private struct StartFailure: Error, Sendable {
        let message: String
        let notInstalled: Bool
    }

    private static func resolve(variable: String, slot: Int) throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let value = environment[variable], !value.isEmpty { return value }
        let outcome = started.withLock { slots -> Result<String, StartFailure> in
            if let known = slots[slot] { return known }
            let made = start()
            slots[slot] = made
            return made
        }
        switch outcome {
        case .success(let host):
            return host
        case .failure(let failure) where failure.notInstalled && environment["BOOKSYNC_REQUIRE_EMULATOR"] != "1":
            let first = toldSkip.withLock { told in defer { told = true }; return !told }
            if first {
                FileHandle.standardError.write(Data("booksync tests: \(failure.message); the end-to-end tests are skipped\n".utf8))
            }
            try Test.cancel("\(failure.message): skipped")
        case .failure(let failure):
            try #require(Bool(false), "\(failure.message)")
            throw failure
        }
    }

    /// Starts the installed emulator with `scripts/emulator start` in a
    /// state folder of its own (registered for the exit hook first).
    private static func start() -> Result<String, StartFailure> {
        guard FileManager.default.isExecutableFile(atPath: installedPath) else {
            return .failure(StartFailure(message: "no Firestore emulator is installed at \(installedPath) and FIRESTORE_EMULATOR_HOST is not set",
                                         notInstalled: true))
        }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("booksync-test-emulator-" + UUID().uuidString).path
        let first = stateFolders.withLock { folders in
            folders.append(state)
            return folders.count == 1
        }
        if first { atexit { TestEmulator.stopAll() } }
        // `system` waits for the script with waitpid: Foundation's Process waited
        // for ever here once (its exit notice never came while test tasks held
        // every thread of the pool), and nothing is read from a pipe: the
        // script leaves the host in the state folder.
        let status = system("/bin/bash \(shellQuoted(script)) start \(shellQuoted(state)) >/dev/null 2>\(shellQuoted(state + ".err"))")
        let host = (try? String(contentsOfFile: state + "/host", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard status == 0, let host, !host.isEmpty else {
            let log = (try? String(contentsOfFile: state + ".err", encoding: .utf8)) ?? ""
            return .failure(StartFailure(message: "scripts/emulator start failed: \(log.suffix(500))", notInstalled: false))
        }
        return .success(host)
    }

    /// `scripts/emulator` of this repository.
    private static var script: String {
        (Fixtures.root as NSString).deletingLastPathComponent + "/scripts/emulator"
    }

    /// `text` as one word for `/bin/sh`.
    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Stops every emulator started here, by the PIDs `scripts/emulator` recorded.
    private static func stopAll() {
        for state in stateFolders.withLock({ $0 }) {
            _ = system("/bin/bash \(shellQuoted(script)) stop \(shellQuoted(state)) >/dev/null 2>&1")
            try? FileManager.default.removeItem(atPath: state)
            try? FileManager.default.removeItem(atPath: state + ".err")
        }
    }
}
