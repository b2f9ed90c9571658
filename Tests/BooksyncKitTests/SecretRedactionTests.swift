import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@testable import BooksyncKit

/// Tokens never reach output: server text is scrubbed of them, whatever it echoes.
@Suite struct SecretRedactionTests {
    static let token = "ya29.a0AfH6SMB-secret_token.value~1"

    @Test(arguments: [
        ("Authorization: Bearer \(token)", "Authorization: Bearer [redacted]"),
        ("you sent \(token) twice: \(token)", "you sent [redacted] twice: [redacted]"),
        ("bearer   someOtherToken== was refused", "bearer   [redacted] was refused"),
        ("BEARER\tabc/def+ghi", "BEARER\t[redacted]"),
        ("{\"authorization\": \"Bearer \(token)\"}", "{\"authorization\": \"Bearer [redacted]\"}"),
        // A combining mark glued to the token does not make it another "character".
        ("x\(token)\u{301} y", "x[redacted]\u{301} y"),
        ("no secrets here", "no secrets here"),
        ("Bearer [redacted]", "Bearer [redacted]"),
        ("Bearer", "Bearer"),
    ])
    func scrubs(text: String, expected: String) {
        let redact = SecretRedaction(secrets: [Self.token])
        #expect(redact(text) == expected)
        #expect(redact(redact(text)) == expected, "scrubbing twice changes nothing")
    }
}

/// A server that echoes the request's Authorization header back in its error
/// text, and one that redirects: recorded answers through the HTTP closure seam.
@Suite struct EchoingServerTests {
    static let target = FirestoreTarget(project: "rec", collectionPath: "books")
    static let token = "ya29.echo-me-\(UUID().uuidString)"

    /// What `--verbose` would print.
    final class Log: Sendable {
        let lines = Mutex<[String]>([])
    }

    func remote(_ script: ScriptedTransport, tokens: AccessTokens = AccessTokens(source: .fixed(token)), log: Log = Log()) -> FirestoreRemote {
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: false, tokens: tokens)
        let retry = RetryPolicy(maximumAttempts: 2, initialDelay: 0, sleep: { _ in })
        return FirestoreRemote(target: Self.target, endpoint: endpoint, rules: CollectionConfig(remote: Self.target).rules,
                               transport: script.transport, retry: retry, log: { line in log.lines.withLock { $0.append(line) } })
    }

    static func echo(_ status: Int, _ name: String, token: String = token) -> [UInt8] {
        errorBody(status, name, "the request's header was Authorization: Bearer \(token)")
    }

    /// Every way an error status reaches a message, JSON or not, with the token
    /// at a spot where the old 200-byte cut split it in two.
    static let echoes: [(status: Int, body: [UInt8])] = [
        (400, echo(400, "INVALID_ARGUMENT")), (401, echo(401, "UNAUTHENTICATED")), (403, echo(403, "PERMISSION_DENIED")),
        (404, echo(404, "NOT_FOUND")), (400, Array(("<html>" + String(repeating: "x", count: 180) + token + "</html>").utf8)),
        (403, Array("Forbidden. Your headers: authorization: bearer \(token)".utf8)),
        (400, errorBody(400, "Bearer \(token)", "odd")),
    ]

    @Test(arguments: echoes)
    func errorTextIsScrubbed(status: Int, body: [UInt8]) async {
        let log = Log()
        let script = ScriptedTransport(Array(repeating: .response(status, body), count: 3))
        do throws(RemoteError) {
            _ = try await remote(script, log: log).listRevisions { _ in }
            Issue.record("expected an error")
        } catch {
            #expect(!error.description.contains(Self.token), "\(error)")
            #expect(!error.description.contains(String(Self.token.prefix(12))), "no piece of it either: \(error)")
        }
        #expect(!log.lines.withLock { $0.joined() }.contains(Self.token))
    }

    @Test func tokenFromACommandIsScrubbedToo() async {
        let commandToken = "cmd-token-\(UUID().uuidString)"
        let script = ScriptedTransport(Array(repeating: .response(401, Self.echo(401, "UNAUTHENTICATED", token: commandToken)), count: 3))
        do throws(RemoteError) {
            _ = try await remote(script, tokens: AccessTokens(source: .command("echo \(commandToken)"))).listRevisions { _ in }
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("[redacted]"))
            #expect(!error.description.contains(commandToken), "\(error)")
        }
        #expect(script.requests.withLock { $0.count } == 2, "one refresh of the command token, then the refusal")
    }

    @Test func inStreamErrorsAndWriteStatusesAreScrubbed() async throws {
        let query = ScriptedTransport([.response(200, Array(#"[{"error": {"code": 3, "status": "INVALID_ARGUMENT", "message": "header Bearer \#(Self.token)"}}]"#.utf8))])
        await #expect(throws: RemoteError.rejected(during: "list books", status: 200, code: "INVALID_ARGUMENT", message: "header Bearer [redacted]")) {
            _ = try await remote(query).listRevisions { _ in }
        }
        let write = ScriptedTransport([.response(200, Array(#"{"writeResults": [{}], "status": [{"code": 7, "message": "denied for \#(Self.token)"}]}"#.utf8))])
        let record = Record(id: try RecordID("dune"), fields: ["id": .string("dune"), "title": .string("T"), "author": .string("A"), "genre": .string("g")],
                            leadingKeys: RecordSchema.books.leadingKeys)
        let outcomes = try await remote(write).write([RemoteWrite.create(record)], atomic: false) { _ in }
        #expect(outcomes[try RecordID("dune")] == .rejected("denied for [redacted]"))
    }

    /// A 3xx is an error naming the status; nothing is sent where it points.
    @Test(arguments: [301, 302, 303, 307, 308])
    func redirectsAreErrorsNotFollowed(status: Int) async {
        let script = ScriptedTransport([.response(status, [], headers: ["location": "http://evil.example/v1/?t=\(Self.token)"])])
        do throws(RemoteError) {
            _ = try await remote(script).listRevisions { _ in }
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("answered \(status), a redirect to http://evil.example/v1/?t=[redacted]"), "\(error)")
            #expect(error.description.contains("booksync does not follow redirects"))
        }
        #expect(script.requests.withLock { $0.count } == 1, "not retried, not followed")
    }
}
