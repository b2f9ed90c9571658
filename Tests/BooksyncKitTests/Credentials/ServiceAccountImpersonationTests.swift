import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// `impersonated_service_account` files (gcloud's
/// `--impersonate-service-account`) through the HTTP seam, and the parts of
/// impersonation checked against outside vectors: the account read from the
/// URL, the lifetime from IAM's RFC 3339 expireTime.
@Suite struct ServiceAccountImpersonationTests {
    typealias FakeEndpoint = CredentialSourcesTests.FakeEndpoint

    static let iamURL = "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/target@proj.iam.gserviceaccount.com:generateAccessToken"

    /// gcloud's file, as AIP-4113 shows it; `source` is raw JSON.
    static func gcloudFile(source: String, delegates: [String] = []) -> String {
        let list = delegates.map { "\"\($0)\"" }.joined(separator: ", ")
        return #"{"type": "impersonated_service_account", "delegates": [\#(list)], "quota_project_id": "fake_project", "#
            + #""service_account_impersonation_url": "\#(iamURL)", "source_credentials": \#(source)}"#
    }

    static let user = #"{"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com", "client_secret": "csecret-IMP", "refresh_token": "1//refresh-IMP"}"#

    static func server() -> FakeEndpoint {
        FakeEndpoint { request in
            if request.url == TokenExchange.defaultTokenURI { return FakeEndpoint.json(200, #"{"access_token": "user-token-1", "expires_in": 3599}"#) }
            return FakeEndpoint.json(200, #"{"accessToken": "ya29.impersonated", "expireTime": "\#(ExternalAccountTests.expireTime(in: 3600))"}"#)
        }
    }

    @Test func aUsersTokenImpersonatesTheTargetThroughItsDelegates() async throws {
        let scratch = try ScratchDirectory()
        try scratch.write("adc.json", Self.gcloudFile(source: Self.user, delegates: ["first@proj.iam.gserviceaccount.com",
                                                                                      "projects/-/serviceAccounts/second@proj.iam.gserviceaccount.com"]))
        let server = Self.server()
        let endpoint = try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": scratch.path + "/adc.json"], transport: server.transport)
        #expect(endpoint.quotaProject == "fake_project")
        #expect(endpoint.credentialSource == "impersonated_service_account from the credentials file \(scratch.path)/adc.json (GOOGLE_APPLICATION_CREDENTIALS), "
            + "impersonating target@proj.iam.gserviceaccount.com through 2 delegate(s) with authorized_user source credentials")
        #expect(try await endpoint.tokens.token() == "ya29.impersonated")
        try #require(server.requests.count == 2)
        let refresh = ExternalAccountTests.form(server.requests[0])
        #expect(refresh["grant_type"] == "refresh_token" && refresh["refresh_token"] == "1//refresh-IMP")
        let iam = server.requests[1]
        #expect(iam.method == "POST" && iam.url == Self.iamURL)
        #expect(iam.headers["Authorization"] == "Bearer user-token-1")
        let body = ExternalAccountTests.body(iam)
        #expect(body["delegates"] as? [String] == ["projects/-/serviceAccounts/first@proj.iam.gserviceaccount.com",
                                                   "projects/-/serviceAccounts/second@proj.iam.gserviceaccount.com"])
        #expect(body["scope"] as? [String] == ["https://www.googleapis.com/auth/datastore"])
        #expect(body["lifetime"] as? String == "3600s")
        let scrubbed = await endpoint.tokens.redaction()("user-token-1 csecret-IMP 1//refresh-IMP")
        #expect(scrubbed == "[redacted] [redacted] [redacted]")
    }

