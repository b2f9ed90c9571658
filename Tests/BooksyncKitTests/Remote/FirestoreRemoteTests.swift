import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// A transport that replays answers in order and records every request.
final class ScriptedTransport: Sendable {
    enum Answer: Sendable {
        case response(Int, [UInt8], headers: [String: String] = [:])
        case failure(TransportError)
    }

    private let answers: Mutex<[Answer]>
    let requests = Mutex<[HTTPRequest]>([])

    init(_ answers: [Answer]) {
        self.answers = Mutex(answers)
    }

    var transport: HTTPTransport {
        { [self] (request: HTTPRequest) async throws(TransportError) -> HTTPResponse in
            self.requests.withLock { $0.append(request) }
            let next = self.answers.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            switch next {
            case .response(let status, let body, let headers)?: return HTTPResponse(status: status, headers: headers, body: body)
            case .failure(let error)?: throw error
            case nil: return HTTPResponse(status: 500, body: Array("no more scripted answers".utf8))
            }
        }
    }

    var remaining: Int { answers.withLock { $0.count } }
}

func recorded(_ name: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.root + "/recorded/" + name)))
}

func errorBody(_ code: Int, _ status: String, _ message: String = "") -> [UInt8] {
    Array(#"{"error": {"code": \#(code), "message": "\#(message)", "status": "\#(status)"}}"#.utf8)
}

/// The Firestore remote against recorded emulator answers (fixtures/recorded) and
/// synthetic faults, through the HTTP seam: no server involved.
@Suite struct FirestoreRemoteTests {
    static let target = FirestoreTarget(project: "rec", collectionPath: "books")

    func remote(_ script: ScriptedTransport, attempts: Int = 4, tokens: AccessTokens = AccessTokens(source: .fixed("secret-token-123"))) -> FirestoreRemote {
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: true, tokens: tokens)
        let retry = RetryPolicy(maximumAttempts: attempts, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), sleep: { _ in }, random: { 0.5 })
        return FirestoreRemote(target: Self.target, endpoint: endpoint, rules: CollectionConfig(remote: Self.target).rules, transport: script.transport, retry: retry)
    }

    static func id(_ s: String) -> RecordID { try! RecordID(s) }

    /// When retries run out of time the error says why the last try failed,
    /// without -v: "gave up … after N s of retries: host not found".
    @Test func givingUpNamesTheCause() async throws {
        let script = ScriptedTransport(Array(repeating: .failure(TransportError(.connectionFailed, "host not found")), count: 3))
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("test-token-0123456789")))
        let retry = RetryPolicy(maximumAttempts: 10, initialDelay: .seconds(5), maximumDelay: .seconds(5), totalDeadline: .seconds(1), sleep: { _ in }, random: { 0.5 })
        let remote = FirestoreRemote(target: Self.target, endpoint: endpoint, rules: CollectionConfig(remote: Self.target).rules,
                                     transport: script.transport, retry: retry)
        await #expect {
            _ = try await remote.listRevisions(progress: { _ in })
        } throws: { error in
            guard let error = error as? RemoteError, case .deadlineExceeded = error else { return false }
            return error.description.hasPrefix("gave up trying to ") && error.description.hasSuffix(": host not found")
        }
    }

    /// A remote listing one name an answer, scripted with the three recorded answers.
    func namesListing() throws -> (ScriptedTransport, FirestoreRemote) {
        let script = ScriptedTransport([
            .response(200, try recorded("runquery-names-1.json")),
            .response(200, try recorded("runquery-names-2.json")),
            .response(200, try recorded("runquery-names-3.json")),
        ])
        var remote = self.remote(script)
        remote.namesQueryBatch = 1
        return (script, remote)
    }

    @Test func listingContinuesAfterTheLastNameAndAsksOnlyForNames() async throws {
        let (script, remote) = try namesListing()
        let listing = try await remote.listRevisions { _ in }
        #expect(listing.revisions == [Self.id("dune"): "2026-11-29T14:38:54.974642Z", Self.id("solaris"): "2026-11-29T14:38:54.974642Z"])
        let requests = script.requests.withLock { $0 }
        #expect(requests.count == 3)
        #expect(requests.allSatisfy { $0.method == "POST" && $0.url == "http://127.0.0.1:9/v1/projects/rec/databases/(default)/documents:runQuery" })
        let bodies = requests.map { String(decoding: $0.body ?? [], as: UTF8.self) }
        #expect(bodies[0] == #"{"structuredQuery": {"from": [{"collectionId": "books"}], "limit": 1, "orderBy": [{"direction": "ASCENDING", "field": {"fieldPath": "__name__"}}], "select": {"fields": [{"fieldPath": "__name__"}]}}}"#)
        #expect(bodies[1].contains(#""startAt": {"before": false, "values": [{"referenceValue": "projects/rec/databases/(default)/documents/books/dune"}]}"#))
        #expect(bodies[2].contains(#""referenceValue": "projects/rec/databases/(default)/documents/books/solaris""#))
        #expect(requests.allSatisfy { $0.headers["Authorization"] == "Bearer secret-token-123" })
    }

    /// Keyed like a base that holds one of the two names, the listing is the
    /// same, each answer set into it as it arrives.
    @Test func aListingKeyedLikeTheBaseListsTheSame() async throws {
        let (_, remote) = try namesListing()
        let base: ManifestEntries = [Self.id("dune"): BaseEntry(hash: "sha256:00", revision: "2026-01-01T00:00:00Z"),
                                     Self.id("arrival"): BaseEntry(hash: "sha256:00", revision: "2026-01-01T00:00:00Z")]
        let listing = try await remote.listRevisions(into: RemoteRevisions(keyedLike: base)) { _ in }
        #expect(listing.revisions == [Self.id("dune"): "2026-11-29T14:38:54.974642Z", Self.id("solaris"): "2026-11-29T14:38:54.974642Z"])
        #expect(listing.revisions.count == 2 && !listing.revisions.contains(Self.id("arrival")))
    }

    @Test func listingWithBodiesSizesLaterQueriesByWhatTheFirstReturned() async throws {
        let script = ScriptedTransport([
            .response(200, try recorded("runquery-names-1.json")),
            .response(200, try recorded("runquery-names-2.json")),
        ])
        var remote = self.remote(script)
        remote.firstQueryBatch = 1
        remote.queryBatch = 5
        let batches = Mutex<[(RemoteListing, [RecordID: RemoteDocument])]>([])
        try await remote.listDocuments(batch: { listing, documents in batches.withLock { $0.append((listing, documents)) } }, progress: { _ in })
        // Each answer is handed on by itself, as it arrives.
        #expect(batches.withLock { $0.map { $0.0.revisions.keys.map(\.rawValue) } } == [["dune"], ["solaris"]])
        #expect(batches.withLock { $0.map(\.1.count) } == [1, 1])
        let bodies = script.requests.withLock { $0 }.map { String(decoding: $0.body ?? [], as: UTF8.self) }
        #expect(bodies.count == 2)
        #expect(!bodies[0].contains("select"))
        #expect(bodies[0].contains(#""limit": 1,"#))
        // ~250 bytes per document seen: as many as fit in 4 MiB, capped at queryBatch; one came back, so that was the end.
        #expect(bodies[1].contains(#""limit": 5,"#))
    }

    @Test func aQueryThatDoesNotMoveOnIsAnError() async throws {
        let script = ScriptedTransport([
            .response(200, try recorded("runquery-names-1.json")),
            .response(200, try recorded("runquery-names-1.json")),
        ])
        var remote = self.remote(script)
        remote.namesQueryBatch = 1
        await #expect(throws: RemoteError.malformedResponse(during: "list books", detail: "projects/rec/databases/(default)/documents/books/dune came after projects/rec/databases/(default)/documents/books/dune; a listing's names must increase")) {
            try await remote.listRevisions { _ in }
        }
    }

    @Test func aServerWithoutRunQueryIsPagedThroughDocumentsList() async throws {
        let script = ScriptedTransport([
            .response(501, errorBody(501, "UNIMPLEMENTED", "runQuery is not offered here")),
            .response(200, try recorded("list-page-last.json")),
        ])
        let listing = try await remote(script).listRevisions { _ in }
        #expect(listing.revisions == [Self.id("solaris"): "2026-11-29T12:24:06.157087Z"])
        let requests = script.requests.withLock { $0 }
        #expect(requests.map(\.method) == ["POST", "GET"])
        #expect(requests[1].url == "http://127.0.0.1:9/v1/projects/rec/databases/(default)/documents/books?pageSize=300&mask.fieldPaths=__name__")
    }

    @Test func aQueryErrorInTheStreamIsReported() async throws {
        let script = ScriptedTransport([.response(200, Array(#"[{"readTime": "2026-11-29T14:38:55Z"}, {"error": {"code": 400, "status": "FAILED_PRECONDITION", "message": "bad query"}}]"#.utf8))])
        await #expect(throws: RemoteError.rejected(during: "list books", status: 200, code: "FAILED_PRECONDITION", message: "bad query")) {
            try await remote(script).listRevisions { _ in }
        }
    }

    @Test func batchGetDecodesEveryValueTypeAndSkipsMissing() async throws {
        let script = ScriptedTransport([.response(200, try recorded("batchget-found-and-missing.json"))])
        let documents = try await remote(script).fetch([Self.id("dune"), Self.id("missing")]) { _ in }
        #expect(documents.keys.map(\.rawValue) == ["dune"])
        let fields = try #require(documents[Self.id("dune")]?.record?.fields)
        #expect(fields["year"] == .integer(1965))
        #expect(fields["rating"] == .double(4.5))
        #expect(fields["tags"] == .array([]))
        #expect(fields["meta"] == .map([:]))
        #expect(fields["nan"] == .double(.nan))
        #expect(fields["published"] == .timestamp(try Timestamp(rfc3339: "1965-08-01T00:00:00Z")))
        #expect(fields["cover"] == .bytes([0, 1, 2]))
        #expect(fields["authorRef"] == .reference("authors/fh"))
        #expect(fields["where"] == .geoPoint(latitude: 0, longitude: -3.25))
        #expect(fields["gone"] == .null)
        #expect(fields["inPrint"] == .bool(false))
        let body = String(decoding: script.requests.withLock { $0[0].body ?? [] }, as: UTF8.self)
        #expect(body == #"{"documents": ["projects/rec/databases/(default)/documents/books/dune", "projects/rec/databases/(default)/documents/books/missing"]}"#)
    }

    @Test func batchWriteReportsPreconditionsPerWrite() async throws {
        let script = ScriptedTransport([.response(200, try recorded("batchwrite-mixed.json"))])
        let record = { (id: String) in CanonicalRecord(id: Self.id(id), fields: ["id": .string(id)], leadingKeys: ["id"]) }
        let outcomes = try await remote(script).write([
            .create(record("dune")), .update(record("solaris"), baseRevision: "2020-01-01T00:00:00Z"),
            .create(record("new")), .delete(Self.id("nothere"), baseRevision: "2020-01-01T00:00:00Z"),
        ], atomic: false) { _ in }
        #expect(outcomes[Self.id("dune")] == .preconditionFailed)  // ALREADY_EXISTS
        #expect(outcomes[Self.id("solaris")] == .preconditionFailed)  // FAILED_PRECONDITION
        #expect(outcomes[Self.id("new")] == .written(revision: "2026-11-29T12:24:06.323525Z"))
        #expect(outcomes[Self.id("nothere")] == .preconditionFailed)
        let body = String(decoding: script.requests.withLock { $0[0].body ?? [] }, as: UTF8.self)
        #expect(body.contains(#""currentDocument": {"exists": false}"#))
        #expect(body.contains(#""currentDocument": {"updateTime": "2020-01-01T00:00:00Z"}"#))
        #expect(body.contains(#""delete": "projects/rec/databases/(default)/documents/books/nothere""#))
        #expect(script.requests.withLock { $0[0].url.hasSuffix("/documents:batchWrite") })
    }

    @Test(arguments: ["commit-already-exists.json", "commit-failed-precondition.json"])
    func atomicCommitPreconditionFailure(answer: String) async throws {
        let status = answer.contains("already") ? 409 : 400
        let script = ScriptedTransport([.response(status, try recorded(answer))])
        let record = CanonicalRecord(id: Self.id("dune"), fields: ["id": .string("dune")], leadingKeys: ["id"])
        let outcomes = try await remote(script).write([.create(record)], atomic: true) { _ in }
        #expect(outcomes == [Self.id("dune"): .preconditionFailed])
        #expect(script.requests.withLock { $0.count } == 1, "a failed precondition is never retried blindly")
    }

    @Test func notFoundOnAGuardedWriteIsAPreconditionFailure() async throws {
        let script = ScriptedTransport([.response(404, errorBody(404, "NOT_FOUND", "no entity to update"))])
        let record = CanonicalRecord(id: Self.id("dune"), fields: ["id": .string("dune")], leadingKeys: ["id"])
        let outcomes = try await remote(script).write([.update(record, baseRevision: "r")], atomic: true) { _ in }
        #expect(outcomes == [Self.id("dune"): .preconditionFailed])
    }

    @Test func rateLimitIsRetriedHonouringRetryAfter() async throws {
        let waits = Mutex<[Double]>([])
        let script = ScriptedTransport([
            .response(429, errorBody(429, "RESOURCE_EXHAUSTED", "slow down"), headers: ["retry-after": "0.03"]),
            .response(503, errorBody(503, "UNAVAILABLE")),
            .failure(TransportError(.connectionFailed, "Connection reset by peer")),
            .response(200, try recorded("runquery-names-2.json")),
        ])
        var remote = self.remote(script, attempts: 5)
        remote = FirestoreRemote(target: remote.target, endpoint: remote.endpoint, rules: remote.rules, transport: script.transport,
                                 retry: RetryPolicy(maximumAttempts: 5, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), sleep: { s in waits.withLock { $0.append((s.seconds * 1e6).rounded() / 1e6) } }, random: { 0.5 }))
        let listing = try await remote.listRevisions { _ in }
        #expect(listing.revisions.count == 1)
        #expect(waits.withLock { $0 }.count == 3)
        #expect(waits.withLock { $0 }.first == 0.03)
    }

    @Test func unavailableServerEndsWithAClearErrorAfterBoundedAttempts() async throws {
        let script = ScriptedTransport(Array(repeating: .response(503, errorBody(503, "UNAVAILABLE")), count: 10))
        await #expect(throws: RemoteError.unreachable(endpoint: "http://127.0.0.1:9/v1/", detail: "503 UNAVAILABLE", attempts: 4)) {
            _ = try await remote(script).listRevisions { _ in }
        }
        #expect(script.requests.withLock { $0.count } == 4)
    }

    @Test func malformedBodyIsReportedNotCrashed() async throws {
        let script = ScriptedTransport(Array(repeating: .response(200, Array(#"{"documents": [{"name": "x""#.utf8)), count: 4))
        do {
            _ = try await remote(script).listRevisions { _ in }
            Issue.record("expected an error")
        } catch {
            guard case .malformedResponse(let during, let detail) = error else { Issue.record("unexpected \(error)"); return }
            #expect(during == "list books")
            #expect(detail.contains("not valid JSON"))
        }
    }

    @Test func refusedRequestIsNotRetriedAndNeverShowsTheToken() async throws {
        let script = ScriptedTransport([.response(400, errorBody(400, "INVALID_ARGUMENT", "bad field"))])
        do {
            _ = try await remote(script).listRevisions { _ in }
            Issue.record("expected an error")
        } catch {
            #expect(error == .rejected(during: "list books", status: 400, code: "INVALID_ARGUMENT", message: "bad field"))
            #expect(!error.description.contains("secret-token-123"))
        }
        #expect(script.requests.withLock { $0.count } == 1)
    }

    @Test func unauthorizedRefreshesACommandTokenOnce() async throws {
        let script = ScriptedTransport([
            .response(401, errorBody(401, "UNAUTHENTICATED")),
            .response(200, Array("[]".utf8)),
        ])
        let tokens = AccessTokens(source: .command("echo fresh-token"))
        _ = try await remote(script, tokens: tokens).listRevisions { _ in }
        #expect(script.requests.withLock { $0.map { $0.headers["Authorization"] } } == ["Bearer fresh-token", "Bearer fresh-token"])

        let denied = ScriptedTransport(Array(repeating: .response(401, errorBody(401, "UNAUTHENTICATED", "expired")), count: 3))
        await #expect(throws: RemoteError.authentication("Firestore refused the credentials (401 UNAUTHENTICATED): expired")) {
            _ = try await remote(denied).listRevisions { _ in }
        }
    }

    @Test func documentsThatCannotBeRecordsAreInvalidNotLost() throws {
        let remote = self.remote(ScriptedTransport([]))
        let doc: Fields = [
            "name": .string("projects/rec/databases/(default)/documents/books/odd"),
            "updateTime": .string("r1"),
            "fields": .map([
                "title": .map(["stringValue": .string("T")]), "author": .map(["stringValue": .string("A")]),
                "genre": .map(["stringValue": .string("g")]),
                "price": .map(["mapValue": .map(["fields": .map(["$amount": .map(["integerValue": .string("3")])])])]),
            ]),
        ]
        let document = try remote.decodeDocument(doc, during: "test")
        #expect(document.content == .invalid([RecordDiagnostic(message: "field 'price' is a map with a single '$' key, which a record file would read as a tagged value")]))
    }
}

@Suite struct FirestoreEndpointTests {
    @Test func emulatorHostMeansPlainHTTPAndOwnerToken() async throws {
        let endpoint = try FirestoreEndpoint.resolve(environment: ["FIRESTORE_EMULATOR_HOST": "127.0.0.1:8085"], transport: nil)
        #expect(endpoint.baseURL == "http://127.0.0.1:8085/v1/")
        #expect(try await endpoint.tokens.token() == "owner")
    }

    @Test func productionNeedsCredentials() async throws {
        #expect(throws: RemoteError.self) { try FirestoreEndpoint.resolve(environment: [:], transport: nil) }
        let endpoint = try FirestoreEndpoint.resolve(environment: ["BOOKSYNC_ACCESS_TOKEN": "t0k"], transport: nil)
        #expect(endpoint.baseURL == "https://firestore.googleapis.com/v1/")
        #expect(try await endpoint.tokens.token() == "t0k")
    }

    @Test(arguments: ["localhost:1", "127.0.0.1:x", "host", "a/b:1"])
    func emulatorHostIsValidated(host: String) {
        let valid = host == "localhost:1"
        let resolved = (try? FirestoreEndpoint.resolve(environment: ["FIRESTORE_EMULATOR_HOST": host], transport: nil)) != nil
        #expect(resolved == valid)
    }

    @Test func plainHTTPOnlyToLoopback() {
        #expect(throws: RemoteError.configuration("refusing plain HTTP to example.com: only loopback hosts and the emulator may be reached without TLS")) {
            try FirestoreEndpoint.custom(baseURL: "http://example.com/v1", tokens: AccessTokens(source: .fixed("x")))
        }
        #expect((try? FirestoreEndpoint.custom(baseURL: "http://127.0.0.1:9/v1", tokens: AccessTokens(source: .fixed("x"))))?.baseURL == "http://127.0.0.1:9/v1/")
    }
}

/// Record values → Firestore JSON → record values, for every type.
@Suite struct FirestoreValueCodecTests {
    static let root = "projects/p/databases/(default)/documents"
    static let values: [Value] = [
        .null, .bool(true), .integer(Int64.min), .integer(Int64.max), .double(0.1), .double(-0.0), .double(1e300),
        .double(.nan), .double(.infinity), .double(-.infinity), .string("é\n\"\\"), .timestamp(Timestamp(microsecondsSinceEpoch: 1_714_564_800_123_456)),
        .bytes([0, 255]), .reference("authors/x"), .reference("projects/q/databases/(default)/documents/a/b"),
        .geoPoint(latitude: -90, longitude: 180), .array([]), .map([:]), .array([.map(["a": .array([.integer(1)])])]),
    ]

    @Test(arguments: values)
    func roundTrip(_ value: Value) throws {
        let wire = FirestoreValueCodec.encode(value, documentsRoot: Self.root)
        let text = CanonicalJSON.encodeInline(wire)
        let parsed = try JSONParser.parse(Array(text.utf8), decodeTags: false)
        #expect(try FirestoreValueCodec.decode(parsed, documentsRoot: Self.root, path: "v") == value)
    }

    @Test func wireForms() {
        #expect(CanonicalJSON.encodeInline(FirestoreValueCodec.encode(.integer(42), documentsRoot: Self.root)) == #"{"integerValue": "42"}"#)
        #expect(CanonicalJSON.encodeInline(FirestoreValueCodec.encode(.double(.nan), documentsRoot: Self.root)) == #"{"doubleValue": "NaN"}"#)
        #expect(CanonicalJSON.encodeInline(FirestoreValueCodec.encode(.reference("a/b"), documentsRoot: Self.root)) == #"{"referenceValue": "projects/p/databases/(default)/documents/a/b"}"#)
        #expect(CanonicalJSON.encodeInline(FirestoreValueCodec.encode(.array([]), documentsRoot: Self.root)) == #"{"arrayValue": {"values": []}}"#)
    }

    @Test(arguments: [
        (#"{"integerValue": "12x"}"#, "field 'v': integerValue '12x' is not an int64"),
        (#"{"timestampValue": "yesterday"}"#, "field 'v': 'yesterday' is not an RFC 3339 timestamp like 2024-05-01T12:00:00.000000Z"),
        (#"{"vectorValue": {}}"#, "field 'v': unsupported Firestore value 'vectorValue'"),
        (#"{"stringValue": "a", "integerValue": "1"}"#, "field 'v' is not a Firestore value"),
    ])
    func badWireValuesAreExplained(text: String, message: String) throws {
        let parsed = try JSONParser.parse(Array(text.utf8), decodeTags: false)
        #expect(throws: FirestoreValueCodec.DecodeError.self) { try FirestoreValueCodec.decode(parsed, documentsRoot: Self.root, path: "v") }
        do { _ = try FirestoreValueCodec.decode(parsed, documentsRoot: Self.root, path: "v") } catch { #expect(error.message == message) }
    }
}

/// Programs booksync runs (git, token commands), without Foundation's Process.
@Suite struct SubprocessTests {
    @Test(arguments: [
        (["/bin/sh", "-c", "printf 'tok\\n'; exit 0"], Int32(0), "tok\n"),
        (["/bin/sh", "-c", "printf partial; exit 3"], Int32(3), "partial"),
        (["/bin/sh", "-c", "echo to-stderr >&2"], Int32(0), ""),
        (["/bin/sh", "-c", "kill -9 $$"], Int32(128 + 9), ""),
        (["booksync-no-such-program-\(UInt32.random(in: 0...UInt32.max))"], Int32(127), ""),
    ])
    func exitStatusAndOutput(arguments: [String], status: Int32, output: String) {
        let result = Subprocess.run(arguments, captureOutput: true)
        #expect(result.status == status)
        #expect(String(decoding: result.output, as: UTF8.self) == output)
    }

    @Test func tokenCommandOutputIsTheToken() async throws {
        let tokens = AccessTokens(source: .command("printf ' abc.def \\n'"))
        #expect(try await tokens.token() == "abc.def")
        let failing = AccessTokens(source: .command("exit 7"))
        await #expect(throws: RemoteError.authentication("the token command 'exit 7' (from BOOKSYNC_TOKEN_COMMAND) failed (exit 7)")) { try await failing.token() }
    }
}
