import BooksyncCore

/// Service-account impersonation through the IAM Service Account Credentials
/// API (`projects.serviceAccounts.generateAccessToken`): a token of one
/// identity (a federated token from the STS, a user's, another service
/// account's) is exchanged for a short-lived token of the service account
/// the URL names. Used by `external_account` files that carry a
/// `service_account_impersonation_url` and by `impersonated_service_account`
/// files (gcloud's `--impersonate-service-account`).
///
/// The request is Google's libraries': POST the URL with `Authorization:
/// Bearer <source token>` and the JSON body `{"scope": [Firestore's scope],
/// "lifetime": "3600s"}` plus `"delegates"` when the file lists some; the
/// answer is `{"accessToken", "expireTime"}`, an RFC 3339 time from which the
/// token's lifetime is computed, so `AccessTokens` refreshes it in time.
package struct ServiceAccountImpersonation: Sendable, Equatable {
    /// The `generateAccessToken` URL, e.g.
    /// `https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/ci@p.iam.gserviceaccount.com:generateAccessToken`.
    let url: String
    /// The account impersonated, read from the URL as Google's libraries read
    /// it: between its last `/` and `:generateAccessToken`.
    let email: String
    /// The chain of accounts between the caller and `email`, each as the API
    /// names it, `projects/-/serviceAccounts/EMAIL`.
    let delegates: [String]
    /// Seconds the token is asked to live (`lifetime`).
    let lifetime: Int

    /// An hour, Google's default and the most IAM grants without an organization policy.
    static let defaultLifetime = 3600
    /// The bounds `service_account_impersonation.token_lifetime_seconds` may
    /// take in Google's libraries (ten minutes to twelve hours; past an hour
    /// IAM needs an organization policy that allows it).
    static let lifetimeRange = 600...43_200
    /// What a service account's own token asks for when it only serves to
    /// impersonate another (`impersonated_service_account` with service_account
    /// source credentials), as Google's Python library asks.
    static let sourceScope = "https://www.googleapis.com/auth/iam"

    /// An impersonation read from a credentials file.
    /// - Parameters:
    ///   - url: The file's `service_account_impersonation_url`, already checked
    ///     to be HTTPS or loopback (`CredentialsFileFields.url`).
    ///   - delegates: As the file lists them: an email, or a full
    ///     `projects/-/serviceAccounts/…` name (sent as is).
    /// - Throws: `RemoteError.configuration` for a URL that names no account.
    init(url: String, delegates: [String] = [], lifetime: Int = defaultLifetime, origin: String) throws(RemoteError) {
        guard let email = Self.email(in: url) else {
            throw .configuration(
                "\(origin): its service_account_impersonation_url \(url) names no service account; it should end in "
                    + "/serviceAccounts/EMAIL:generateAccessToken")
        }
        self.url = url
        self.email = email
        self.delegates = delegates.map { $0.hasPrefix("projects/") ? $0 : "projects/-/serviceAccounts/" + $0 }
        self.lifetime = lifetime
    }

    /// The account between the URL's last `/` and `:generateAccessToken`.
    static func email(in url: String) -> String? {
        guard let suffix = url.firstRange(of: ":generateAccessToken"), let slash = url[..<suffix.lowerBound].lastIndex(of: "/") else { return nil }
        let email = url[url.index(after: slash)..<suffix.lowerBound]
        return email.isEmpty ? nil : String(email)
    }

    /// The request, with `bearer` (the source token) in its `Authorization`.
    func request(bearer: String, timeout: Double) -> HTTPRequest {
        var body: [String: Value] = ["scope": .array([.string(TokenExchange.scope)]), "lifetime": .string("\(lifetime)s")]
        if !delegates.isEmpty { body["delegates"] = .array(delegates.map { .string($0) }) }
        return HTTPRequest(method: "POST", url: url,
                           headers: ["Content-Type": "application/json", "Authorization": "Bearer " + bearer],
                           body: Array(CanonicalJSON.encodeInline(.map(body)).utf8), timeout: .seconds(timeout))
    }

    /// Asks IAM for a token of `email`.
    /// - Parameters:
    ///   - bearer: The source token.
    ///   - exchange: Carries the request and names the file in messages.
    ///   - known: Secrets met so far (the source token is added): scrubbed from IAM's text.
    /// - Throws: `RemoteError.authentication` "impersonating EMAIL was refused (403 …)".
    func generate(bearer: String, by exchange: TokenExchange, known: [String]) async throws(RemoteError) -> TokenExchange.Issued {
        let step = "impersonating \(email) at \(url)"
        let response = try await exchange.send(request(bearer: bearer, timeout: exchange.timeout), step: step)
        let redact = SecretRedaction(secrets: known + [bearer] + TokenExchange.signature(of: bearer))
        guard (200..<300).contains(response.status) else {
            let (code, said) = TokenExchange.refusal(status: response.status, body: response.body, redact: redact)
            throw .authentication("\(exchange.origin): impersonating \(email) was refused (\(said))" + advice(status: response.status, code: code))
        }
        guard case .map(let answer)? = try? JSONParser.parse(response.body, decodeTags: false),
              case .string(let token)? = answer["accessToken"], !token.isEmpty, !token.contains(where: { $0.isWhitespace }) else {
            throw .authentication("\(exchange.origin): \(step) answered without an accessToken")
        }
        guard case .string(let expireTime)? = answer["expireTime"], let remaining = Self.secondsLeft(until: expireTime, now: WallClock.nowNanoseconds()) else {
            throw .authentication("\(exchange.origin): \(step) answered without an RFC 3339 expireTime")
        }
        guard remaining > 0 else {
            throw .authentication(
                "\(exchange.origin): \(step) answered with a token that expired at \(redact.excerpt(expireTime, limit: 40)), before this "
                    + "machine's time \(TokenExchange.utcTime(WallClock.nowNanoseconds() / 1_000_000_000)); this machine's clock may be off "
                    + "(turn on NTP time sync)")
        }
        return TokenExchange.Issued(token: token, lifetime: TokenExchange.bounded(remaining))
    }

    /// What to do about the usual refusals.
    private func advice(status: Int, code: String) -> String {
        switch status {
        case 403:
            "; the caller needs the Service Account Token Creator role (roles/iam.serviceAccountTokenCreator) on \(email)"
                + (delegates.isEmpty ? "" : " and on each delegate") + ", and the IAM Service Account Credentials API must be enabled"
        case 404: "; check that the service account \(email) exists"
        case 401: "; the token it was given was not accepted"
        default: ""
        }
    }

    /// Seconds from `now` (nanoseconds since 1970) until `expireTime`, an RFC
    /// 3339 time as IAM writes it (`2025-09-08T16:09:25Z`, up to nine fraction
    /// digits: those past microseconds are dropped, a time to the second
    /// needs no more). Nil when it is not such a time.
    static func secondsLeft(until expireTime: String, now: Int64) -> Double? {
        var text = expireTime
        if let dot = text.firstIndex(of: "."), let end = text[dot...].firstIndex(where: { !$0.isASCII || !$0.isNumber && $0 != "." }) {
            let fraction = text[text.index(after: dot)..<end]
            if fraction.count > 6 { text = String(text[..<text.index(dot, offsetBy: 7)]) + String(text[end...]) }
        }
        guard let time = try? Timestamp(rfc3339: text) else { return nil }
        return Double(time.microsecondsSinceEpoch - now / 1000) / 1_000_000
    }
}
