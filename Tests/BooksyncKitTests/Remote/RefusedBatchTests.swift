import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// A server that refuses a whole `:batchWrite` or `:commit` (400
/// INVALID_ARGUMENT, naming no document, as the emulator does for a field
/// path past 1,500 bytes) whenever it holds one of `refused`, and otherwise
/// writes every write; it records the ids of each request.
final class RefusingServer: Sendable {
    let refused: Set<String>
    let root = "projects/rec/databases/(default)/documents/books/"
    let requests = Mutex<[[String]]>([])

    init(refusing refused: Set<String>) {
        self.refused = refused
    }

    var transport: HTTPTransport {
        { [self] (request: HTTPRequest) async throws(TransportError) -> HTTPResponse in
            let ids = self.ids(in: request.body ?? [])
            self.requests.withLock { $0.append(ids) }
            if ids.contains(where: refused.contains) {
                return HTTPResponse(status: 400, body: errorBody(400, "INVALID_ARGUMENT", "Property m contains an invalid nested entity."))
            }
            let results = Array(repeating: #"{"updateTime": "2026-01-01T00:00:00.000001Z"}"#, count: ids.count).joined(separator: ", ")
            let statuses = Array(repeating: "{}", count: ids.count).joined(separator: ", ")
            let body = request.url.hasSuffix(":commit")
                ? #"{"writeResults": [\#(results)], "commitTime": "2026-01-01T00:00:00.000001Z"}"#
                : #"{"writeResults": [\#(results)], "status": [\#(statuses)]}"#
            return HTTPResponse(status: 200, body: Array(body.utf8))
        }
    }

    /// The ids of the documents a request's writes are for, in order.
    private func ids(in body: [UInt8]) -> [String] {
        guard case .map(let top)? = try? JSONParser.parse(body, decodeTags: false), case .array(let writes)? = top["writes"] else { return [] }
        return writes.compactMap { write -> String? in
            guard case .map(let w) = write else { return nil }
            if case .map(let update)? = w["update"], case .string(let name)? = update["name"] { return String(name.dropFirst(root.count)) }
            if case .string(let name)? = w["delete"] { return String(name.dropFirst(root.count)) }
            return nil
        }
    }

    func remote() -> FirestoreRemote {
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("secret-token-123")))
        let retry = RetryPolicy(maximumAttempts: 2, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), sleep: { _ in }, random: { 0.5 })
        let target = FirestoreRemoteTests.target
        return FirestoreRemote(target: target, endpoint: endpoint, rules: CollectionConfig(remote: target).rules, transport: transport, retry: retry)
    }
}

/// A batch Firestore refuses as a whole is narrowed down: the good records
/// are written and the one refused is rejected by name, in a bounded number
/// of requests; a commit stays all or nothing; a request refused whatever
/// it holds stays the error it was.
@Suite struct RefusedBatchTests {
    static func record(_ id: String) -> CanonicalRecord {
        CanonicalRecord(id: try! RecordID(id), fields: ["id": .string(id), "title": .string("T"), "author": .string("A"), "genre": .string("g")],
                        leadingKeys: ["id"])
    }

    static func names(_ count: Int) -> [String] { (0..<count).map { "b\($0)" } }

    @Test(arguments: [
        (9, ["b4"], 10),
        (500, ["b321"], 20),
        (500, ["b0", "b499"], 38),
        (8, names(8), 16),
    ])
    func aRefusedBatchIsNarrowedDownToTheRecordsItRefuses(count: Int, refused: [String], mostRequests: Int) async throws {
        let server = RefusingServer(refusing: Set(refused))
        let outcomes = try await server.remote().write(Self.names(count).map { .create(Self.record($0)) }, atomic: false) { _ in }
        #expect(outcomes.count == count)
        for name in Self.names(count) {
            let outcome = outcomes[try RecordID(name)]
            if refused.contains(name) {
                #expect(outcome == .rejected(Self.refusal))
            } else {
                #expect(outcome == .written(revision: "2026-01-01T00:00:00.000001Z"), "\(name)")
            }
        }
        let requests = server.requests.withLock { $0 }
        #expect(requests.count <= mostRequests && requests.count <= 2 * count, "\(requests.count) requests")
        // Every good record was written exactly once.
        let written = requests.filter { !$0.contains(where: refused.contains) }.flatMap { $0 }
        #expect(written.sorted() == Self.names(count).filter { !refused.contains($0) }.sorted())
    }

