import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// `external_account` files (workload identity federation) through the HTTP
/// seam: the exact STS and IAM requests, the subject token read from a file
/// or a URL, every refusal before anything is sent, and no secret in any
/// message. CredentialsEndToEndTests runs the same over real HTTP.
@Suite struct ExternalAccountTests {
    typealias FakeEndpoint = CredentialSourcesTests.FakeEndpoint

    static let audience = "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/ci/providers/gh"
    static let stsURL = "https://sts.example.test/v1/token"
    static let iamURL = "https://iam.example.test/v1/projects/-/serviceAccounts/ci@proj.iam.gserviceaccount.com:generateAccessToken"
    static let subject = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOm9yZy9hcHAifQ.SUBJECT-signature-0123456789abcdef"

    /// A file's JSON from a dictionary (nested objects allowed).
    static func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    /// A form body as a dictionary (each value percent-decoded).
    static func form(_ request: HTTPRequest) -> [String: String] {
        var out: [String: String] = [:]
        for pair in String(decoding: request.body ?? [], as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            out[parts[0]] = parts.count > 1 ? parts[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding : ""
        }
        return out
    }

    static func body(_ request: HTTPRequest) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(request.body ?? [])) as? [String: Any]) ?? [:]
    }

    /// An RFC 3339 time `seconds` from now, as IAM writes it.
    static func expireTime(in seconds: Double) -> String {
        ISO8601DateFormatter().string(from: Date().addingTimeInterval(seconds))
    }

    /// Answers the STS with `federated` and IAM with `final`, recording both.
    static func stsAndIAM(federated: String = "fed-token-XYZ", final: String = "ya29.final", expiresIn: Double = 3600) -> FakeEndpoint {
        FakeEndpoint { request in
            if request.url.hasSuffix(":generateAccessToken") {
                return FakeEndpoint.json(200, #"{"accessToken": "\#(final)", "expireTime": "\#(expireTime(in: expiresIn))"}"#)
            }
            if request.method == "GET" { return FakeEndpoint.json(200, #"{"id_token": "\#(subject)", "other": "x"}"#) }
            return FakeEndpoint.json(200, #"{"access_token": "\#(federated)", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer", "expires_in": 3599}"#)
        }
    }

    func resolve(_ file: String, in scratch: ScratchDirectory, server: FakeEndpoint, environment: [String: String] = [:]) throws -> FirestoreEndpoint {
        try scratch.write("creds.json", file)
        return try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": scratch.path + "/creds.json"].merging(environment) { $1 },
                                             transport: server.transport)
    }

    @Test func aFileSubjectTokenIsExchangedAtTheSTSThenImpersonates() async throws {
        let scratch = try ScratchDirectory()
        try scratch.write("token.jwt", Self.subject + "\n")
        let server = Self.stsAndIAM()
        let endpoint = try resolve(Self.json([
            "type": "external_account", "audience": Self.audience, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": Self.stsURL, "credential_source": ["file": scratch.path + "/token.jwt"],
            "service_account_impersonation_url": Self.iamURL, "service_account_impersonation": ["token_lifetime_seconds": 1800],
            "quota_project_id": "billing",
        ]), in: scratch, server: server)
        #expect(endpoint.quotaProject == "billing")
        #expect(endpoint.credentialSource == "external_account from the credentials file \(scratch.path)/creds.json (GOOGLE_APPLICATION_CREDENTIALS): "
            + "subject token from the file \(scratch.path)/token.jwt, exchanged at \(Self.stsURL), impersonating ci@proj.iam.gserviceaccount.com")
        #expect(try await endpoint.tokens.token() == "ya29.final")
        #expect(try await endpoint.tokens.token() == "ya29.final")
        #expect(server.requests.count == 2, "the final token is cached")

        let sts = server.requests[0]
        #expect(sts.method == "POST" && sts.url == Self.stsURL)
        #expect(sts.headers == ["Content-Type": "application/x-www-form-urlencoded"], "no client: no Authorization")
        #expect(Self.form(sts) == [
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "audience": Self.audience,
            "scope": "https://www.googleapis.com/auth/cloud-platform",
            "requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "subject_token": Self.subject, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        ])
        let iam = server.requests[1]
        #expect(iam.method == "POST" && iam.url == Self.iamURL)
        #expect(iam.headers == ["Content-Type": "application/json", "Authorization": "Bearer fed-token-XYZ"])
        let body = Self.body(iam)
        #expect(body["scope"] as? [String] == ["https://www.googleapis.com/auth/datastore"])
        #expect(body["lifetime"] as? String == "1800s")
        #expect(body["delegates"] == nil)
        #expect(Set(body.keys) == ["scope", "lifetime"])

        // Every secret met on the way is scrubbed from later text, as a refresh token is.
        let scrubbed = await endpoint.tokens.redaction()("echo: \(Self.subject) fed-token-XYZ ya29.final")
        #expect(scrubbed == "echo: [redacted] [redacted] [redacted]")
    }

    /// The token's lifetime is IAM's expireTime minus now, so AccessTokens refreshes it in time.
    @Test(arguments: [100.0, 1000, 3600])
    func theLifetimeComesFromExpireTime(seconds: Double) async throws {
        let scratch = try ScratchDirectory()
        try scratch.write("token.jwt", Self.subject)
        let server = Self.stsAndIAM(expiresIn: seconds)
        let found = try CredentialSources.load(Array(Self.json([
            "type": "external_account", "audience": Self.audience, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": Self.stsURL, "credential_source": ["file": scratch.path + "/token.jwt"], "service_account_impersonation_url": Self.iamURL,
        ]).utf8), origin: "f", transport: server.transport, timeout: 5)
        let issued = try await found.exchange.fetch()
        #expect(issued.token == "ya29.final")
        #expect(abs(issued.lifetime - seconds) < 3, "\(issued.lifetime)")
    }

    /// Without impersonation the federated token is Firestore's (datastore
    /// scope); a client goes in Basic authentication; a workforce pool's user
    /// project goes in `options` only without a client (Google's rule).
    @Test func aClientAndAWorkforceProjectAreSentAsGooglesLibrariesSendThem() async throws {
        let scratch = try ScratchDirectory()
        try scratch.write("token.txt", "  saml-assertion-PQR  \n")
        let workforce = "//iam.googleapis.com/locations/global/workforcePools/staff/providers/okta"
        var file: [String: Any] = [
            "type": "external_account", "audience": workforce, "subject_token_type": "urn:ietf:params:oauth:token-type:saml2",
            "token_url": Self.stsURL, "credential_source": ["file": scratch.path + "/token.txt", "format": ["type": "text"]],
            "workforce_pool_user_project": "4567",
        ]
        let server = Self.stsAndIAM()
        let endpoint = try resolve(Self.json(file), in: scratch, server: server)
        #expect(try await endpoint.tokens.token() == "fed-token-XYZ")
        #expect(endpoint.credentialSource.hasSuffix("(no service account impersonated)"))
        let plain = try #require(server.requests.last)
        #expect(Self.form(plain)["scope"] == "https://www.googleapis.com/auth/datastore")
        #expect(Self.form(plain)["subject_token"] == "saml-assertion-PQR")
        #expect(Self.form(plain)["options"] == #"{"userProject":"4567"}"#)
        #expect(plain.headers["Authorization"] == nil)

        file["client_id"] = "client-1"
        file["client_secret"] = "s3cret:with/odd chars"
        let withClient = try resolve(Self.json(file), in: scratch, server: server)
        _ = try await withClient.tokens.token()
        let sent = try #require(server.requests.last)
        #expect(sent.headers["Authorization"] == "Basic " + Data("client-1:s3cret:with/odd chars".utf8).base64EncodedString())
        #expect(Self.form(sent)["options"] == nil, "the client names the project")
        #expect(Self.form(sent)["client_secret"] == nil, "the secret travels in the header only")
    }

    @Test func aURLSubjectTokenIsFetchedWithItsHeadersAndReadAsJSON() async throws {
        let scratch = try ScratchDirectory()
        let server = Self.stsAndIAM()
        let endpoint = try resolve(Self.json([
            "type": "external_account", "audience": Self.audience, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": Self.stsURL,
            "credential_source": ["url": "http://127.0.0.1:9/subject?resource=x", "headers": ["Metadata": "True", "X-Extra": "1"],
                                  "format": ["type": "json", "subject_token_field_name": "id_token"]],
        ]), in: scratch, server: server)
        #expect(try await endpoint.tokens.token() == "fed-token-XYZ")
        let get = try #require(server.requests.first)
        #expect(get.method == "GET" && get.url == "http://127.0.0.1:9/subject?resource=x")
        #expect(get.headers == ["Metadata": "True", "X-Extra": "1"])
        #expect(Self.form(server.requests[1])["subject_token"] == Self.subject)
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let file: String
        var environment: [String: String] = [:]
        let says: String
        var testDescription: String { name }
    }

    /// A valid file with `changes` (member → raw JSON) applied.
    static func external(_ changes: [String: String], removing: [String] = []) -> String {
        var file = [
            "type": #""external_account""#, "audience": "\"\(audience)\"", "subject_token_type": #""urn:ietf:params:oauth:token-type:jwt""#,
            "token_url": "\"\(stsURL)\"", "credential_source": #"{"file": "/var/run/token"}"#,
        ]
        for key in removing { file[key] = nil }
        file.merge(changes) { $1 }
        return "{" + file.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
    }

    static let executable = #"{"executable": {"command": "/usr/bin/get-token --flag", "timeout_millis": 5000}}"#

    /// Each is refused when the file is read: nothing is sent, nothing is run.
    static let refusals: [Refusal] = [
        Refusal(name: "no audience", file: external([:], removing: ["audience"]), says: "has no \"audience\"; make the file again with 'gcloud iam workload-identity-pools create-cred-config'"),
        Refusal(name: "no subject_token_type", file: external([:], removing: ["subject_token_type"]), says: "has no \"subject_token_type\""),
        Refusal(name: "no credential_source", file: external([:], removing: ["credential_source"]), says: "has no \"credential_source\""),
        Refusal(name: "credential_source not an object", file: external(["credential_source": #""/var/run/token""#]), says: "its \"credential_source\" must be a JSON object"),
        Refusal(name: "plain HTTP token_url", file: external(["token_url": #""http://sts.example.test/v1/token""#]),
                says: "its token_url http://sts.example.test/v1/token is plain HTTP; booksync sends credentials only over HTTPS"),
        Refusal(name: "token_url not a URL", file: external(["token_url": #""https://user@evil.test/""#]), says: "its token_url 'https://user@evil.test/' is not a URL"),
        Refusal(name: "plain HTTP subject URL", file: external(["credential_source": #"{"url": "http://169.254.169.254/metadata/identity"}"#]),
                says: "its credential_source.url http://169.254.169.254/metadata/identity is plain HTTP"),
        Refusal(name: "plain HTTP impersonation URL", file: external(["service_account_impersonation_url": #""http://iam.example.test/v1/projects/-/serviceAccounts/a@b:generateAccessToken""#]),
                says: "its service_account_impersonation_url http://iam.example.test/v1/projects/-/serviceAccounts/a@b:generateAccessToken is plain HTTP"),
        Refusal(name: "impersonation URL without an account", file: external(["service_account_impersonation_url": #""https://iam.example.test/v1/token""#]),
                says: "names no service account; it should end in /serviceAccounts/EMAIL:generateAccessToken"),
        Refusal(name: "lifetime out of range", file: external(["service_account_impersonation_url": "\"\(iamURL)\"", "service_account_impersonation": #"{"token_lifetime_seconds": 60}"#]),
                says: "token_lifetime_seconds must be a whole number of seconds from 600 to 43200"),
        Refusal(name: "executable without the variable", file: external(["credential_source": executable]),
                says: "which Google's libraries run only when GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1 is set, and booksync does not run executable-sourced credentials at all yet"),
        Refusal(name: "executable with the variable", file: external(["credential_source": executable]), environment: ["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "1"],
                says: "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1 allows it, but booksync does not run executable-sourced credentials yet"),
        Refusal(name: "AWS", file: external(["subject_token_type": #""urn:ietf:params:aws:token-type:aws4_request""#,
                                             "credential_source": #"{"environment_id": "aws1", "region_url": "http://169.254.169.254/latest/meta-data/placement/availability-zone"}"#]),
                says: "its credential_source is AWS's (environment_id 'aws1'), which booksync does not read"),
        Refusal(name: "certificate", file: external(["credential_source": #"{"certificate": {"use_default_certificate_config": true}}"#]),
                says: "its credential_source.certificate (X.509 workload identity federation, mutual TLS) is not supported"),
        Refusal(name: "file and url", file: external(["credential_source": #"{"file": "/t", "url": "https://x.test/t"}"#]), says: "has both \"file\" and \"url\""),
        Refusal(name: "neither file nor url", file: external(["credential_source": #"{"headers": {"a": "b"}}"#]), says: "has neither \"file\" nor \"url\""),
        Refusal(name: "unknown format", file: external(["credential_source": #"{"file": "/t", "format": {"type": "xml"}}"#]), says: "its credential_source.format.type is 'xml'"),
        Refusal(name: "json without a field name", file: external(["credential_source": #"{"file": "/t", "format": {"type": "json"}}"#]),
                says: "has no \"credential_source.format.subject_token_field_name\""),
        Refusal(name: "header not a string", file: external(["credential_source": #"{"url": "https://x.test/t", "headers": {"Metadata": true}}"#]),
                says: "its \"credential_source.headers.Metadata\" must be a string"),
        Refusal(name: "workforce project on a workload pool", file: external(["workforce_pool_user_project": #""123""#]),
                says: "sets workforce_pool_user_project, but its audience is not a workforce pool's"),
    ]

    @Test(arguments: refusals)
    func aFileBooksyncCannotUseIsRefusedBeforeAnythingIsSent(_ refusal: Refusal) throws {
        let scratch = try ScratchDirectory()
        let server = FakeEndpoint { _ in FakeEndpoint.json(200, "{}") }
        do {
            _ = try resolve(refusal.file, in: scratch, server: server, environment: refusal.environment)
            Issue.record("accepted: \(refusal.file)")
        } catch let error as RemoteError {
            #expect(error.description.hasPrefix("the credentials file \(scratch.path)/creds.json (GOOGLE_APPLICATION_CREDENTIALS)"), "\(error)")
            #expect(error.description.contains(refusal.says), "\(error)")
        } catch {
            Issue.record("not a RemoteError: \(error)")
        }
        #expect(server.requests.isEmpty)
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        let name: String
        /// `credential_source` as raw JSON; `$DIR` is the scratch directory.
        var source = #"{"file": "$DIR/token.jwt"}"#
        var impersonate = true
        var subjectFile: String? = ExternalAccountTests.subject
        let answer: @Sendable (HTTPRequest) throws(TransportError) -> HTTPResponse
        let says: [String]
        var testDescription: String { name }
    }

    /// Text that echoes a request back, as a careless server or proxy does.
    static func echo(_ status: Int, _ request: HTTPRequest) -> HTTPResponse {
        let said = "\(request.headers["Authorization"] ?? "") \(String(decoding: request.body ?? [], as: UTF8.self))"
        return FakeEndpoint.json(status, #"{"error": "invalid_grant", "error_description": "\#(said.replacingOccurrences(of: "\"", with: "'"))"}"#)
    }

    static let failures: [Failure] = [
        Failure(name: "STS refuses and echoes the form", answer: { request in echo(400, request) },
                says: ["the STS at \(stsURL) answered 400 invalid_grant: ", "check the file's audience"]),
        Failure(name: "STS refuses and echoes the subject token raw", answer: { _ in
            FakeEndpoint.json(400, #"{"error": "invalid_grant", "error_description": "The subject token \#(subject) is expired (signature SUBJECT-signature-0123456789abcdef)"}"#)
        }, says: ["answered 400 invalid_grant: The subject token [redacted] is expired (signature [redacted])"]),
        Failure(name: "STS unreachable", answer: { _ throws(TransportError) in throw TransportError(.connectionFailed, "connection refused") },
                says: ["cannot reach the STS at \(stsURL): connection refused"]),
        Failure(name: "STS redirects", answer: { _ in HTTPResponse(status: 307, headers: ["location": "https://elsewhere.test/"], body: []) },
                says: ["the STS at \(stsURL) answered with a redirect (307), which booksync does not follow"]),
        Failure(name: "STS answers no token", answer: { _ in FakeEndpoint.json(200, #"{"token_type": "Bearer"}"#) },
                says: ["the STS at \(stsURL) answered without an access_token"]),
        Failure(name: "IAM refuses and echoes the federated token", answer: { request in
            if request.url == stsURL { return FakeEndpoint.json(200, #"{"access_token": "fed-SECRET-777", "expires_in": 3600}"#) }
            return FakeEndpoint.json(403, #"{"error": {"code": 403, "status": "PERMISSION_DENIED", "message": "Permission 'iam.serviceAccounts.getAccessToken' denied for \#(request.headers["Authorization"]!) and fed-SECRET-777"}}"#)
        }, says: ["impersonating ci@proj.iam.gserviceaccount.com was refused (403 PERMISSION_DENIED: Permission 'iam.serviceAccounts.getAccessToken' denied for Bearer [redacted] and [redacted])",
                  "roles/iam.serviceAccountTokenCreator"]),
        Failure(name: "IAM answers an expired token", answer: { request in
            if request.url == stsURL { return FakeEndpoint.json(200, #"{"access_token": "fed-1", "expires_in": 3600}"#) }
            return FakeEndpoint.json(200, #"{"accessToken": "ya29.old", "expireTime": "2001-01-01T00:00:00Z"}"#)
        }, says: ["answered with a token that expired at 2001-01-01T00:00:00Z", "this machine's clock may be off"]),
        Failure(name: "IAM answers no expireTime", answer: { request in
            if request.url == stsURL { return FakeEndpoint.json(200, #"{"access_token": "fed-1", "expires_in": 3600}"#) }
            return FakeEndpoint.json(200, #"{"accessToken": "ya29.x", "expireTime": "tomorrow"}"#)
        }, says: ["answered without an RFC 3339 expireTime"]),
        Failure(name: "subject file missing", subjectFile: nil, answer: { _ in FakeEndpoint.json(200, "{}") },
                says: ["reading the subject token from $DIR/token.jwt: the file does not exist"]),
        Failure(name: "subject file empty", subjectFile: " \n", answer: { _ in FakeEndpoint.json(200, "{}") },
                says: ["reading the subject token from $DIR/token.jwt: the subject token is empty"]),
        Failure(name: "subject JSON lacks the field", source: #"{"file": "$DIR/token.jwt", "format": {"type": "json", "subject_token_field_name": "id_token"}}"#,
                subjectFile: #"{"access_token": "x"}"#, answer: { _ in FakeEndpoint.json(200, "{}") },
                says: [#"its JSON has no string "id_token""#]),
        Failure(name: "subject URL refuses and echoes its header", source: #"{"url": "https://idp.example.test/token", "headers": {"Authorization": "Bearer idp-SECRET-42"}}"#,
                answer: { _ in FakeEndpoint.json(403, #"{"error": "denied for idp-SECRET-42"}"#) },
                says: ["reading the subject token from https://idp.example.test/token: it answered 403 denied for [redacted]"]),
    ]

    @Test(arguments: failures)
    func failuresNameTheFileAndTheStepAndNoSecret(_ failure: Failure) async throws {
        let scratch = try ScratchDirectory()
        if let subjectFile = failure.subjectFile { try scratch.write("token.jwt", subjectFile) }
        var changes = ["credential_source": failure.source.replacingOccurrences(of: "$DIR", with: scratch.path)]
        if failure.impersonate { changes["service_account_impersonation_url"] = "\"\(Self.iamURL)\"" }
        let server = FakeEndpoint(failure.answer)
        let endpoint = try resolve(Self.external(changes), in: scratch, server: server)
        let message: String
        do {
            _ = try await endpoint.tokens.token()
            Issue.record("no error")
            return
        } catch {
            message = error.description
        }
        #expect(message.hasPrefix("the credentials file \(scratch.path)/creds.json (GOOGLE_APPLICATION_CREDENTIALS): "), "\(message)")
        for expected in failure.says {
            #expect(message.contains(expected.replacingOccurrences(of: "$DIR", with: scratch.path)), "\(message)")
        }
        for secret in [Self.subject, "SUBJECT-signature-0123456789abcdef", "fed-SECRET-777", "idp-SECRET-42"] {
            #expect(!message.contains(secret), "\(message)")
        }
    }

    /// A workforce pool's audience, as Google's libraries recognize it.
    @Test(arguments: [
        ("//iam.googleapis.com/locations/global/workforcePools/pool/providers/p", true),
        ("//iam.googleapis.com/locations/eu/workforcePools/", true),
        ("//iam.googleapis.com/locations//workforcePools/pool", false),
        ("//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/p", false),
        ("https://iam.googleapis.com/locations/global/workforcePools/pool", false),
    ])
    func workforcePoolAudiences(audience: String, isWorkforce: Bool) {
        #expect(ExternalAccount.isWorkforcePool(audience) == isWorkforce)
    }
}
