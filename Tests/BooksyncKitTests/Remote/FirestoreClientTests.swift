import Synchronization
import Testing
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The retrying HTTP client under FirestoreRemote (which error ends the
/// retries, by the last problem's kind), the gRPC code table, and the write
/// path's one rule on chunking: what fits in a request is one request.
@Suite struct FirestoreClientTests {
    static let target = FirestoreTarget(project: "rec", collectionPath: "books")

    static func remote(_ transport: @escaping HTTPTransport, attempts: Int = 3, emulator: Bool = true) -> FirestoreRemote {
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: emulator, tokens: AccessTokens(source: .fixed("secret-token-123")))
        let retry = RetryPolicy(maximumAttempts: attempts, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), sleep: { _ in }, random: { 0.5 })
        return FirestoreRemote(target: target, endpoint: endpoint, rules: CollectionConfig(remote: target).rules, transport: transport, retry: retry)
    }

    @Test(arguments: [
        ("OK", 0), ("CANCELLED", 1), ("UNKNOWN", 2), ("INVALID_ARGUMENT", 3), ("DEADLINE_EXCEEDED", 4), ("NOT_FOUND", 5),
        ("ALREADY_EXISTS", 6), ("PERMISSION_DENIED", 7), ("RESOURCE_EXHAUSTED", 8), ("FAILED_PRECONDITION", 9), ("ABORTED", 10),
        ("OUT_OF_RANGE", 11), ("UNIMPLEMENTED", 12), ("INTERNAL", 13), ("UNAVAILABLE", 14), ("DATA_LOSS", 15), ("UNAUTHENTICATED", 16),
    ])
    func grpcCodesByNameAndNumber(name: String, number: Int64) {
        #expect(GRPCCode(name: name)?.rawValue == Int(number))
        #expect(GRPCCode(number: number)?.name == name)
    }

    @Test func unknownCodesAreNotGuessed() {
        #expect(GRPCCode(name: "aborted") == nil)
        #expect(GRPCCode(name: "") == nil)
        #expect(GRPCCode(number: 17) == nil)
        #expect(GRPCCode(number: -1) == nil)
        #expect(GRPCCode(number: Int64.max) == nil)
        #expect(GRPCCode.allCases.filter(\.isPreconditionFailure) == [.notFound, .alreadyExists, .failedPrecondition])
        #expect(GRPCCode.allCases.filter(\.isTransientWriteFailure) == [.deadlineExceeded, .resourceExhausted, .aborted, .internal, .unavailable])
    }

    /// The same answer every time: the last problem's kind chooses the error
    /// when the attempts run out; a refusal is not retried at all.
    @Test(arguments: [
        (ScriptedTransport.Answer.response(200, Array("{\"documents\": [".utf8)), 3, "Firestore's answer to list books could not be read: the answer is not valid JSON"),
        (.response(503, errorBody(503, "UNAVAILABLE")), 3, "cannot reach Firestore at http://127.0.0.1:9/v1/ (503 UNAVAILABLE) after 3 attempts"),
        // Firestore answered every time: its own words, not "cannot reach".
        (.response(409, errorBody(409, "ABORTED", "contention")), 3, "Firestore refused to list books: 409 ABORTED: contention (still refused after 3 attempts)"),
        (.response(429, errorBody(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Free daily write units'")), 3,
         "Firestore refused to list books: 429 RESOURCE_EXHAUSTED: Quota exceeded for quota metric 'Free daily write units' (still refused after 3 attempts)"),
        (.response(503, errorBody(503, "UNAVAILABLE", "The service is currently unavailable.")), 3,
         "cannot reach Firestore at http://127.0.0.1:9/v1/ (503 UNAVAILABLE: The service is currently unavailable.) after 3 attempts"),
        (.failure(TransportError(.connectionFailed, "connection refused")), 3, "cannot reach Firestore at http://127.0.0.1:9/v1/ (connection refused) after 3 attempts"),
        (.response(409, errorBody(409, "ALREADY_EXISTS", "there")), 1, "Firestore refused to list books: 409 ALREADY_EXISTS: there"),
        (.response(400, errorBody(400, "INVALID_ARGUMENT", "bad")), 1, "Firestore refused to list books: 400 INVALID_ARGUMENT: bad"),
        // The same answer would be as large again: not retried.
        (.failure(TransportError(.tooLarge, "the answer is larger than 1 GiB, the most booksync reads of one answer")), 1,
         "Firestore's answer to list books could not be read: the answer is larger than 1 GiB, the most booksync reads of one answer"),
    ])
    func theLastProblemChoosesTheError(answer: ScriptedTransport.Answer, requests: Int, message: String) async {
        let script = ScriptedTransport(Array(repeating: answer, count: 5))
        do throws(RemoteError) {
            _ = try await Self.remote(script.transport).listRevisions { _ in }
            Issue.record("expected an error")
        } catch {
            #expect(error.description.hasPrefix(message), "\(error)")
        }
        #expect(script.requests.withLock { $0.count } == requests)
    }

    /// A Retry-After is honoured whole within the deadline (it was capped at
    /// twice the longest backoff, 10 s); one past the deadline ends the
    /// retries at once, saying what Firestore asked.
    @Test(arguments: [("30", [30.0], nil as String?), ("500", [], "Firestore asked to wait 500 s more")])
    func retryAfterIsHonouredWithinTheDeadline(retryAfter: String, waits expected: [Double], ending: String?) async {
        let waits = Mutex<[Double]>([])
        let script = ScriptedTransport([
            .response(429, errorBody(429, "RESOURCE_EXHAUSTED", "Quota exceeded"), headers: ["retry-after": retryAfter]),
            .response(200, Array("[]".utf8)),
        ])
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("secret-token-123")))
        let retry = RetryPolicy(maximumAttempts: 6, initialDelay: .milliseconds(200), maximumDelay: .seconds(5), totalDeadline: .seconds(120),
                                sleep: { s in waits.withLock { $0.append((s.seconds * 1e6).rounded() / 1e6) } }, random: { 0.5 })
        let remote = FirestoreRemote(target: Self.target, endpoint: endpoint, rules: CollectionConfig(remote: Self.target).rules,
                                     transport: script.transport, retry: retry)
        do throws(RemoteError) {
            _ = try await remote.listRevisions { _ in }
            #expect(ending == nil)
        } catch {
            #expect(ending.map { error.description.contains($0) && error.description.contains("Quota exceeded") } == true, "\(error)")
        }
        #expect(waits.withLock { $0 } == expected)
    }

    /// A server that applies every write: one `writeResult` per write in the
    /// body, whatever order the requests come in. Records each request's size.
    final class WriteServer: Sendable {
        let writesPerRequest = Mutex<[Int]>([])

        var transport: HTTPTransport {
            { [self] (request: HTTPRequest) async throws(TransportError) -> HTTPResponse in
                guard case .map(let top)? = try? JSONParser.parse(request.body ?? [], decodeTags: false), case .array(let writes)? = top["writes"] else {
                    return HTTPResponse(status: 400, body: errorBody(400, "INVALID_ARGUMENT", "not a write request"))
                }
                self.writesPerRequest.withLock { $0.append(writes.count) }
                let results = Array(repeating: #"{"updateTime": "2026-01-01T00:00:00.000001Z"}"#, count: writes.count).joined(separator: ", ")
                return HTTPResponse(status: 200, body: Array(#"{"writeResults": [\#(results)]}"#.utf8))
            }
        }
    }

    static func creates(_ count: Int, padding: Int = 0) -> [RemoteWrite] {
        (0..<count).map { i in
            let id = "r\(i)"
            var fields: Fields = ["id": .string(id)]
            if padding > 0 { fields["text"] = .string(String(repeating: "x", count: padding)) }
            return .create(CanonicalRecord(id: try! RecordID(id), fields: fields, leadingKeys: ["id"]))
        }
    }

    /// The push pipeline chunks (500 writes); the remote sends a chunk as one
    /// request. A library caller passing more, or writes over the byte limit,
    /// gets them split into requests within Firestore's limits, none lost:
    /// 9 MiB of writes a request to production, 3.5 MiB to the emulator
    /// (which refuses messages over 4 MiB).
    @Test(arguments: [
        (writes: 1, padding: 0, emulator: true, requests: [1]),
        (writes: 500, padding: 0, emulator: true, requests: [500]),
        (writes: 501, padding: 0, emulator: true, requests: [1, 500]),
        (writes: 1_250, padding: 0, emulator: true, requests: [250, 500, 500]),
        (writes: 3, padding: 4 << 20, emulator: false, requests: [1, 2]),
        (writes: 3, padding: 4 << 20, emulator: true, requests: [1, 1, 1]),
        (writes: 3, padding: 3 << 19, emulator: true, requests: [1, 2]),
        (writes: 3, padding: 3 << 19, emulator: false, requests: [3]),
    ])
    func whatFitsInARequestIsOneRequest(writes count: Int, padding: Int, emulator: Bool, requests: [Int]) async throws {
        let server = WriteServer()
        let progress = Mutex(0)
        let outcomes = try await Self.remote(server.transport, emulator: emulator).write(Self.creates(count, padding: padding), atomic: false) { n in progress.withLock { $0 += n } }
        #expect(server.writesPerRequest.withLock { $0.sorted() } == requests)
        #expect(outcomes.count == count)
        #expect(outcomes.values.allSatisfy { $0 == .written(revision: "2026-01-01T00:00:00.000001Z") })
        #expect(progress.withLock { $0 } == count)
    }

    @Test(arguments: [(emulator: false, limit: 9216), (emulator: true, limit: 3584)])
    func anAtomicPushOverTheLimitsIsRefusedBeforeSending(emulator: Bool, limit: Int) async {
        let server = WriteServer()
        await #expect(throws: RemoteError.configuration("--atomic can send at most 500 writes and \(limit) KiB in one commit; this push has 501 writes of 78 KiB")) {
            _ = try await Self.remote(server.transport, emulator: emulator).write(Self.creates(501), atomic: true) { _ in }
        }
        #expect(server.writesPerRequest.withLock { $0 }.isEmpty)
        let fourMiB = Self.creates(4, padding: 1 << 20)
        #expect(Self.remote(server.transport, emulator: emulator).atomicRequestSize(fourMiB)?.limit == limit * 1024)
        #expect((Self.remote(server.transport, emulator: emulator).atomicRequestSize(fourMiB)?.bytes ?? 0) > 4 << 20)
    }
}
