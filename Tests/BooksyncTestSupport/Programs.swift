import Foundation

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
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let stderr = try Data(contentsOf: errorFile)
    return ProgramOutput(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                         stderr: String(decoding: stderr, as: UTF8.self))
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
        process.waitUntilExit()
    }
}
