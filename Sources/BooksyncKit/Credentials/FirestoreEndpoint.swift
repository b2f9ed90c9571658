import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where Firestore's REST API is and how to authenticate to it.
public struct FirestoreEndpoint: Sendable {
    /// `https://firestore.googleapis.com/v1/` or `http://HOST:PORT/v1/` for the emulator.
    public let baseURL: String
    /// True only for `FIRESTORE_EMULATOR_HOST`: shown in `displayName` so a
    /// user never mistakes emulator data for production.
    public let isEmulator: Bool
    /// Supplies the bearer token of every request; it caches the token, so a
    /// token command runs once, not once per request.
    package let tokens: AccessTokens
    /// Sent as `x-goog-user-project` (`GOOGLE_CLOUD_QUOTA_PROJECT`, else the credentials file's `quota_project_id`).
    public let quotaProject: String?
    /// Which credentials are used, for `--verbose` (never the token itself).
    public let credentialSource: String

    /// An endpoint as given, unchecked; `resolve` or `custom` are the checked
    /// ways to make one (`custom` refuses plain HTTP to a non-loopback host).
    package init(baseURL: String, isEmulator: Bool, tokens: AccessTokens, quotaProject: String? = nil, credentialSource: String = "") {
        self.baseURL = baseURL
        self.isEmulator = isEmulator
        self.tokens = tokens
        self.quotaProject = quotaProject
        self.credentialSource = credentialSource
    }

    /// Firestore's REST API v1 in production, with its trailing slash.
    public static let productionURL = "https://firestore.googleapis.com/v1/"

    /// The endpoint the environment asks for: the emulator when
    /// `FIRESTORE_EMULATOR_HOST=host:port` is set (plain HTTP, `Bearer owner`),
    /// else production over HTTPS with credentials found in this order
    /// (the manual's Firestore article): `BOOKSYNC_ACCESS_TOKEN`; a token command from
    /// `BOOKSYNC_TOKEN_COMMAND`; `tokenCommand` in the user's config file
    /// (`UserConfig`); then, given a `transport` to exchange credentials over,
    /// `CredentialSources` (GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file,
    /// the metadata server).
    ///
    /// Never from the collection: a cloned collection is someone else's data,
    /// and a `remote.tokenCommand` in its config.json would run their program
    /// on `booksync status` (the CLI warns that it is ignored).
    /// A token command may run for `commandTimeout`.
    /// `transport` has no default: passing nil drops the key file, gcloud's
    /// file and the metadata server, and an app must say so, never get it silently.
    public static func resolve(environment: [String: String], commandTimeout: Duration = .seconds(30),
                               transport: HTTPTransport?) throws(RemoteError) -> FirestoreEndpoint {
        if let host = environment[EnvironmentVariable.emulatorHost], !host.isEmpty {
            guard isHostPort(host) else {
                throw .configuration("FIRESTORE_EMULATOR_HOST must be host:port (e.g. 127.0.0.1:8080), not '\(host)'")
            }
            return FirestoreEndpoint(baseURL: "http://\(host)/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("owner"), isSecret: false),
                                     credentialSource: "the emulator's owner token")
        }
        var source: AccessTokens.Source?
        var described = ""
        var quotaProject: String?
        if let token = environment[EnvironmentVariable.accessToken], !token.isEmpty {
            source = .fixed(token)
            described = "the access token in BOOKSYNC_ACCESS_TOKEN"
        } else if let command = environment[EnvironmentVariable.tokenCommand], !command.trimmingWhitespace.isEmpty {
            source = .command(command, origin: EnvironmentVariable.tokenCommand)
            described = "the token command in BOOKSYNC_TOKEN_COMMAND"
        } else if let path = UserConfig.path(environment: environment), let command = try UserConfig.tokenCommand(at: path) {
            source = .command(command, origin: path)
            described = "the token command in \(path)"
        } else if let transport, let found = try CredentialSources.find(environment: environment, transport: transport, timeout: commandTimeout.seconds) {
            source = .exchange(found.exchange)
            described = found.description
            quotaProject = found.quotaProject
        }
        if let quota = environment[EnvironmentVariable.quotaProject], !quota.isEmpty { quotaProject = quota }
        if let source {
            let tokens = AccessTokens(source: source, commandTimeout: commandTimeout.seconds)
            // BOOKSYNC_FIRESTORE_URL points at another deployment of the REST API
            // (a gateway, a test server); plain HTTP only to loopback.
            if let url = environment[EnvironmentVariable.firestoreURL], !url.isEmpty {
                return try custom(baseURL: url, tokens: tokens, quotaProject: quotaProject, credentialSource: described)
            }
            return FirestoreEndpoint(baseURL: productionURL, isEmulator: false, tokens: tokens, quotaProject: quotaProject, credentialSource: described)
        }
        throw .authentication(
            "no Firestore credentials: set BOOKSYNC_ACCESS_TOKEN, or a token command in BOOKSYNC_TOKEN_COMMAND or as \"tokenCommand\" in "
                + (UserConfig.path(environment: environment) ?? "$XDG_CONFIG_HOME/booksync/config.json")
                + " (e.g. \"gcloud auth print-access-token\"), or FIRESTORE_EMULATOR_HOST for the emulator" + Self.noCredentialsAdvice)
    }

