import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a program printed and how it ended.
package struct ProgramOutput: Sendable {
    package let status: Int32
    package let stdout: String
    package let stderr: String
}

/// Runs `program` to the end in `directory`, with `environment` as its whole
/// environment (nil: this process's), and returns what it printed.
///
/// Standard error goes to a file, not a second pipe: a program that fills
/// the stderr pipe while this reads stdout to its end (a compiler's many
/// errors) would otherwise wait for this, and this for it, forever.
package func runProgram(_ program: String, _ arguments: [String], in directory: String,
                       environment: [String: String]? = nil) throws -> ProgramOutput {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    if let environment { process.environment = environment }
    let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("booksync-test-stderr-" + UUID().uuidString)
    guard FileManager.default.createFile(atPath: errorFile.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
    defer { try? FileManager.default.removeItem(at: errorFile) }
    let err = try FileHandle(forWritingTo: errorFile)
    defer { try? err.close() }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = err
    let started = ContinuousClock.now
    try process.run()
    defer { SlowRunLog.note(program, arguments, in: directory, took: ContinuousClock.now - started) }
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    // Closed here, not left to the handle's deinit: left to it, some 1,300
    // read ends were still open late in one run of the suites.
    try? out.fileHandleForReading.close()
    let status = waitForExit(process)
    let stderr = try Data(contentsOf: errorFile)
    return ProgramOutput(status: status, stdout: String(decoding: stdout, as: UTF8.self),
                         stderr: String(decoding: stderr, as: UTF8.self))
}

/// With `BOOKSYNC_TEST_SLOW_LOG=FILE`, every program run by `runProgram` that
/// takes over 5 s (`BOOKSYNC_TEST_SLOW_SECONDS`) is appended to FILE (its
/// time, name, arguments and folder; lines of parallel tests may interleave).
/// For finding what makes a whole `swift test` slow now and then (the
/// Testing article): nothing else reads the file, and without the variable
/// nothing is written.
enum SlowRunLog {
    static let path = ProcessInfo.processInfo.environment["BOOKSYNC_TEST_SLOW_LOG"].flatMap { $0.isEmpty ? nil : $0 }
    static let threshold = Duration.seconds(ProcessInfo.processInfo.environment["BOOKSYNC_TEST_SLOW_SECONDS"].flatMap(Double.init) ?? 5)

    static func note(_ program: String, _ arguments: [String], in directory: String, took: Duration) {
        guard let path, took > threshold else { return }
        let line = "\(took) \((program as NSString).lastPathComponent) \(arguments) in \(directory)\n"
        guard let file = FileHandle(forWritingAtPath: path) ?? (FileManager.default.createFile(atPath: path, contents: nil)
            ? FileHandle(forWritingAtPath: path) : nil) else { return }
        defer { try? file.close() }
        _ = try? file.seekToEnd()
        try? file.write(contentsOf: Data(line.utf8))
    }
}

/// Waits until `process` has ended and returns its exit status (128 + the
/// signal for one killed by a signal, as shells say).
///
/// `Process.waitUntilExit` learns of the end from a SIGCHLD dispatch source,
/// and on a loaded Linux machine it was seen to wait for ever with the child
/// a zombie nobody reaped (a whole `swift test` hung). This also asks the
/// kernel directly, every 5 ms: whoever reaps the child first, the status is known.
package func waitForExit(_ process: Process) -> Int32 {
    let pid = process.processIdentifier
    var raw: Int32 = 0
    while true {
        if !process.isRunning { return process.terminationStatus }
        let reaped = waitpid(pid, &raw, WNOHANG)
        if reaped == pid {
            let signal = raw & 0x7F
            return signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
        }
        if reaped == -1, errno == ECHILD {
            // Foundation reaped it a moment ago: its status arrives with isRunning.
            for _ in 0..<2_000 where process.isRunning { usleep(1_000) }
            return process.isRunning ? -1 : process.terminationStatus
        }
        usleep(5_000)
    }
}

/// A helper server (a Python script in `scripts/` or a test's scratch
/// directory) listening on 127.0.0.1 for one test: it announces its ports as
/// one JSON line on standard output and exits when its standard input
/// closes, which happens when this object goes.
package final class LoopbackScript {
    /// The ports from the script's first line, by name.
    package let ports: [String: Int]
    private let process = Process()
    private let input = Pipe()

    /// Starts `python3` with `arguments` and waits for its line of ports.
    package init(python arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        ports = (try JSONSerialization.jsonObject(with: line) as? [String: Int]) ?? [:]
    }

    deinit {
        try? input.fileHandleForWriting.close()  // its stdin.read() returns: it exits
        _ = waitForExit(process)
    }
}