    @Test func otherRefusalsAreNotNarrowedDown() async throws {
        let script = ScriptedTransport([.response(403, errorBody(403, "PERMISSION_DENIED", "no")), .response(400, errorBody(400, "FAILED_PRECONDITION", "x"))])
        let remote = FirestoreRemoteTests().remote(script)
        let writes: [RemoteWrite] = Self.names(4).map { .create(Self.record($0)) }
        await #expect(throws: RemoteError.authentication("Firestore refused the credentials (403 PERMISSION_DENIED): no")) {
            _ = try await remote.write(writes, atomic: false) { _ in }
        }
        await #expect(throws: RemoteError.rejected(during: "write 4 documents of books", status: 400, code: "FAILED_PRECONDITION", message: "x")) {
            _ = try await remote.write(writes, atomic: false) { _ in }
        }
        #expect(script.requests.withLock { $0.count } == 2)
    }

    /// The emulator refuses a token it cannot read with 400
    /// INVALID_ARGUMENT too: no record is at fault, and the error is the
    /// request's, after one empty commit that is refused the same way.
    @Test(arguments: [false, true])
    func aRequestRefusedWhateverItHoldsIsTheError(atomic: Bool) async throws {
        let script = ScriptedTransport(Array(repeating: .response(400, errorBody(400, "INVALID_ARGUMENT", "invalid jwt")), count: 3))
        let during = atomic ? "commit 4 writes to books" : "write 4 documents of books"
        await #expect(throws: RemoteError.rejected(during: during, status: 400, code: "INVALID_ARGUMENT", message: "invalid jwt")) {
            _ = try await FirestoreRemoteTests().remote(script).write(Self.names(4).map { .create(Self.record($0)) }, atomic: atomic) { _ in }
        }
        let requests = script.requests.withLock { $0 }
        #expect(requests.count == 2)
        #expect(requests.last.map { String(decoding: $0.body ?? [], as: UTF8.self) } == #"{"writes": []}"#)
    }

    /// A commit is all or nothing: refused for one record, none is written,
    /// and each is reported not written, saying how to have that one named.
    @Test func anAtomicCommitIsNotSplit() async throws {
        let server = RefusingServer(refusing: ["b2"])
        let outcomes = try await server.remote().write(Self.names(4).map { .create(Self.record($0)) }, atomic: true) { _ in }
        #expect(outcomes == Dictionary(uniqueKeysWithValues: try Self.names(4).map { (try RecordID($0), WriteOutcome.rejected(Self.notWritten)) }))
        #expect(server.requests.withLock { $0 } == [["b0", "b1", "b2", "b3"], []], "the commit, then an empty one")
    }

    /// Through the push: the good records are pushed and recorded, the
    /// refused one is reported rejected by name (exit 1, not 3), and the next
    /// push sends only it.
    @Test func pushWritesTheGoodRecordsAndNamesTheRefusedOne() async throws {
        let scratch = try ScratchDirectory()
        let collection = try PushPipelineTests.collection(records: 40, in: scratch)
        let server = RefusingServer(refusing: ["b0017"])
        let report = try await collection.push(remote: server.remote())
        #expect(report.events.count == 40)
        for event in report.events {
            if event.id.rawValue == "b0017" {
                #expect(event.kind == .rejected(Self.refusal))
            } else {
                #expect(event.kind == .pushed(.create), "\(event.id)")
            }
        }
        let manifest = try collection.manifestFile.load()
        #expect(manifest.entries.count == 39)
        #expect(manifest.entries[try RecordID("b0017")] == nil)
        let before = server.requests.withLock { $0.count }
        let again = try await collection.push(remote: server.remote())
        #expect(again.events.map(\.id.rawValue) == ["b0017"])
        #expect(server.requests.withLock { $0.dropFirst(before) } == [["b0017"], []])
    }

    /// With --atomic nothing is written, and every record says so and how
    /// to have the refused one named.
    @Test func anAtomicPushRefusedWholeWritesNothingAndSaysWhatToDo() async throws {
        let scratch = try ScratchDirectory()
        let collection = try PushPipelineTests.collection(records: 5, in: scratch)
        let server = RefusingServer(refusing: ["b0003"])
        var options = SyncOptions()
        options.atomic = true
        let report = try await collection.push(remote: server.remote(), options: options)
        #expect(report.events.map(\.kind) == Array(repeating: .rejected(Self.notWritten), count: 5))
        #expect(try collection.manifestFile.load().entries.isEmpty)
        #expect(server.requests.withLock { $0.count } == 2)
    }

    static let refusal = "Firestore refused this record: 400 INVALID_ARGUMENT: Property m contains an invalid nested entity."
    static let notWritten = "not written: Firestore refused the --atomic commit for one of its records, without naming it; "
        + "push without --atomic to have that record named and the others written. "
        + "Firestore said: 400 INVALID_ARGUMENT: Property m contains an invalid nested entity."
}
