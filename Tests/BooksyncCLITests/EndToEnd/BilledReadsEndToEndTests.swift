import Foundation
import Testing
import BooksyncTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// `scripts/count_proxy.py` between booksync and the emulator, for one test:
/// its own count of billed reads to hold booksync's `-v` estimate against.
final class CountProxy {
    static let script = URL(fileURLWithPath: Fixtures.root).deletingLastPathComponent()
        .appendingPathComponent("scripts/count_proxy.py").path

    private let process = Process()
    /// `127.0.0.1:PORT`, for FIRESTORE_EMULATOR_HOST.
    let host: String

    init(upstream: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.script, "--upstream", upstream]
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The first line announces the port (the proxy exits on failure, ending the read).
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("COUNT_PROXY_HOST=") else {
            kill(process.processIdentifier, SIGKILL)
            throw ProxyFailed(message: "count_proxy.py did not start: \(text)")
        }
        host = String(text.dropFirst("COUNT_PROXY_HOST=".count))
    }

    struct ProxyFailed: Error { let message: String }

    private var billedSoFar = 0

    /// The billed reads the proxy counted since the last call (`GET /__counts`).
    func takeBilledReads() throws -> Int? {
        let data = try Data(contentsOf: URL(string: "http://\(host)/__counts")!)
        guard let total = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["billed_reads"] as? Int else { return nil }
        defer { billedSoFar = total }
        return total - billedSoFar
    }

    /// Expects the proxy to have counted `expected` billed reads for the `-v`
    /// command that printed `output`: exactly, unless its log shows a request
    /// that did not end in 200 and was tried again, whose first answer may have
    /// been billed too (a request timed out under load): then at least.
    func expectBilled(_ expected: Int, by output: ProgramOutput, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let billed = try takeBilledReads()
        let requests = output.stderr.split(separator: "\n").filter { $0.hasPrefix("booksync: POST ") || $0.hasPrefix("booksync: GET ") }
        let retried = requests.contains { !$0.contains(" → 200 in ") }
        if retried {
            #expect((billed ?? 0) >= expected, "\(output.stderr)", sourceLocation: sourceLocation)
        } else {
            #expect(billed == expected, "\(output.stderr)", sourceLocation: sourceLocation)
        }
    }

    /// SIGKILL: a child of the test process may inherit SIGTERM blocked, and
    /// the proxy holds nothing worth a clean exit here.
    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// `-v` ends each remote command with its estimated billed reads, and
/// count_proxy.py, counting the same answers on the wire, agrees.
@Suite struct BilledReadsEndToEndTests {
    /// The `-v` closing line's estimate, e.g. 1,234 from
    /// `booksync: 1 request, 1,234 documents read (estimated billed reads: 1,234)`.
    static func estimate(_ stderr: String) -> Int? {
        let lines = stderr.split(separator: "\n").filter { $0.contains("(estimated billed reads: ") }
        guard lines.count == 1, let line = lines.first, let start = line.range(of: "(estimated billed reads: ") else { return nil }
        return Int(line[start.upperBound...].dropLast().filter { $0 != "," })
    }

    @Test func verboseStatusPrintsTheBilledReadsTheProxyCounts() async throws {
        let upstream = try Emulator.requireHost()
        let proxy = try CountProxy(upstream: upstream)
        let ws = try Workspace(project: Emulator.uniqueProject("billed"), host: proxy.host)
        try await Workspace(project: ws.project, host: upstream).rest.put((0..<1_234).map { (id: String(format: "b%05d", $0), fields: bookFields(String(format: "b%05d", $0))) })
        try ws.initialize()
        _ = try proxy.takeBilledReads()

        // First pull: bodies by :runQuery, 300 then the other 934.
        let pull = try ws.run("-v", "pull")
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(Self.estimate(pull.stderr) == 1_234, "\(pull.stderr)")
        try proxy.expectBilled(1_234, by: pull)

        // Status of the unchanged collection: one names-only query of 1,234 documents.
        let status = try ws.run("-v", "status", "--short")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.isEmpty)
        #expect(status.stderr.contains("booksync: 1 request, 1,234 documents read (estimated billed reads: 1,234)\n"), "\(status.stderr)")
        try proxy.expectBilled(1_234, by: status)

        // Without -v, no such line; offline, no remote and no line.
        #expect(Self.estimate(try ws.run("status").stderr) == nil)
        #expect(Self.estimate(try ws.run("-v", "status", "--offline").stderr) == nil)
    }

    /// A scoped pull is billed for its scope, as the proxy counts on the
    /// wire: an id is one read, a glob the names in its id range plus the
    /// bodies that changed; the whole collection is 1,000.
    @Test func aScopedPullIsBilledForItsScopeOnly() async throws {
        let upstream = try Emulator.requireHost()
        let proxy = try CountProxy(upstream: upstream)
        let ws = try Workspace(project: Emulator.uniqueProject("billedscope"), host: proxy.host)
        let writer = try Workspace(project: ws.project, host: upstream).rest
        let name = { (n: Int) in String(format: "b%05d", n) }
        try await writer.put((0..<1_000).map { (id: name($0), fields: bookFields(name($0))) })
        try ws.initialize()
        #expect(try ws.run("pull").status == 0)
        try await writer.put([12, 500].map { (id: name($0), fields: bookFields(name($0), title: "new")) })
        _ = try proxy.takeBilledReads()

        let one = try ws.run("-v", "pull", "b00500")
        #expect(one.stdout == "pull     b00500.json\npulled 1\n", "\(one.stdout) \(one.stderr)")
        #expect(Self.estimate(one.stderr) == 1, "\(one.stderr)")
        try proxy.expectBilled(1, by: one)

        let range = try ws.run("-v", "pull", "b0001*")
        #expect(range.stdout == "pull     b00012.json\npulled 1\n", "\(range.stdout) \(range.stderr)")
        #expect(Self.estimate(range.stderr) == 11, "10 names and 1 body: \(range.stderr)")
        try proxy.expectBilled(11, by: range)

        let hundred = try ws.run("-v", "status", "--short", "b009*")
        #expect(hundred.status == 0 && hundred.stdout.isEmpty, "\(hundred.stdout) \(hundred.stderr)")
        #expect(Self.estimate(hundred.stderr) == 100, "\(hundred.stderr)")
        try proxy.expectBilled(100, by: hundred)
    }
}