    /// The rest of the "no Firestore credentials" sentence: the sources that need no setting in booksync.
    static let noCredentialsAdvice = "; or point GOOGLE_APPLICATION_CREDENTIALS at a service-account key file, or run "
        + "'gcloud auth application-default login' (see 'booksync help auth')"

    /// An explicit base URL (tests, other deployments). Plain HTTP is accepted only
    /// for loopback hosts, so a token is never sent in the clear over a network.
    package static func custom(baseURL: String, tokens: AccessTokens, quotaProject: String? = nil, credentialSource: String = "") throws(RemoteError) -> FirestoreEndpoint {
        guard let (scheme, host) = schemeAndHost(baseURL) else {
            throw .configuration("'\(baseURL)' is not a URL")
        }
        if scheme == "http", !HostAddress.isLoopback(host) {
            throw .configuration("refusing plain HTTP to \(host): only loopback hosts and the emulator may be reached without TLS")
        }
        let normalized = baseURL.hasSuffix("/") ? baseURL : baseURL + "/"
        return FirestoreEndpoint(baseURL: normalized, isEmulator: false, tokens: tokens, quotaProject: quotaProject, credentialSource: credentialSource)
    }

    /// `http` and `127.0.0.1` of `http://127.0.0.1:8080/v1/`; `[::1]` keeps its brackets.
    /// Strict: an authority with user info (`http://127.0.0.1@evil.com/`),
    /// a backslash, or any character a URL parser might read differently from
    /// this one is not a URL here, so the host checked is the host connected to.
    package static func schemeAndHost(_ url: String) -> (scheme: String, host: String)? {
        guard let separator = url.firstRange(of: "://") else { return nil }
        let scheme = url[..<separator.lowerBound].lowercased()
        let authority = url[separator.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard authority.utf8.allSatisfy(isAuthorityByte) else { return nil }
        let host: Substring
        let rest: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            rest = authority[authority.index(after: close)...]
        } else {
            host = authority.prefix { $0 != ":" }
            rest = authority[host.endIndex...]
        }
        if !rest.isEmpty {
            let port = rest.dropFirst()
            guard rest.hasPrefix(":"), port.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(port), (1...65535).contains(number) else {
                return nil
            }
        }
        guard ["http", "https"].contains(scheme), !host.isEmpty, !host.dropFirst().contains("[") else { return nil }
        return (scheme, String(host))
    }

    /// Letters, digits, `-._~`, `:` and the brackets of an IPv6 literal.
    private static func isAuthorityByte(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
             UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
            true
        default: false
        }
    }

    static func isHostPort(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            return false
        }
        return !text[..<colon].isEmpty && !text.contains("/")
    }
}

/// The user's own booksync settings, `$XDG_CONFIG_HOME/booksync/config.json`
/// (default `~/.config/booksync/config.json`): the one file besides the
/// environment that may name a program to run (`{"tokenCommand": "…"}`).
/// It is the user's, so a symlink to it is followed; it must be a regular
/// file (a FIFO would hang every command).
package enum UserConfig {
    /// `$XDG_CONFIG_HOME/booksync/config.json`, else `$HOME/.config/booksync/config.json`;
    /// only absolute variables count. Nil when neither is set; nothing is read.
    package static func path(environment: [String: String]) -> String? {
        if let xdg = environment[EnvironmentVariable.configHome], xdg.hasPrefix("/") { return xdg + "/booksync/config.json" }
        if let home = environment[EnvironmentVariable.home], home.hasPrefix("/") { return home + "/.config/booksync/config.json" }
        return nil
    }

    /// The `tokenCommand` the file names; nil when the file or the key is absent.
    package static func tokenCommand(at path: String) throws(RemoteError) -> String? {
        let bytes = try contents(of: path)
        guard let bytes else { return nil }
        let top: Fields
        do {
            top = try JSONParser.parseObject(bytes)
        } catch {
            throw .configuration("\(path):\(error.position): \(error.message)")
        }
        guard let value = top["tokenCommand"] else { return nil }
        guard case .string(let command) = value, !command.trimmingWhitespace.isEmpty else {
            throw .configuration("\(path): \"tokenCommand\" must be a non-empty string such as \"gcloud auth print-access-token\"")
        }
        return command
    }

    /// The file's bytes (at most 1 MiB), nil if it does not exist. A link is
    /// followed (the user's own file); anything but a regular file is refused
    /// before it is read. `holding` says what the file is for, in the message
    /// when it is not a regular file.
    static func contents(of path: String, holding: String = "its user settings") throws(RemoteError) -> [UInt8]? {
        do {
            return try FileSystem.readUserFile(path, limit: 1 << 20)
        } catch {
            if error.isNotFound { return nil }
            if error.unsafeKind != nil { throw .configuration("\(path) is not a regular file; booksync reads \(holding) from it") }
            if error.code == EFBIG { throw .configuration("\(path) is larger than 1 MiB; it should hold a few settings or one key") }
            throw .configuration(error.description)
        }
    }
}
