import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
import BooksyncURLSession
@testable import BooksyncCLI
@_spi(Remote) @testable import BooksyncKit
@testable import BooksyncCore

/// Golden scenarios: each folder under fixtures/scenarios runs one booksync
/// command line on a copy of a fixture collection and compares stdout, stderr,
/// the exit code and, where the folder has `after/`, the resulting files.
///
/// Files of a scenario folder:
///   args        the arguments, one per line
///   collection  name of the folder under fixtures/collections to start from (optional: empty directory)
///   stdout      expected stdout; `$ROOT` stands for the collection directory
///   stderr      expected stderr (optional: not compared)
///   exit        expected exit code
///   after/      expected content of files after the command (paths relative to the collection)
///
/// `BOOKSYNC_UPDATE_GOLDEN=1 swift test --filter ScenarioTests` rewrites stdout,
/// stderr and exit from the current behaviour; review the diff before committing.
@Suite struct ScenarioTests {
    static let scenarios: [String] = {
        let dir = Fixtures.root + "/scenarios"
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }()

    @Test func scenariosExist() {
        #expect(Self.scenarios.count >= 10)
    }

    @Test(arguments: scenarios)
    func scenario(_ name: String) async throws {
        let folder = Fixtures.root + "/scenarios/" + name
        let scratch = try ScratchDirectory()
        let root: String
        if let collection = try? String(contentsOfFile: folder + "/collection", encoding: .utf8) {
            root = try scratch.copyFixture(collection.trimmingCharacters(in: .whitespacesAndNewlines))
        } else {
            root = scratch.path + "/books"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        }
        let args = try String(contentsOfFile: folder + "/args", encoding: .utf8).split(separator: "\n").map(String.init)
        let result = await runBooksync(args, in: root)

        if ProcessInfo.processInfo.environment["BOOKSYNC_UPDATE_GOLDEN"] == "1" {
            try result.stdout.replacingOccurrences(of: root, with: "$ROOT").write(toFile: folder + "/stdout", atomically: true, encoding: .utf8)
            try result.stderr.replacingOccurrences(of: root, with: "$ROOT").write(toFile: folder + "/stderr", atomically: true, encoding: .utf8)
            try "\(result.exitCode)\n".write(toFile: folder + "/exit", atomically: true, encoding: .utf8)
        }
        let expectedStdout = try String(contentsOfFile: folder + "/stdout", encoding: .utf8).replacingOccurrences(of: "$ROOT", with: root)
        #expect(result.stdout == expectedStdout, "stdout of \(name)")
        if let expectedStderr = try? String(contentsOfFile: folder + "/stderr", encoding: .utf8) {
            #expect(result.stderr == expectedStderr.replacingOccurrences(of: "$ROOT", with: root), "stderr of \(name)")
        }
        let expectedExit = try String(contentsOfFile: folder + "/exit", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(String(result.exitCode) == expectedExit, "exit code of \(name)")

        let after = folder + "/after"
        if let enumerator = FileManager.default.enumerator(atPath: after) {
            for case let relative as String in enumerator {
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: after + "/" + relative, isDirectory: &isDirectory)
                if isDirectory.boolValue { continue }
                let expected = try String(contentsOfFile: after + "/" + relative, encoding: .utf8)
                let actual = try? String(contentsOfFile: root + "/" + relative, encoding: .utf8)
                #expect(actual == expected, "\(relative) after \(name)")
            }
        }
    }
}

/// Output of one in-process run of the CLI.
struct RunResult {
    let stdout: String
    let stderr: String
    let exitCode: Int32
}

/// Runs the CLI in-process with captured output and colour off.
func runBooksync(_ args: [String], in directory: String, environment: [String: String] = [:]) async -> RunResult {
    let out = Mutex<[UInt8]>([])
    let err = Mutex<[UInt8]>([])
    let network = NetworkAccess.linked(make: { URLSessionTransport.make(requestTimeout: $0) })
    // Never the real metadata server (metadata.google.internal) from a test,
    // and no progress lines unless a test asks (a loaded machine can slow a
    // transfer past the two seconds after which they start).
    let environment = ["NO_GCE_CHECK": "1", "BOOKSYNC_PROGRESS": "none"].merging(environment) { $1 }
    let code = await BooksyncCommand.run(args, environment: environment, currentDirectory: directory, network: network) { _ in
        Console(stdout: { bytes in out.withLock { $0 += bytes } }, stderr: { bytes in err.withLock { $0 += bytes } },
                colorStdout: false, colorStderr: false)
    }
    return RunResult(
        stdout: String(decoding: out.withLock { $0 }, as: UTF8.self),
        stderr: String(decoding: err.withLock { $0 }, as: UTF8.self), exitCode: code)
}
