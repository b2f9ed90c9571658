import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Credential sources 3–5 (<doc:Firestore>) through the HTTP seam: what is sent
/// to the token endpoint, what is cached, and what a user reads when it fails.
/// CredentialsEndToEndTests does the same over real HTTP with a checking server.
@Suite struct CredentialSourcesTests {
    /// Records the requests and answers each with `answer`.
    final class FakeEndpoint: Sendable {
        let log = Mutex<[HTTPRequest]>([])
        let answer: @Sendable (HTTPRequest) throws(TransportError) -> HTTPResponse

        init(_ answer: @escaping @Sendable (HTTPRequest) throws(TransportError) -> HTTPResponse) { self.answer = answer }

        var requests: [HTTPRequest] { log.withLock { $0 } }

        var transport: HTTPTransport {
            { request throws(TransportError) in
                self.log.withLock { $0.append(request) }
                return try self.answer(request)
            }
        }

        static func json(_ status: Int, _ text: String) -> HTTPResponse {
            HTTPResponse(status: status, headers: ["content-type": "application/json"], body: Array(text.utf8))
        }
    }

    /// A 2048-bit key made by openssl, as PKCS#8 PEM.
    static func generatedKey(in scratch: ScratchDirectory) throws -> String {
        try #require(RSAOpenSSLTests.openssl != nil, "openssl is not installed")
        let made = try RSAOpenSSLTests.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "sa.pem"], in: scratch.path)
        try #require(made.status == 0, "\(made.stderr)")
        return try scratch.read("sa.pem")
    }

    static func jsonString(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes]), as: UTF8.self).dropFirst().dropLast().description
    }

    @Test func aServiceAccountFileIsExchangedOnceAndRefreshedOnRequest() async throws {
        let scratch = try ScratchDirectory()
        let pem = try Self.generatedKey(in: scratch)
        try scratch.write("sa.json", """
            {"type": "service_account", "client_email": "sync@p.iam.gserviceaccount.com", "private_key_id": "k1",
             "private_key": \(Self.jsonString(pem)), "token_uri": "https://oauth2.example.test/token", "quota_project_id": "billing-p"}
            """)
        let count = Mutex(0)
        let server = FakeEndpoint { _ in
            let n = count.withLock { $0 += 1; return $0 }
            return FakeEndpoint.json(200, #"{"access_token": "at-\#(n)", "expires_in": 3599, "token_type": "Bearer"}"#)
        }
        let endpoint = try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": scratch.path + "/sa.json", "HOME": scratch.path],
                                                     transport: server.transport)
        #expect(endpoint.quotaProject == "billing-p")
        #expect(endpoint.credentialSource
            == "service_account from the credentials file \(scratch.path)/sa.json (GOOGLE_APPLICATION_CREDENTIALS), as sync@p.iam.gserviceaccount.com")
        let beforeExchange = Date().timeIntervalSince1970
        #expect(try await endpoint.tokens.token() == "at-1")
        let afterExchange = Date().timeIntervalSince1970
        #expect(try await endpoint.tokens.token() == "at-1")
        #expect(server.requests.count == 1, "a cached token is not fetched again")
        #expect(try await endpoint.tokens.token(refresh: true) == "at-2")
        let request = try #require(server.requests.first)
        #expect(request.method == "POST" && request.url == "https://oauth2.example.test/token")
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        let body = String(decoding: request.body ?? [], as: UTF8.self)
        #expect(body.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="))
        let jwt = body.split(separator: "=").last.map(String.init) ?? ""
        let parts = jwt.split(separator: ".")
        try #require(parts.count == 3)
        var claims = String(parts[1])
        claims = claims.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while claims.count % 4 != 0 { claims += "=" }
        let decoded = try #require(Data(base64Encoded: claims).flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        #expect(decoded["aud"] as? String == "https://oauth2.example.test/token")
        #expect(decoded["iss"] as? String == "sync@p.iam.gserviceaccount.com")
        #expect(decoded["scope"] as? String == "https://www.googleapis.com/auth/datastore")
        let iat = try #require(decoded["iat"] as? Int)
        // Issued during the exchange (whole seconds), however long a loaded machine took to sign.
        #expect(Double(iat) >= beforeExchange.rounded(.down) - 1 && Double(iat) <= afterExchange + 1, "iat \(iat)")
        // GOOGLE_CLOUD_QUOTA_PROJECT wins over the file's.
        let overridden = try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": scratch.path + "/sa.json",
                                                                     "GOOGLE_CLOUD_QUOTA_PROJECT": "other"], transport: server.transport)
        #expect(overridden.quotaProject == "other")
    }

    /// A 401 from Firestore gets one new token from the endpoint, then the
    /// request again with it; the quota project rides on every request.
    /// Parallel first requests share one exchange.
    @Test func firestore401FetchesOneNewTokenAndParallelRequestsShareAnExchange() async throws {
        let scratch = try ScratchDirectory()
        try scratch.write("user.json", #"{"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r", "quota_project_id": "qp"}"#)
        let issuedCount = Mutex(0)
        let firestoreCount = Mutex(0)
        let server = FakeEndpoint { request in
            if request.url == TokenExchange.defaultTokenURI {
                let n = issuedCount.withLock { $0 += 1; return $0 }
                return FakeEndpoint.json(200, #"{"access_token": "at-\#(n)", "expires_in": 3600}"#)
            }
            let n = firestoreCount.withLock { $0 += 1; return $0 }
            return n == 1 ? FakeEndpoint.json(401, #"{"error": {"code": 401, "status": "UNAUTHENTICATED", "message": "expired"}}"#)
                          : FakeEndpoint.json(200, "[]")
        }
        let resolved = try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": scratch.path + "/user.json"], transport: server.transport)
        let endpoint = try FirestoreEndpoint.custom(baseURL: "http://127.0.0.1:9/v1/", tokens: resolved.tokens, quotaProject: resolved.quotaProject)
        let target = FirestoreTarget(project: "p", database: "(default)", collectionPath: "books")
        let retry = RetryPolicy(maximumAttempts: 2, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20), sleep: { _ in }, random: { 0.5 })
        let remote = FirestoreRemote(target: target, endpoint: endpoint, rules: CollectionConfig(remote: target).rules, transport: server.transport, retry: retry)
        _ = try await remote.listRevisions { _ in }
        let firestore = server.requests.filter { $0.url != TokenExchange.defaultTokenURI }
        #expect(firestore.map { $0.headers["Authorization"] } == ["Bearer at-1", "Bearer at-2"])
        #expect(firestore.allSatisfy { $0.headers["x-goog-user-project"] == "qp" })
        #expect(issuedCount.withLock { $0 } == 2)

        let fresh = try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": scratch.path + "/user.json"], transport: server.transport)
        let tokens = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<8 { group.addTask { try await fresh.tokens.token() } }
            return try await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(tokens == ["at-3"], "one exchange for eight parallel requests")
        #expect(issuedCount.withLock { $0 } == 3)
    }

    /// A relative CLOUDSDK_CONFIG is found from the current directory, as gcloud opens it.
    @Test(arguments: [
        ("gcloud-config", "/work/dir", "/work/dir/gcloud-config/application_default_credentials.json"),
        ("./a/../b", "/w", "/w/./a/../b/application_default_credentials.json"),
        ("/etc/gcloud", "/w", "/etc/gcloud/application_default_credentials.json"),
    ])
    func cloudSDKConfigIsResolvedLikeGcloud(config: String, currentDirectory: String, expected: String) {
        #expect(CredentialSources.adcPath(environment: ["CLOUDSDK_CONFIG": config, "HOME": "/home/u"], currentDirectory: currentDirectory) == expected)
    }

    /// The token command still comes first; an ADC file comes before the metadata server.
    @Test func sourcesAreTriedInDesignOrder() throws {
        let scratch = try ScratchDirectory()
        try scratch.write("application_default_credentials.json", """
            {"type": "authorized_user", "client_id": "cid", "client_secret": "csecret", "refresh_token": "1//refresh"}
            """)
        let server = FakeEndpoint { _ throws(TransportError) in throw TransportError(.connectionFailed, "refused") }
        let env = ["CLOUDSDK_CONFIG": scratch.path, "HOME": "/nonexistent"]
        #expect(try FirestoreEndpoint.resolve(environment: env.merging(["BOOKSYNC_TOKEN_COMMAND": "echo t"]) { $1 }, transport: server.transport)
            .credentialSource == "the token command in BOOKSYNC_TOKEN_COMMAND")
        #expect(try FirestoreEndpoint.resolve(environment: env, transport: server.transport).credentialSource
            == "authorized_user from gcloud's credentials file \(scratch.path)/application_default_credentials.json")
        #expect(try FirestoreEndpoint.resolve(environment: ["HOME": scratch.path, "GCE_METADATA_HOST": "127.0.0.1:9"], transport: server.transport)
            .credentialSource == "the metadata server 127.0.0.1:9")
        // NO_GCE_CHECK (google-auth's switch) leaves the metadata server out: the plain "no credentials" sentence.
        #expect(throws: RemoteError.self) {
            try FirestoreEndpoint.resolve(environment: ["HOME": "/nonexistent", "NO_GCE_CHECK": "true"], transport: server.transport)
        }
    }

    @Test func theMetadataServerIsAskedWithItsHeaderAndAShortTimeout() async throws {
        let scratch = try ScratchDirectory()
        let server = FakeEndpoint { _ in FakeEndpoint.json(200, #"{"access_token": "meta-1", "expires_in": 100}"#) }
        let endpoint = try FirestoreEndpoint.resolve(environment: ["HOME": scratch.path, "GCE_METADATA_HOST": "127.0.0.1:9"],
                                                     commandTimeout: .seconds(30), transport: server.transport)
        #expect(try await endpoint.tokens.token() == "meta-1")
        let request = try #require(server.requests.first)
        #expect(request.method == "GET")
        #expect(request.url == "http://127.0.0.1:9/computeMetadata/v1/instance/service-accounts/default/token")
        #expect(request.headers["Metadata-Flavor"] == "Google")
        #expect(request.timeout <= .seconds(TokenExchange.metadataTimeout))
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        let name: String
        let file: String
        let answer: @Sendable (HTTPRequest) throws(TransportError) -> HTTPResponse
        let says: [String]
        var testDescription: String { name }
    }

    static let authorizedUser = #"{"type": "authorized_user", "client_id": "cid", "client_secret": "csecret-XYZ", "refresh_token": "1//refresh-SECRET"}"#

    static let failures: [Failure] = [
        Failure(name: "expired refresh token", file: authorizedUser,
                answer: { _ in FakeEndpoint.json(400, #"{"error": "invalid_grant", "error_description": "Bad Request 1//refresh-SECRET"}"#) },
                says: ["invalid_grant", "run 'gcloud auth application-default login'", "the token endpoint https://oauth2.googleapis.com/token refused it (400"]),
        Failure(name: "unknown type", file: #"{"type": "external_account_authorized_user", "audience": "x"}"#,
                answer: { _ in FakeEndpoint.json(200, "{}") },
                says: ["holds credentials of type 'external_account_authorized_user', which booksync does not use"]),
        Failure(name: "plain HTTP token_uri", file: #"{"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r", "token_uri": "http://tokens.example.test/token"}"#,
                answer: { _ in FakeEndpoint.json(200, "{}") },
                says: ["its token_uri http://tokens.example.test/token is plain HTTP"]),
        Failure(name: "unreachable endpoint", file: authorizedUser,
                answer: { _ throws(TransportError) in throw TransportError(.connectionFailed, "could not connect to the server") },
                says: ["cannot reach the token endpoint https://oauth2.googleapis.com/token: could not connect to the server"]),
        Failure(name: "redirect", file: authorizedUser,
                answer: { _ in HTTPResponse(status: 302, headers: ["location": "https://elsewhere.test/"], body: []) },
                says: ["answered with a redirect (302), which booksync does not follow"]),
        Failure(name: "no access_token", file: authorizedUser,
                answer: { _ in FakeEndpoint.json(200, #"{"token_type": "Bearer"}"#) },
                says: ["answered without an access_token"]),
        Failure(name: "form body echoed", file: authorizedUser,
                answer: { request in HTTPResponse(status: 400, headers: ["content-type": "text/plain"], body: request.body ?? []) },
                says: ["refused it (400"]),
        // A place in a text file is its line and column, never "byte 3:3".
        Failure(name: "not JSON", file: "{\n  \"type\": \"authorized_user\",\n  oops\n}",
                answer: { _ in FakeEndpoint.json(200, "{}") },
                says: ["is not a JSON object (line 3, column 3: "]),
        Failure(name: "damaged key", file: #"{"type": "service_account", "client_email": "e", "private_key": "not a key"}"#,
                answer: { _ in FakeEndpoint.json(200, "{}") },
                says: ["its private_key is not a PEM private key"]),
    ]

    @Test(arguments: failures)
    func failuresNameTheFileAndTheCauseAndNoSecret(_ failure: Failure) async throws {
        let scratch = try ScratchDirectory()
        try scratch.write("creds.json", failure.file)
        let server = FakeEndpoint(failure.answer)
        let message: String
        do {
            let endpoint = try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": scratch.path + "/creds.json"],
                                                         transport: server.transport)
            _ = try await endpoint.tokens.token()
            Issue.record("no error")
            return
        } catch {
            message = error.description
        }
        #expect(message.contains("the credentials file \(scratch.path)/creds.json (GOOGLE_APPLICATION_CREDENTIALS)"), "\(message)")
        for expected in failure.says { #expect(message.contains(expected), "\(message)") }
        #expect(!message.contains("refresh-SECRET") && !message.contains("csecret-XYZ"), "\(message)")
    }

    /// Google's answer (recorded) to a JWT whose `iat`/`exp` are not around
    /// its own time: the machine's clock is off, and a new key would not help.
    static let clockRefusal = #"{"error":"invalid_grant","error_description":"Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."}"#

    @Test func aJWTRefusedForItsTimesBlamesTheClockNotTheKey() async throws {
        let scratch = try ScratchDirectory()
        let pem = try Self.generatedKey(in: scratch)
        try scratch.write("sa.json", """
            {"type": "service_account", "client_email": "sync@p.iam.gserviceaccount.com", "private_key": \(Self.jsonString(pem))}
            """)
        let server = FakeEndpoint { _ in FakeEndpoint.json(400, Self.clockRefusal) }
        let endpoint = try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": scratch.path + "/sa.json"], transport: server.transport)
        let message: String
        do {
            _ = try await endpoint.tokens.token()
            Issue.record("no error")
            return
        } catch {
            message = error.description
        }
        // The iat the JWT carried, read back from the request.
        let body = String(decoding: try #require(server.requests.first?.body), as: UTF8.self)
        let assertion = try #require(body.split(separator: "&").first { $0.hasPrefix("assertion=") }?.dropFirst("assertion=".count))
        var payload = String(assertion.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        let decoded = try #require(Data(base64Encoded: payload))
        let claims = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
        let iat = try #require(claims["iat"] as? Int)
        let shown = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(iat)))  // 2025-01-31T23:59:59Z
        let expected = shown.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
        #expect(message.contains("Invalid JWT: Token must be a short-lived token"), "\(message)")
        #expect(message.contains("this machine's clock may be off: the JWT said it was issued at \(expected) (iat \(iat))"), "\(message)")
        #expect(!message.contains("new JSON key") && !message.contains("create a new"), "\(message)")
    }

    /// Seconds since 1970 as a UTC time, checked against Foundation's calendar
    /// (leap days, centuries, before 1970).
    @Test(arguments: [Int64(0), -1, 951_782_400, 4_107_542_399, 1_735_689_599, -2_208_988_800, 13_569_465_600, 1_000_000_007])
    func utcTimeIsTheCalendarTime(seconds: Int64) {
        let shown = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(seconds)))
        #expect(TokenExchange.utcTime(seconds) == shown.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC"))
    }

    /// `expires_in` from the endpoint is bounded: a huge one must not overflow
    /// (it crashed booksync), a zero or negative one must not mean an exchange per request.
    @Test(arguments: ["10000000000000000", "1e300", "9223372036854775807", "0", "-5"])
    func anyStatedLifetimeIsBounded(expiresIn: String) async throws {
        let scratch = try ScratchDirectory()
        let server = FakeEndpoint { _ in FakeEndpoint.json(200, #"{"access_token": "tok-1", "expires_in": \#(expiresIn)}"#) }
        let endpoint = try FirestoreEndpoint.resolve(environment: ["HOME": scratch.path, "GCE_METADATA_HOST": "127.0.0.1:9"],
                                                     commandTimeout: .seconds(30), transport: server.transport)
        #expect(try await endpoint.tokens.token() == "tok-1")
        #expect(try await endpoint.tokens.token() == "tok-1")
        #expect(server.requests.count == 1)
    }

    /// A 503 or a dropped connection at the token endpoint is tried again, as
    /// Firestore requests are; a refusal is not.
    @Test func aTransientTokenEndpointFailureIsRetried() async throws {
        let scratch = try ScratchDirectory()
        let calls = Mutex(0)
        let server = FakeEndpoint { _ throws(TransportError) in
            let n = calls.withLock { $0 += 1; return $0 }
            if n == 1 { return FakeEndpoint.json(503, #"{"error": "unavailable"}"#) }
            if n == 2 { throw TransportError(.connectionFailed, "connection reset") }
            return FakeEndpoint.json(200, #"{"access_token": "tok-3", "expires_in": 3600}"#)
        }
        let endpoint = try FirestoreEndpoint.resolve(environment: ["HOME": scratch.path, "GCE_METADATA_HOST": "127.0.0.1:9"],
                                                     commandTimeout: .seconds(30), transport: server.transport)
        #expect(try await endpoint.tokens.token() == "tok-3")
        #expect(server.requests.count == 3)
    }

    @Test func aMissingCredentialsFileIsNamed() throws {
        let server = FakeEndpoint { _ in FakeEndpoint.json(200, "{}") }
        #expect(throws: RemoteError.configuration("the credentials file /nonexistent/k.json (GOOGLE_APPLICATION_CREDENTIALS) does not exist; point GOOGLE_APPLICATION_CREDENTIALS at a service-account key file, or unset it")) {
            try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent/k.json"], transport: server.transport)
        }
    }
}
