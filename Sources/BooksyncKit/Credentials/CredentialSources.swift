import BooksyncCore

/// Credential sources 3–5 of <doc:Firestore>, tried after the ready token and
/// the token command, in the order Google's own client libraries use
/// (Application Default Credentials): the file named by
/// `GOOGLE_APPLICATION_CREDENTIALS`, gcloud's ADC file, the metadata server.
///
/// Files are the user's (a key they downloaded, gcloud's login), never the
/// collection's; their `token_uri` must be HTTPS unless loopback, so a
/// refresh token or signed assertion is never sent in the clear.
package enum CredentialSources {
    /// A usable credential and the project its file bills quota to.
    package struct Found: Sendable {
        /// Fetches tokens for the credential; give it to `AccessTokens.Source.exchange`.
        package let exchange: TokenExchange
        /// The file's `quota_project_id`, if any.
        package let quotaProject: String?
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
            return try load(bytes, origin: origin, transport: transport, timeout: timeout)
        }
        if let path = adcPath(environment: environment), let bytes = try UserConfig.contents(of: path, holding: "credentials") {
            return try load(bytes, origin: "gcloud's credentials file \(path)", transport: transport, timeout: timeout)
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
    /// - Parameter currentDirectory: where booksync was started (`-C` changes no directory).
    package static func adcPath(environment: [String: String], currentDirectory: String = FileSystem.currentDirectory()) -> String? {
        if let config = environment[EnvironmentVariable.gcloudConfig], !config.isEmpty {
            let absolute = config.hasPrefix("/") ? config : currentDirectory + "/" + config
            return absolute + "/application_default_credentials.json"
        }
        if let home = environment[EnvironmentVariable.home], home.hasPrefix("/") { return home + "/.config/gcloud/application_default_credentials.json" }
        return nil
    }

    /// A credentials file's contents as a token exchange.
    static func load(_ bytes: [UInt8], origin: String, transport: @escaping HTTPTransport, timeout: Double) throws(RemoteError) -> Found {
        let fields: Fields
        do {
            fields = try JSONParser.parseObject(bytes)
        } catch {
            throw .configuration("\(origin) is not a JSON object (line \(error.position.line), column \(error.position.column): \(error.message))")
        }
        func string(_ key: String, required: Bool = true) throws(RemoteError) -> String? {
            if case .string(let value)? = fields[key], !value.isEmpty { return value }
            if required { throw .configuration("\(origin) has no \"\(key)\"; download the file again") }
            return nil
        }
        let quota = try string("quota_project_id", required: false)
        guard case .string(let type)? = fields["type"] else {
            throw .configuration("\(origin) has no \"type\"; booksync reads service_account and authorized_user credentials files")
        }
        let grant: TokenExchange.Grant
        switch type {
        case "service_account":
            let uri = try string("token_uri", required: false) ?? TokenExchange.defaultTokenURI
            try checkTokenURI(uri, origin: origin)
            let pem = try string("private_key")!
            let key: RSAPrivateKey
            do {
                key = try RSAPrivateKey(pem: pem)
            } catch {
                throw .configuration("\(origin): \(error.message)")
            }
            grant = .serviceAccount(clientEmail: try string("client_email")!, key: key, keyID: try string("private_key_id", required: false), tokenURI: uri)
        case "authorized_user":
            let uri = try string("token_uri", required: false) ?? TokenExchange.defaultTokenURI
            try checkTokenURI(uri, origin: origin)
            grant = .authorizedUser(clientID: try string("client_id")!, clientSecret: try string("client_secret")!,
                                    refreshToken: try string("refresh_token")!, tokenURI: uri)
        default:
            let shown = String(type.prefix(100))
            throw .configuration(
                "\(origin) holds credentials of type '\(shown)', which booksync does not use; it reads service_account "
                    + "(a service-account JSON key) and authorized_user ('gcloud auth application-default login') files")
        }
        return Found(exchange: TokenExchange(grant: grant, origin: origin, transport: transport, timeout: timeout), quotaProject: quota)
    }

    /// HTTPS, or plain HTTP to a loopback address (a test's token endpoint).
    static func checkTokenURI(_ uri: String, origin: String) throws(RemoteError) {
        guard let (scheme, host) = FirestoreEndpoint.schemeAndHost(uri) else {
            throw .configuration("\(origin): its token_uri '\(String(uri.prefix(200)))' is not a URL")
        }
        if scheme != "https", !HostAddress.isLoopback(host) {
            throw .configuration("\(origin): its token_uri \(uri) is plain HTTP; booksync sends credentials only over HTTPS (or to a loopback address)")
        }
    }
}
