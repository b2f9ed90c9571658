import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

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
        let retry = RetryPolicy(maximumAttempts: 2, initialDelay: .seconds(0), sleep: { _ in })
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

    /// Text that is short in characters but long in bytes (letters under
    /// hundreds of combining marks), with the token where the client used to
    /// cut the body (64 KiB) before scrubbing it: the piece before the cut was
    /// not recognised and, the text being under 500 characters, was shown.
    @Test func aTokenAcrossTheBodyCutShowsNoPiece() async {
        let cut = 64 * 1024
        let mark = "x" + String(repeating: "\u{301}", count: 300)  // one character, 601 bytes
        var problems: [String] = []
        for before in 1..<Self.token.utf8.count {
            let filler = cut - before
            let marks = filler / mark.utf8.count
            let rest = filler - marks * mark.utf8.count
            let text = String(repeating: "é", count: rest / 2) + String(repeating: "x", count: rest % 2) + String(repeating: mark, count: marks)
            #expect(text.utf8.count == filler && text.count < FirestoreHTTPClient.shownMessageCharacters)
            let script = ScriptedTransport([.response(400, Array((text + Self.token + " was sent").utf8))])
            do throws(RemoteError) {
                _ = try await remote(script).listRevisions { _ in }
                Issue.record("expected an error")
            } catch {
                if let piece = SecretForms.piece(of: Self.token, in: error.description) { problems.append("\(before) bytes before the cut: '\(piece)'") }
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(3))")
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
        let record = CanonicalRecord(id: try RecordID("dune"), fields: ["id": .string("dune"), "title": .string("T"), "author": .string("A"), "genre": .string("g")],
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

/// How a secret may appear in text a server echoes, and how to look for any
/// piece of it in a message.
enum SecretForms {
    /// RFC 3986's unreserved characters: what every encoder leaves as is.
    static func isUnreserved(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || "-._~".utf8.contains(b)
    }

    /// `text` percent-encoded; `form` writes a space `+` (application/x-www-form-urlencoded).
    static func encode(_ text: String, lowercase: Bool = false, form: Bool = false) -> String {
        var out = ""
        for b in text.utf8 {
            if isUnreserved(b) {
                out.unicodeScalars.append(Unicode.Scalar(b))
            } else if form, b == 0x20 {
                out += "+"
            } else {
                let hex = String(b, radix: 16, uppercase: !lowercase)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }

    /// The forms tested: raw, percent-encoded (both cases of hex), form-encoded.
    static let encodings: [(name: String, encode: @Sendable (String) -> String)] = [
        ("raw", { $0 }), ("percent-encoded", { encode($0) }), ("percent-encoded, lowercase hex", { encode($0, lowercase: true) }),
        ("form-encoded", { encode($0, form: true) }),
    ]

    /// `text` with `%XX` and `+` decoded where they are well formed.
    static func decoded(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let v = UInt8(String(decoding: bytes[i + 1...i + 2], as: UTF8.self), radix: 16) {
                out.append(v)
                i += 3
            } else {
                out.append(bytes[i] == UInt8(ascii: "+") ? 0x20 : bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Characters of a secret that may show: fewer cannot identify it.
    static let window = 6

    /// A run of `window` characters of `secret` found in `message`, raw or decoded.
    static func piece(of secret: String, in message: String) -> String? {
        let characters = Array(secret)
        guard characters.count >= window else { return message.contains(secret) ? secret : nil }
        // Every run of the secret in a set, then every run of the message
        // looked up in it: Foundation's `contains` for each run of the
        // secret was a tenth of the Kit tests' CPU.
        let runs = Set((0...(characters.count - window)).map { String(characters[$0..<$0 + window]) })
        for text in [message, decoded(message)] {
            let shown = Array(text)
            guard shown.count >= window else { continue }
            for start in 0...(shown.count - window) {
                let run = String(shown[start..<start + window])
                if runs.contains(run) { return run }
            }
        }
        return nil
    }
}

/// Secrets in every form an echo may show them, and short secrets next to long ones.
@Suite struct SecretEncodingTests {
    static let secret = "1//0gAbC-dEf_Gh.I~j k+l/m%2Fn"

    @Test(arguments: SecretForms.encodings.map(\.name))
    func everyEncodingIsScrubbed(encoding: String) throws {
        let encode = try #require(SecretForms.encodings.first { $0.name == encoding }).encode
        let redact = SecretRedaction(secrets: [Self.secret])
        let shown = redact("body: refresh_token=" + encode(Self.secret) + "&x=1")
        #expect(shown == "body: refresh_token=[redacted]&x=1")
        #expect(SecretForms.piece(of: Self.secret, in: shown) == nil, "\(shown)")
    }

    /// Mixed: one encoder escapes `/` and another does not, in the same secret.
    @Test func aPartlyEncodedSecretIsScrubbed() {
        let redact = SecretRedaction(secrets: [Self.secret])
        #expect(redact("a 1%2f/0gAbC-dEf_Gh.I%7Ej+k%2Bl/m%252Fn b") == "a [redacted] b")
    }

    /// A one-letter secret (a client secret `e`, say) next to a token: every
    /// secret goes in one pass, so neither breaks the other's marker, and the
    /// token, which contains the letter, goes whole whatever their order.
    @Test(arguments: [["e", SecretRedactionTests.token], [SecretRedactionTests.token, "e"], ["d", "a", SecretRedactionTests.token, "r"]])
    func aShortSecretDoesNotGarbleTheMarker(secrets: [String]) {
        let redact = SecretRedaction(secrets: secrets)
        let shown = redact("got \(SecretRedactionTests.token) | Bearer \(SecretRedactionTests.token).")
        #expect(!shown.contains(SecretRedactionTests.token.prefix(6)), "\(shown)")
        let markers = shown.components(separatedBy: SecretRedaction.replacement)
        #expect(!markers.joined().contains("[") && !markers.joined().contains("]"), "a marker was garbled: \(shown)")
        #expect(shown.hasPrefix("got [redacted] | Bearer [redacted]"), "\(shown)")
    }
}

/// A token endpoint (or the proxy page in front of it) that echoes the form
/// body in its error text: its text is cut to `TokenExchange.shownErrorCharacters`,
/// and a secret that straddles the cut must not show in part (111 of a
/// refresh token's 113 characters did when the text was cut before it was
/// scrubbed). Every secret the request carries, in every form, at every
/// offset where it meets the cut.
@Suite struct TokenEndpointEchoTests {
    /// A refresh token as gcloud's are: `1//` and 110 more characters.
    static let refreshToken = "1//0g" + String(repeating: "Ab9-_xYz0K", count: 11).prefix(108)
    static let clientSecret = "GOCSPX-q7 W+x/%zLm9Rt2"

    struct Case: Sendable, CustomTestStringConvertible {
        let field: String
        let encoding: String
        var testDescription: String { "\(field), \(encoding)" }
    }

    static let userCases = ["refresh_token", "client_secret"].flatMap { field in SecretForms.encodings.map { Case(field: field, encoding: $0.name) } }

    /// The value of `field` in a form body.
    static func formValue(_ field: String, in request: HTTPRequest) -> String? {
        let body = String(decoding: request.body ?? [], as: UTF8.self)
        for pair in body.split(separator: "&") where pair.hasPrefix(field + "=") {
            return SecretForms.decoded(String(pair.dropFirst(field.count + 1)))
        }
        return nil
    }

    /// One exchange whose endpoint answers 400 with `field` of the request,
    /// in `encode`'s form, starting at `offset` of its text: the secret sent
    /// and the message the user reads.
    static func echo(file: String, field: String, encode: @escaping @Sendable (String) -> String, at offset: Int) async throws -> (secret: String, message: String) {
        let server = CredentialSourcesTests.FakeEndpoint { request in
            let text = String(repeating: "#", count: offset) + encode(formValue(field, in: request) ?? "") + String(repeating: "#", count: 40)
            return HTTPResponse(status: 400, headers: ["content-type": "text/html"], body: Array(text.utf8))
        }
        let found = try CredentialSources.load(Array(file.utf8), origin: "the file", transport: server.transport, timeout: 5)
        var message = ""
        do {
            _ = try await found.exchange.fetch()
            Issue.record("no error")
        } catch {
            message = error.description
        }
        let secret = try #require(server.requests.first.flatMap { formValue(field, in: $0) })
        return (secret, message)
    }

    /// `echo` at each offset `offsets` picks from those where the secret (of
    /// this encoded length) meets the cut; the pieces of it that showed.
    static func attack(file: String, field: String, encoding: String, offsets: (Int) -> [Int]) async throws -> [String] {
        let encode = try #require(SecretForms.encodings.first { $0.name == encoding }).encode
        let cut = TokenExchange.shownErrorCharacters
        let length = encode(try await echo(file: file, field: field, encode: encode, at: 0).secret).count
        let planned = offsets(length).filter { $0 >= 0 }
        #expect(planned.contains(cut - 1) && planned.contains(max(cut - length + 1, 0)), "the secret straddles the cut")
        var problems: [String] = []
        for offset in planned {
            let (secret, message) = try await echo(file: file, field: field, encode: encode, at: offset)
            if let piece = SecretForms.piece(of: secret, in: message) { problems.append("offset \(offset): '\(piece)' shown in \(message)") }
        }
        return problems
    }

    @Test(arguments: userCases)
    func noPieceOfAUserSecretShowsAtTheCut(_ test: Case) async throws {
        let file = #"{"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com", "client_secret": "\#(Self.clientSecret)", "#
            + #""refresh_token": "\#(Self.refreshToken)", "token_uri": "http://127.0.0.1:9/token"}"#
        let cut = TokenExchange.shownErrorCharacters
        let problems = try await Self.attack(file: file, field: test.field, encoding: test.encoding) { length in Array((cut - length - 2)...(cut + 2)) }
        #expect(problems.isEmpty, "\(problems.prefix(3))")
    }

    /// The signed JWT is a secret too: whoever holds it gets tokens for an hour.
    /// Signing is slow, so every offset where the cut falls in its last 40
    /// characters or its first 40, and every 9th between.
    @Test(arguments: SecretForms.encodings.map(\.name))
    func noPieceOfTheSignedJWTShowsAtTheCut(encoding: String) async throws {
        let scratch = try ScratchDirectory()
        let pem = try CredentialSourcesTests.generatedKey(in: scratch)
        let file = #"{"type": "service_account", "client_email": "sync@p.iam.gserviceaccount.com", "private_key": \#(CredentialSourcesTests.jsonString(pem)), "#
            + #""token_uri": "http://127.0.0.1:9/token"}"#
        let cut = TokenExchange.shownErrorCharacters
        let problems = try await Self.attack(file: file, field: "assertion", encoding: encoding) { length in
            Array((cut - length - 2)...(cut + 2)).filter { $0 > cut - 40 || $0 < cut - length + 40 || $0 % 9 == 0 }
        }
        #expect(problems.isEmpty, "\(problems.prefix(3))")
    }
}
