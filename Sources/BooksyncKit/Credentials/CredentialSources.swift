import BooksyncCore

/// Credential sources 3–5 of the manual's Firestore article, tried after the ready token and
/// the token command, in the order Google's own client libraries use
/// (Application Default Credentials): the file named by
/// `GOOGLE_APPLICATION_CREDENTIALS`, gcloud's ADC file, the metadata server.
///
/// Files are the user's (a key they downloaded, gcloud's login, a workload
/// identity federation config), never the collection's; every URL in them
/// (`token_uri`, `token_url`, `credential_source.url`,
/// `service_account_impersonation_url`) must be HTTPS unless loopback, so a
/// refresh token, signed assertion, subject token or federated token is
/// never sent in the clear.
package enum CredentialSources {
    /// A usable credential and the project its file bills quota to.
    package struct Found: Sendable {
        /// Fetches tokens for the credential; give it to `AccessTokens.Source.exchange`.
        package let exchange: TokenExchange
        /// The file's `quota_project_id`, if any.
        package let quotaProject: String?
        /// For `--verbose`: the file's type, where it is, and the service
        /// account used ("external_account from …, impersonating ci@…"); never a secret.
        package var description: String

        package init(exchange: TokenExchange, quotaProject: String?, description: String? = nil) {
            self.exchange = exchange
            self.quotaProject = quotaProject
            self.description = description ?? exchange.origin
        }
    }

    /// The first source that applies; the metadata server is the last resort
    /// and applies unless `NO_GCE_CHECK` is set (google-auth's switch, used by
    /// tests that must not look up metadata.google.internal); whether it
    /// answers is known at the first request. Reads files, sends nothing.
    /// - Parameters:
    ///   - environment: The process environment (`GOOGLE_APPLICATION_CREDENTIALS`,
    ///     `CLOUDSDK_CONFIG`, `HOME`, `NO_GCE_CHECK`, `GCE_METADATA_HOST`).
    ///   - transport: Carries the later token requests.
    ///   - timeout: Seconds one token request may take.
    /// - Returns: nil when no source applies (only with `NO_GCE_CHECK` set).
    /// - Throws: `RemoteError.configuration` for a named file that is missing,
    ///   unreadable or not a usable credentials file, or a bad `GCE_METADATA_HOST`.
    package static func find(environment: [String: String], transport: @escaping HTTPTransport, timeout: Double) throws(RemoteError) -> Found? {
        if let path = environment[EnvironmentVariable.applicationCredentials], !path.isEmpty {
            let origin = "the credentials file \(path) (GOOGLE_APPLICATION_CREDENTIALS)"
            guard let bytes = try UserConfig.contents(of: path, holding: "credentials") else {
                throw .configuration("\(origin) does not exist; point GOOGLE_APPLICATION_CREDENTIALS at a service-account key file, or unset it")
            }
            return try load(bytes, origin: origin, environment: environment, transport: transport, timeout: timeout)
        }
        if let path = adcPath(environment: environment), let bytes = try UserConfig.contents(of: path, holding: "credentials") {
            return try load(bytes, origin: "gcloud's credentials file \(path)", environment: environment, transport: transport, timeout: timeout)
        }
        if let skip = environment["NO_GCE_CHECK"], ["1", "true"].contains(skip.lowercased()) { return nil }
        let host = environment["GCE_METADATA_HOST"].flatMap { $0.isEmpty ? nil : $0 } ?? TokenExchange.defaultMetadataHost
        guard FirestoreEndpoint.schemeAndHost("http://" + host) != nil, !host.contains(where: { "/?#".contains($0) }) else {
            throw .configuration("GCE_METADATA_HOST must be a host or host:port, not '\(host)'")
        }
        return Found(exchange: TokenExchange(grant: .metadata(host: host), origin: "the metadata server \(host)", transport: transport, timeout: timeout),
                     quotaProject: nil)
    }

    /// `$CLOUDSDK_CONFIG/application_default_credentials.json`, default `~/.config/gcloud/…`.
    /// A relative `CLOUDSDK_CONFIG` is taken from the current directory, as
    /// gcloud and Google's libraries open it (it was ignored).
    /// - Parameters:
    ///   - environment: The process environment (`CLOUDSDK_CONFIG`, `HOME`).
    ///   - currentDirectory: where booksync was started (`-C` changes no directory).
    package static func adcPath(environment: [String: String], currentDirectory: String = FileSystem.currentDirectory()) -> String? {
        if let config = environment[EnvironmentVariable.gcloudConfig], !config.isEmpty {
            let absolute = config.hasPrefix("/") ? config : currentDirectory + "/" + config
            return absolute + "/application_default_credentials.json"
        }
        if let home = environment[EnvironmentVariable.home], home.hasPrefix("/") { return home + "/.config/gcloud/application_default_credentials.json" }
        return nil
    }

    /// A credentials file's contents as a token exchange: a dispatcher on
    /// its `type`; each type is read by its own code (`keyGrant` below,
    /// `ExternalAccount(file:environment:)`, `impersonatedGrant`).
    /// - Parameter environment: For `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES`.
    static func load(_ bytes: [UInt8], origin: String, environment: [String: String] = [:], transport: @escaping HTTPTransport,
                     timeout: Double) throws(RemoteError) -> Found {
        let fields: Fields
        do {
            fields = try JSONParser.parseObject(bytes)
        } catch {
            throw .configuration("\(origin) is not a JSON object (line \(error.position.line), column \(error.position.column): \(error.message))")
        }
        let file = CredentialsFileFields(fields, origin: origin, advice: "download the file again")
        let quota = try file.string("quota_project_id", required: false)
        guard case .string(let type)? = fields["type"] else {
            throw .configuration("\(origin) has no \"type\"; booksync reads \(Self.typesRead) credentials files")
        }
        let grant: TokenExchange.Grant
        var described = "\(type) from \(origin)"
        switch type {
        case "service_account", "authorized_user":
            grant = try keyGrant(file, type: type)
            if case .serviceAccount(let email, _, _, _) = grant { described += ", as \(email)" }
        case "external_account":
            let account = try ExternalAccount(file: CredentialsFileFields(fields, origin: origin, advice: ExternalAccount.advice), environment: environment)
            grant = .externalAccount(account)
            switch account.source {
            case .file(let path): described += ": subject token from the file \(path)"
            case .url(let url, _): described += ": subject token from \(url)"
            }
            described += ", exchanged at \(account.tokenURL)"
            described += account.impersonation.map { ", impersonating \($0.email)" } ?? " (no service account impersonated)"
        case "impersonated_service_account":
            let (source, sourceType, impersonation) = try impersonatedGrant(file)
            grant = .impersonated(source: source, impersonation)
            described += ", impersonating \(impersonation.email)"
            if !impersonation.delegates.isEmpty { described += " through \(impersonation.delegates.count) delegate(s)" }
            described += " with \(sourceType) source credentials"
        default:
            let shown = String(type.prefix(100))
            throw .configuration(
                "\(origin) holds credentials of type '\(shown)', which booksync does not use; it reads service_account "
                    + "(a service-account JSON key), authorized_user ('gcloud auth application-default login'), external_account "
                    + "(workload identity federation) and impersonated_service_account files")
        }
        return Found(exchange: TokenExchange(grant: grant, origin: origin, transport: transport, timeout: timeout), quotaProject: quota,
                     description: described)
    }

    /// The types `load` reads, for messages.
    static let typesRead = "service_account, authorized_user, external_account and impersonated_service_account"

    /// A `service_account` key or an `authorized_user` login: the file's own
    /// object, or the `source_credentials` of an `impersonated_service_account`.
    static func keyGrant(_ file: CredentialsFileFields, type: String) throws(RemoteError) -> TokenExchange.Grant {
        let uri = try file.url("token_uri", default: TokenExchange.defaultTokenURI)!
        if type == "authorized_user" {
            return .authorizedUser(clientID: try file.string("client_id")!, clientSecret: try file.string("client_secret")!,
                                   refreshToken: try file.string("refresh_token")!, tokenURI: uri)
        }
        let pem = try file.string("private_key")!
        let key: RSAPrivateKey
        do {
            key = try RSAPrivateKey(pem: pem)
        } catch {
            throw .configuration("\(file.origin): \(error.message)")
        }
        return .serviceAccount(clientEmail: try file.string("client_email")!, key: key, keyID: try file.string("private_key_id", required: false),
                               tokenURI: uri)
    }

    /// An `impersonated_service_account` file (gcloud's
    /// `--impersonate-service-account`): its source credentials, their type,
    /// and the account impersonated with `delegates` between them.
    static func impersonatedGrant(_ file: CredentialsFileFields)
        throws(RemoteError) -> (source: TokenExchange.Grant, type: String, impersonation: ServiceAccountImpersonation) {
        let advice = "run 'gcloud auth application-default login --impersonate-service-account=EMAIL' again"
        let top = CredentialsFileFields(file.fields, origin: file.origin, advice: advice)
        let source = try top.object("source_credentials", required: true)!
        let sourceType = try source.string("type")!
        guard ["service_account", "authorized_user"].contains(sourceType) else {
            throw .configuration(
                "\(file.origin): its source_credentials are of type '\(String(sourceType.prefix(100)))'; booksync impersonates with "
                    + "service_account or authorized_user source credentials (list a chain of accounts in \"delegates\" instead)")
        }
        let url = try top.url("service_account_impersonation_url")!
        let impersonation = try ServiceAccountImpersonation(url: url, delegates: try top.strings("delegates"), origin: file.origin)
        return (try keyGrant(source, type: sourceType), sourceType, impersonation)
    }

    /// HTTPS, or plain HTTP to a loopback address (a test's endpoint): a
    /// credential (a refresh token, a signed assertion, a subject token, a
    /// federated token) is never sent, nor a token received, in the clear.
    /// - Parameter named: The member's path in the file, in the message (`token_uri`, `credential_source.url`).
    static func checkURL(_ url: String, named: String, origin: String) throws(RemoteError) {
        guard let (scheme, host) = FirestoreEndpoint.schemeAndHost(url) else {
            throw .configuration("\(origin): its \(named) '\(String(url.prefix(200)))' is not a URL")
        }
        if scheme != "https", !HostAddress.isLoopback(host) {
            throw .configuration("\(origin): its \(named) \(url) is plain HTTP; booksync sends credentials only over HTTPS (or to a loopback address)")
        }
    }
}
