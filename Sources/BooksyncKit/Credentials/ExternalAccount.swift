import BooksyncCore

/// An `external_account` credentials file (workload identity federation):
/// no key is stored; a token the workload already has from another identity
/// provider (the *subject token*: a Kubernetes, GitHub Actions or Azure OIDC
/// token, a SAML assertion) is exchanged at Google's Security Token Service
/// for a federated access token, which then impersonates a service account
/// when the file names one (`service_account_impersonation_url`).
///
/// The wire formats are those of Google's auth libraries (Python's
/// `external_account.py`, `identity_pool.py`, `sts.py`):
///
/// - The subject token is read anew for every exchange (it is short-lived
///   and the provider rewrites it): from `credential_source.file`, or by a
///   GET of `credential_source.url` with its `headers`; as the whole text
///   (`format.type` "text", the default; surrounding whitespace dropped, so a
///   file that ends in a newline works), or one member of a JSON object
///   (`format.type` "json", `subject_token_field_name`).
/// - The STS (`token_url`, default `https://sts.googleapis.com/v1/token`)
///   gets an RFC 8693 token exchange as a form POST: `grant_type`
///   `urn:ietf:params:oauth:grant-type:token-exchange`, `audience`, `scope`
///   (`cloud-platform` when a service account is impersonated next, as the
///   STS documentation asks, else Firestore's `datastore` scope),
///   `requested_token_type` `urn:ietf:params:oauth:token-type:access_token`,
///   `subject_token`, `subject_token_type`, and `options` `{"userProject": …}`
///   for a workforce pool's `workforce_pool_user_project` when the file has
///   no `client_id` (Python's rule; the JSON is one form value, as the Go and
///   Node.js libraries send it). A `client_id` (and `client_secret`) goes in
///   HTTP Basic authentication.
/// - Impersonation is `ServiceAccountImpersonation`, with the federated token
///   as bearer.
///
/// Parsing and every refusal are in `ExternalAccount+File.swift`.
package struct ExternalAccount: Sendable, Equatable {
    /// Where the subject token comes from.
    enum SubjectSource: Sendable, Equatable {
        /// A file the provider keeps fresh (a projected Kubernetes token).
        case file(String)
        /// An endpoint that answers a GET with it (Azure's instance metadata);
        /// `headers` are sent as given.
        case url(String, headers: [String: String])
    }

    /// How the subject token is written where it is read.
    enum Format: Sendable, Equatable {
        /// The whole text.
        case text
        /// The string member `field` of a JSON object.
        case json(field: String)
    }

    /// The workload identity pool provider (`//iam.googleapis.com/projects/…/providers/…`).
    let audience: String
    /// What the subject token is (`urn:ietf:params:oauth:token-type:jwt`, `…:id_token`, `…:saml2`).
    let subjectTokenType: String
    /// The STS's token endpoint.
    let tokenURL: String
    let source: SubjectSource
    let format: Format
    /// An OAuth client of a workforce pool, sent in Basic authentication.
    let clientID: String?
    let clientSecret: String?
    /// The project a workforce pool's user is billed to, sent as an STS option.
    let workforcePoolUserProject: String?
    /// The service account the federated token impersonates, if any.
    let impersonation: ServiceAccountImpersonation?

    static let defaultTokenURL = "https://sts.googleapis.com/v1/token"
    static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let requestedTokenType = "urn:ietf:params:oauth:token-type:access_token"
    /// The scope a federated token asks for when it is only used to impersonate.
    static let impersonationScope = "https://www.googleapis.com/auth/cloud-platform"
    /// The most bytes of a subject token file or URL answer read (a token is a few KiB).
    static let subjectTokenLimit = 1 << 20

    /// The `Authorization` value of the client, if the file has one.
    var basicAuthorization: String? {
        clientID.map { "Basic " + Base64.encode(Array("\($0):\(clientSecret ?? "")".utf8)) }
    }

    /// Secrets of the file itself: the client secret, the Basic credential
    /// made of it, and the credential of any `Authorization`-like header of
    /// the URL source.
    var secrets: [String] {
        var out = [clientSecret, basicAuthorization.map { String($0.dropFirst("Basic ".count)) }].compactMap { $0 }
        if case .url(_, let headers) = source {
            for (name, value) in headers where ["authorization", "proxy-authorization", "x-api-key"].contains(name.lowercased()) {
                out.append(value)
                if let space = value.firstIndex(of: " ") { out.append(String(value[value.index(after: space)...])) }
            }
        }
        return out.filter { !$0.isEmpty }
    }

    /// Subject token, STS, then impersonation when the file asks for it.
    func fetch(by exchange: TokenExchange) async throws(RemoteError) -> TokenExchange.Issued {
        let subject = try await subjectToken(by: exchange)
        let met = [subject] + TokenExchange.signature(of: subject)
        let federated = try await exchangeAtSTS(subject, by: exchange, known: exchange.secrets + met)
        guard let impersonation else {
            return TokenExchange.Issued(token: federated.token, lifetime: federated.lifetime, secrets: met)
        }
        var issued = try await impersonation.generate(bearer: federated.token, by: exchange, known: exchange.secrets + met)
        issued.secrets += met + [federated.token]
        return issued
    }

    /// The STS request as sent (tests read it back).
    func stsRequest(subjectToken: String, timeout: Double) -> HTTPRequest {
        var form = [("grant_type", Self.grantType), ("audience", audience),
                    ("scope", impersonation == nil ? TokenExchange.scope : Self.impersonationScope),
                    ("requested_token_type", Self.requestedTokenType), ("subject_token", subjectToken),
                    ("subject_token_type", subjectTokenType)]
        if let project = workforcePoolUserProject, clientID == nil {
            form.append(("options", "{\"userProject\":" + CanonicalJSON.encodeInline(.string(project)) + "}"))
        }
        var headers = ["Content-Type": "application/x-www-form-urlencoded"]
        if let basic = basicAuthorization { headers["Authorization"] = basic }
        let body = form.map { $0.0 + "=" + URLPath.encodeQueryValue($0.1) }.joined(separator: "&")
        return HTTPRequest(method: "POST", url: tokenURL, headers: headers, body: Array(body.utf8), timeout: .seconds(timeout))
    }

    /// POSTs the subject token to the STS: its `access_token` and `expires_in`.
    func exchangeAtSTS(_ subject: String, by exchange: TokenExchange, known: [String]) async throws(RemoteError) -> TokenExchange.Issued {
        let step = "the STS at \(tokenURL)"
        let response = try await exchange.send(stsRequest(subjectToken: subject, timeout: exchange.timeout), step: step)
        guard (200..<300).contains(response.status) else {
            let (code, said) = TokenExchange.refusal(status: response.status, body: response.body, redact: SecretRedaction(secrets: known))
            let hint = code == "invalid_grant" || code == "invalid_request"
                ? "; check the file's audience and subject_token_type, and that the subject token is fresh and issued for that audience" : ""
            throw .authentication("\(exchange.origin): \(step) answered \(said)" + hint)
        }
        guard case .map(let answer)? = try? JSONParser.parse(response.body, decodeTags: false),
              case .string(let token)? = answer["access_token"], !token.isEmpty, !token.contains(where: { $0.isWhitespace }) else {
            throw .authentication("\(exchange.origin): \(step) answered without an access_token")
        }
        let lifetime: Double
        switch answer["expires_in"] {
        // Some token services send it as a string (Python's library allows it too).
        case .integer(let n)? where n > 0: lifetime = Double(n)
        case .double(let d)? where d.isFinite && d > 0: lifetime = d
        case .string(let s)? where Int(s).map({ $0 > 0 }) == true: lifetime = Double(Int(s)!)
        default: lifetime = 3600
        }
        return TokenExchange.Issued(token: token, lifetime: TokenExchange.bounded(lifetime))
    }

    /// The subject token, read now from the file or the URL.
    func subjectToken(by exchange: TokenExchange) async throws(RemoteError) -> String {
        switch source {
        case .file(let path):
            let step = "reading the subject token from \(path)"
            let bytes: [UInt8]
            do {
                bytes = try FileSystem.readUserFile(path, limit: Self.subjectTokenLimit)
            } catch {
                let why = error.isNotFound ? "the file does not exist (its identity provider writes it: is this the workload it was made for?)"
                    : error.unsafeKind != nil ? "it is not a regular file" : error.description
                throw .authentication("\(exchange.origin): \(step): \(why)")
            }
            return try token(in: bytes, step: step, origin: exchange.origin)
        case .url(let url, let headers):
            let step = "reading the subject token from \(url)"
            let response = try await exchange.send(HTTPRequest(method: "GET", url: url, headers: headers, timeout: .seconds(exchange.timeout)), step: step)
            guard response.status == 200 else {
                let (_, said) = TokenExchange.refusal(status: response.status, body: response.body, redact: SecretRedaction(secrets: exchange.secrets))
                throw .authentication("\(exchange.origin): \(step): it answered \(said)")
            }
            return try token(in: response.body, step: step, origin: exchange.origin)
        }
    }

    /// The token in what was read, by `format`.
    func token(in bytes: [UInt8], step: String, origin: String) throws(RemoteError) -> String {
        let token: String
        switch format {
        case .text:
            token = String(decoding: bytes, as: UTF8.self).trimmingWhitespace
        case .json(let field):
            guard case .map(let object)? = try? JSONParser.parse(bytes, decodeTags: false) else {
                throw .authentication("\(origin): \(step): it is not a JSON object, and the file's credential_source.format says json")
            }
            guard case .string(let value)? = object[field] else {
                throw .authentication("\(origin): \(step): its JSON has no string \"\(field)\" (credential_source.format.subject_token_field_name)")
            }
            token = value.trimmingWhitespace
        }
        guard !token.isEmpty else { throw .authentication("\(origin): \(step): the subject token is empty") }
        return token
    }
}
