import BooksyncCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A credential that is exchanged over HTTP for short-lived access tokens
/// (the manual's Firestore article, sources 3–5): a service account's signed JWT or a user's
/// refresh token POSTed to a `token_uri`, a GET to the metadata server, or
/// one of the keyless chains of several requests (`ExternalAccount`,
/// `ServiceAccountImpersonation`).
///
/// The request goes through the same `HTTPTransport` as Firestore's, so it is
/// bounded in time, never follows a redirect, and tests can replay it. Every
/// message names where the credential came from (`origin`) and the cause;
/// text from the token endpoint is scrubbed of the credential's secrets.
package struct TokenExchange: Sendable {
    /// What is exchanged, read from a credentials file or the environment by
    /// `CredentialSources`. Holds secrets: never print one.
    package enum Grant: Sendable {
        /// A `service_account` key file: a JWT signed with `key` is POSTed to `tokenURI`.
        case serviceAccount(clientEmail: String, key: RSAPrivateKey, keyID: String?, tokenURI: String)
        /// An `authorized_user` file (gcloud's login): the refresh token is POSTed to `tokenURI`.
        case authorizedUser(clientID: String, clientSecret: String, refreshToken: String, tokenURI: String)
        /// `host` is `GCE_METADATA_HOST` (default `metadata.google.internal`).
        case metadata(host: String)
        /// An `external_account` file (workload identity federation): a
        /// subject token exchanged at Google's STS, then, when the file says
        /// so, a service account impersonated with the federated token.
        case externalAccount(ExternalAccount)
        /// An `impersonated_service_account` file (`gcloud auth
        /// application-default login --impersonate-service-account`): a token
        /// of `source` (a service_account or authorized_user grant, with the
        /// IAM scope) exchanged for one of the impersonated account.
        indirect case impersonated(source: Grant, ServiceAccountImpersonation)
    }

    /// A token an exchange obtained, how many seconds it is valid, and the
    /// secrets met on the way to it (a subject token, a federated token, a
    /// source token) that `AccessTokens` scrubs from any later text as well.
    struct Issued {
        let token: String
        let lifetime: Double
        var secrets: [String] = []
    }

    /// The scope Firestore's REST API accepts.
    package static let scope = "https://www.googleapis.com/auth/datastore"
    /// Google's own token endpoint, for files that name none.
    package static let defaultTokenURI = "https://oauth2.googleapis.com/token"
    /// The metadata server's host unless `GCE_METADATA_HOST` names another.
    package static let defaultMetadataHost = "metadata.google.internal"
    /// The metadata server answers within milliseconds where it exists; off
    /// Google Cloud nothing answers, and the user should hear so quickly: the
    /// first request to it is a probe with this timeout and no retries (as
    /// Google's auth libraries ping it), and its outcome holds for the process.
    package static let metadataTimeout = 3.0
    /// Characters of an endpoint's error text shown.
    static let shownErrorCharacters = 500

    /// The credential to exchange.
    package let grant: Grant
    /// The scope a service account's JWT asks for: Firestore's, or IAM's when
    /// the token only serves to impersonate another account.
    let scope: String
    /// Where the credential came from, e.g. "the credentials file /k.json (GOOGLE_APPLICATION_CREDENTIALS)".
    package let origin: String
    let transport: HTTPTransport
    let timeout: Double

    /// An exchange; nothing is sent until `AccessTokens` asks for a token.
    /// - Parameters:
    ///   - grant: What is exchanged for a token, and where.
    ///   - origin: Where the credential came from, at the start of every message.
    ///   - transport: Carries the token request (normally Firestore's own).
    ///   - timeout: Seconds one token request may take (at most
    ///     `metadataTimeout` for the metadata server).
    ///   - scope: What a service account's JWT asks for (default Firestore's).
    package init(grant: Grant, origin: String, transport: @escaping HTTPTransport, timeout: Double, scope: String = TokenExchange.scope) {
        self.grant = grant
        self.scope = scope
        self.origin = origin
        self.transport = transport
        self.timeout = timeout
    }

    /// Secrets of the credential itself, scrubbed from any text shown
    /// (`SecretRedaction` also finds them percent- or form-encoded, as an
    /// endpoint or proxy that echoes the form body shows them). A signed JWT
    /// is made per request: see `Attempt.assertion`.
    var secrets: [String] { Self.secrets(of: grant) }

    static func secrets(of grant: Grant) -> [String] {
        switch grant {
        case .authorizedUser(_, let secret, let refresh, _): [secret, refresh]
        case .externalAccount(let account): account.secrets
        case .impersonated(let source, _): secrets(of: source)
        case .serviceAccount, .metadata: []
        }
    }

    /// One token request as sent: the signed JWT in it (a secret: anyone who
    /// holds it gets tokens until it expires) and the clock reading it claims
    /// as `iat`, which an endpoint that refuses it on time grounds is told.
    struct Attempt {
        let request: HTTPRequest
        let assertion: String?
        let issuedAt: Int64
    }

    /// What this process learned of a metadata server from its first request.
    enum MetadataPresence: Sendable {
        /// It answered (any HTTP status): later requests are retried as usual.
        case answered
        /// No answer in `metadataTimeout` (or none at all), in the transport's words.
        case silent(String)
    }

    /// Each metadata host this process has asked and how that went: a machine
    /// off Google Cloud waits for the probe once, not once per token request.
    static let metadataHosts = Mutex<[String: MetadataPresence]>([:])

    /// Tries of one token request: a 429, 5xx or network error is retried
    /// (the manual's Firestore article), a refusal is not.
    static let attempts = 3
    /// Bounds of a token's lifetime as the endpoint states it (`expires_in`):
    /// a tiny one would mean an exchange per request, a huge one an overflow;
    /// Google's tokens live an hour.
    static let lifetimeBounds: ClosedRange<Double> = 30...86_400

    /// A new access token, how many seconds it is valid, and the secrets
    /// met on the way. The keyless grants take several requests, each in its
    /// own file; the others one, below.
    func fetch() async throws(RemoteError) -> Issued {
        switch grant {
        case .externalAccount(let account):
            return try await account.fetch(by: self)
        case .impersonated(let source, let impersonation):
            let sourceExchange = TokenExchange(grant: source, origin: origin, transport: transport, timeout: timeout,
                                               scope: ServiceAccountImpersonation.sourceScope)
            let sourceToken = try await sourceExchange.fetch()
            var issued = try await impersonation.generate(bearer: sourceToken.token, by: self, known: secrets + sourceToken.secrets)
            issued.secrets += sourceToken.secrets + [sourceToken.token]
            return issued
        case .serviceAccount, .authorizedUser, .metadata:
            return try await fetchOne()
        }
    }

    /// The one request of a service account, an authorized user or the metadata server.
    private func fetchOne() async throws(RemoteError) -> Issued {
        var probe: String?
        if case .metadata(let host) = grant {
            switch Self.metadataHosts.withLock({ $0[host] }) {
            case .silent(let detail)?: throw unreachable(detail)
            case .answered?: break
            case nil: probe = host
            }
        }
        var attempt = 1
        var sent = secrets
        var current: Attempt
        var response: HTTPResponse
        while true {
            current = try makeRequest()
            if let assertion = current.assertion {
                // The whole JWT, and its signature alone: the part that cannot be made without the key.
                sent += [assertion, String(assertion.split(separator: ".").last ?? "")]
            }
            do {
                response = try await transport(current.request)
                if let host = probe {
                    Self.metadataHosts.withLock { $0[host] = .answered }
                    probe = nil
                }
                if attempt < Self.attempts, response.status == 429 || (500...599).contains(response.status) {
                    attempt += 1
                    try? await Task.sleep(for: .milliseconds(250 * attempt))
                    continue
                }
                break
            } catch {
                if error.kind == .cancelled || Task.isCancelled { throw unreachable(error.message) }
                if let host = probe {
                    // Only a server that never answered is remembered as silent (the
                    // 3 s a machine without credentials must not pay twice); a refused
                    // connection costs nothing to try again on the next token request.
                    if error.kind == .timedOut { Self.metadataHosts.withLock { $0[host] = .silent(error.message) } }
                    throw unreachable(error.message)
                }
                if attempt >= Self.attempts { throw unreachable(error.message) }
                attempt += 1
                try? await Task.sleep(for: .milliseconds(250 * attempt))
            }
        }
        let redact = SecretRedaction(secrets: sent)
        if (300..<400).contains(response.status) {
            throw .authentication("\(origin): the token endpoint \(endpointURL) answered with a redirect (\(response.status)), which booksync does not follow")
        }
        guard (200..<300).contains(response.status) else {
            throw refused(status: response.status, body: response.body, redact: redact, issuedAt: current.issuedAt)
        }
        guard let answer = try? JSONParser.parseObject(response.body),
              case .string(let token)? = answer["access_token"], !token.isEmpty, !token.contains(where: { $0.isWhitespace }) else {
            throw .authentication("\(origin): the token endpoint \(endpointURL) answered without an access_token")
        }
        let lifetime: Double
        switch answer["expires_in"] {
        // A zero or negative lifetime says nothing usable: take Google's hour, as for a missing one.
        case .integer(let n)? where n > 0: lifetime = Double(n)
        case .double(let d)? where d.isFinite && d > 0: lifetime = d
        default: lifetime = 3600
        }
        return Issued(token: token, lifetime: Self.bounded(lifetime))
    }

    /// `seconds` within `lifetimeBounds`.
    static func bounded(_ seconds: Double) -> Double {
        min(max(seconds, lifetimeBounds.lowerBound), lifetimeBounds.upperBound)
    }

    var endpointURL: String {
        switch grant {
        case .serviceAccount(_, _, _, let uri), .authorizedUser(_, _, _, let uri): uri
        case .metadata(let host): "http://\(host)/computeMetadata/v1/instance/service-accounts/default/token"
        case .externalAccount(let account): account.tokenURL
        case .impersonated(_, let impersonation): impersonation.url
        }
    }

    func makeRequest() throws(RemoteError) -> Attempt {
        let form = ["Content-Type": "application/x-www-form-urlencoded"]
        let now = Int64(time(nil))
        switch grant {
        case .serviceAccount(let email, let key, let keyID, let uri):
            let jwt: String
            do {
                jwt = try ServiceAccountJWT.sign(clientEmail: email, key: key, privateKeyID: keyID, scope: scope,
                                                 tokenURI: uri, issuedAt: now)
            } catch {
                throw .authentication("\(origin): \(error.message)")
            }
            let body = "grant_type=" + URLPath.encodeQueryValue("urn:ietf:params:oauth:grant-type:jwt-bearer") + "&assertion=" + URLPath.encodeQueryValue(jwt)
            return Attempt(request: HTTPRequest(method: "POST", url: uri, headers: form, body: Array(body.utf8), timeout: .seconds(timeout)),
                           assertion: jwt, issuedAt: now)
        case .authorizedUser(let id, let secret, let refresh, let uri):
            let body = [("grant_type", "refresh_token"), ("client_id", id), ("client_secret", secret), ("refresh_token", refresh)]
                .map { $0.0 + "=" + URLPath.encodeQueryValue($0.1) }.joined(separator: "&")
            return Attempt(request: HTTPRequest(method: "POST", url: uri, headers: form, body: Array(body.utf8), timeout: .seconds(timeout)),
                           assertion: nil, issuedAt: now)
        case .metadata:
            return Attempt(request: HTTPRequest(method: "GET", url: endpointURL, headers: ["Metadata-Flavor": "Google"],
                                                timeout: .seconds(min(timeout, Self.metadataTimeout))),
                           assertion: nil, issuedAt: now)
        case .externalAccount, .impersonated:
            // Sent in steps by `fetch()`, never as one request.
            throw .authentication("\(origin): its credentials take several requests, not one")
        }
    }

    func unreachable(_ detail: String) -> RemoteError {
        if case .metadata(let host) = grant {
            return .authentication(
                "no Firestore credentials: the metadata server \(host) did not answer (\(detail)); off Google Cloud, run "
                    + "'gcloud auth application-default login', set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, "
                    + "or set BOOKSYNC_ACCESS_TOKEN or BOOKSYNC_TOKEN_COMMAND (see 'booksync help auth')")
        }
        return .authentication("\(origin): cannot reach the token endpoint \(endpointURL): \(detail)")
    }

    /// The endpoint's `error` and `error_description` (OAuth 2.0, RFC 6749
    /// §5.2), scrubbed, then shortened, with what to do about the usual ones.
    /// - Parameter issuedAt: The `iat` of the refused JWT: this machine's clock.
    func refused(status: Int, body: [UInt8], redact: SecretRedaction, issuedAt: Int64) -> RemoteError {
        var code = ""
        var description = ""
        if let answer = try? JSONParser.parseObject(body) {
            if case .string(let c)? = answer["error"] { code = c }
            if case .string(let d)? = answer["error_description"] { description = d }
        }
        if code.isEmpty, description.isEmpty {
            description = String(decoding: body, as: UTF8.self)
        }
        code = redact.excerpt(code, limit: 100)
        description = redact.excerpt(description, limit: Self.shownErrorCharacters)
        let said = ([code, description].filter { !$0.isEmpty }).joined(separator: ": ")
        let refusal = "\(origin): the token endpoint \(endpointURL) refused it (\(status)\(said.isEmpty ? "" : " " + said))"
        switch grant {
        case .authorizedUser where code == "invalid_grant":
            return .authentication(refusal + "; the refresh token has expired or was revoked: run 'gcloud auth application-default login'")
        case .serviceAccount where Self.blamesTheClock(description):
            return .authentication(
                refusal + "; this machine's clock may be off: the JWT said it was issued at \(Self.utcTime(issuedAt)) (iat \(issuedAt)), "
                    + "and the endpoint accepts only a JWT issued within minutes of its own time; set the clock right (turn on NTP time sync), then try again")
        case .serviceAccount where status == 400 || status == 401:
            return .authentication(refusal + "; check that the key in the file is still active for the service account, or create a new JSON key")
        default:
            return .authentication(refusal)
        }
    }

    /// Google's refusal of a JWT whose `iat`/`exp` are not around its own time
    /// ("Invalid JWT: Token must be a short-lived token (60 minutes) and in a
    /// reasonable timeframe. Check your iat and exp values…"): the key is fine,
    /// the clock that dated the JWT is not, so a new key would not help.
    static func blamesTheClock(_ description: String) -> Bool {
        let text = description.lowercased()
        return text.contains("iat and exp") || text.contains("reasonable timeframe")
    }

    /// `seconds` since 1970 as `2025-01-31 23:59:59 UTC`.
    static func utcTime(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = seconds - days * 86_400
        let (year, month, day) = Timestamp.civilFromDays(days)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60)) UTC"
    }
}