    /// A service account's own token asks for the IAM scope only (Python's
    /// `_IAM_SCOPE`): it serves to impersonate, never to reach Firestore.
    @Test func aServiceAccountSourceAsksForTheIAMScope() async throws {
        let scratch = try ScratchDirectory()
        let pem = try CredentialSourcesTests.generatedKey(in: scratch)
        try scratch.write("adc.json", Self.gcloudFile(source: #"{"type": "service_account", "client_email": "src@proj.iam.gserviceaccount.com", "private_key": \#(CredentialSourcesTests.jsonString(pem))}"#))
        let server = Self.server()
        let endpoint = try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": scratch.path + "/adc.json"], transport: server.transport)
        #expect(try await endpoint.tokens.token() == "ya29.impersonated")
        let assertion = try #require(ExternalAccountTests.form(server.requests[0])["assertion"])
        var payload = String(assertion.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        let decoded = try #require(Data(base64Encoded: payload))
        let claims = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/iam")
        #expect(claims["iss"] as? String == "src@proj.iam.gserviceaccount.com")
        #expect(server.requests[1].headers["Authorization"] == "Bearer user-token-1")
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let file: String
        let says: String
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "no source", file: #"{"type": "impersonated_service_account", "service_account_impersonation_url": "\#(iamURL)"}"#,
                says: "has no \"source_credentials\"; run 'gcloud auth application-default login --impersonate-service-account=EMAIL' again"),
        Refusal(name: "no URL", file: #"{"type": "impersonated_service_account", "source_credentials": {"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}}"#,
                says: "has no \"service_account_impersonation_url\""),
        Refusal(name: "nested impersonation", file: gcloudFile(source: #"{"type": "impersonated_service_account"}"#),
                says: "its source_credentials are of type 'impersonated_service_account'; booksync impersonates with service_account or authorized_user"),
        Refusal(name: "source secret missing", file: gcloudFile(source: #"{"type": "authorized_user", "client_id": "c", "refresh_token": "r"}"#),
                says: "has no \"source_credentials.client_secret\""),
        Refusal(name: "source token_uri plain HTTP", file: gcloudFile(source: user.replacingOccurrences(of: "}", with: #", "token_uri": "http://oauth.example.test/token"}"#)),
                says: "its source_credentials.token_uri http://oauth.example.test/token is plain HTTP"),
        Refusal(name: "URL plain HTTP", file: gcloudFile(source: user).replacingOccurrences(of: "https://iamcredentials", with: "http://iamcredentials"),
                says: "its service_account_impersonation_url http://iamcredentials.googleapis.com/"),
        Refusal(name: "delegates not strings", file: #"{"type": "impersonated_service_account", "delegates": [1], "service_account_impersonation_url": "\#(iamURL)", "source_credentials": {"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}}"#,
                says: "its \"delegates\" must be a list of strings"),
    ]

    @Test(arguments: refusals)
    func aFileBooksyncCannotUseIsRefusedBeforeAnythingIsSent(_ refusal: Refusal) throws {
        let scratch = try ScratchDirectory()
        try scratch.write("adc.json", refusal.file)
        let server = FakeEndpoint { _ in FakeEndpoint.json(200, "{}") }
        #expect {
            _ = try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": scratch.path + "/adc.json"], transport: server.transport)
        } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("the credentials file \(scratch.path)/adc.json (GOOGLE_APPLICATION_CREDENTIALS)") && text.contains(refusal.says)
        }
        #expect(server.requests.isEmpty)
    }

    @Test func aRefusedSourceTokenNamesTheFileAndNoSecret() async throws {
        let scratch = try ScratchDirectory()
        try scratch.write("adc.json", Self.gcloudFile(source: Self.user))
        let server = FakeEndpoint { _ in
            FakeEndpoint.json(400, #"{"error": "invalid_grant", "error_description": "bad 1//refresh-IMP csecret-IMP"}"#)
        }
        let endpoint = try FirestoreEndpoint.resolve(environment: ["GOOGLE_APPLICATION_CREDENTIALS": scratch.path + "/adc.json"], transport: server.transport)
        await #expect {
            _ = try await endpoint.tokens.token()
        } throws: { error in
            let text = "\(error)"
            return text.contains("refused it (400 invalid_grant: bad [redacted] [redacted]); the refresh token has expired")
                && !text.contains("refresh-IMP") && !text.contains("csecret-IMP")
        }
        #expect(server.requests.count == 1, "IAM is not asked without a source token")
    }

    /// The account Google's libraries read from the URL: between the last `/`
    /// before `:generateAccessToken` and it.
    @Test(arguments: [
        (iamURL, "target@proj.iam.gserviceaccount.com"),
        ("https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/123456789:generateAccessToken", "123456789"),
        ("http://127.0.0.1:8/v1/projects/-/serviceAccounts/a@b.c:generateAccessToken?x=1", "a@b.c"),
        ("https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/:generateAccessToken", nil),
        ("https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/a@b.c", nil),
        ("https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/a@b.c:generateIdToken", nil),
    ] as [(String, String?)])
    func theAccountIsReadFromTheURL(url: String, email: String?) {
        #expect(ServiceAccountImpersonation.email(in: url) == email)
    }

    /// expireTime as RFC 3339 writes it, checked against Foundation's parser:
    /// offsets, fractions up to nanoseconds (IAM writes none or nine digits),
    /// lower-case separators; what is not RFC 3339 is nil.
    @Test(arguments: ["2025-09-08T16:09:25Z", "2025-09-08T16:09:25.5Z", "2025-09-08T16:09:25.123456789Z", "2025-09-08T18:09:25+02:00",
                      "2025-09-08t16:09:25z", "2024-02-29T23:59:59.999999Z", "1999-12-31T19:00:00-05:00", "2025-09-08T16:09:25.000000001Z"])
    func expireTimeIsRFC3339(text: String) throws {
        let now: Int64 = 1_757_340_000 * 1_000_000_000  // 2025-09-08T14:00:00Z
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plain = ISO8601DateFormatter()
        // Foundation reads milliseconds at most: compare to a millisecond.
        let shortened = text.replacingOccurrences(of: #"(\.\d{3})\d+"#, with: "$1", options: .regularExpression).uppercased()
        let date = try #require(formatter.date(from: shortened) ?? plain.date(from: shortened), "Foundation cannot read \(text)")
        let expected = date.timeIntervalSince1970 - Double(now / 1_000_000_000)
        let seconds = try #require(ServiceAccountImpersonation.secondsLeft(until: text, now: now))
        #expect(abs(seconds - expected) < 0.001, "\(seconds) vs \(expected)")
    }

    @Test(arguments: ["", "tomorrow", "2025-09-08 16:09:25Z", "2025-09-08T16:09:25", "2025-09-08T16:09:60Z", "2025-02-30T00:00:00Z",
                      "2025-09-08T16:09:25.Z", "1757340000"])
    func aTimeThatIsNotRFC3339IsNil(text: String) {
        #expect(ServiceAccountImpersonation.secondsLeft(until: text, now: 0) == nil)
    }
}
