/// Where Firestore's REST API is and how to authenticate to it.
public struct FirestoreEndpoint: Sendable {
    /// `https://firestore.googleapis.com/v1/` or `http://HOST:PORT/v1/` for the emulator.
    public let baseURL: String
    public let isEmulator: Bool
    public let tokens: AccessTokens

    public init(baseURL: String, isEmulator: Bool, tokens: AccessTokens) {
        self.baseURL = baseURL
        self.isEmulator = isEmulator
        self.tokens = tokens
    }

    public static let productionURL = "https://firestore.googleapis.com/v1/"

    /// The endpoint the environment asks for: the emulator when
    /// `FIRESTORE_EMULATOR_HOST=host:port` is set (plain HTTP, `Bearer owner`),
    /// else production over HTTPS with a token from `BOOKSYNC_ACCESS_TOKEN` or
    /// the config's token command.
    public static func resolve(environment: [String: String], tokenCommand: String?) throws(RemoteError) -> FirestoreEndpoint {
        if let host = environment["FIRESTORE_EMULATOR_HOST"], !host.isEmpty {
            guard isHostPort(host) else {
                throw .configuration("FIRESTORE_EMULATOR_HOST must be host:port (e.g. 127.0.0.1:8080), not '\(host)'")
            }
            return FirestoreEndpoint(baseURL: "http://\(host)/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("owner")))
        }
        var source: AccessTokens.Source?
        if let token = environment["BOOKSYNC_ACCESS_TOKEN"], !token.isEmpty {
            source = .fixed(token)
        } else if let tokenCommand, !tokenCommand.isEmpty {
            source = .command(tokenCommand)
        }
        if let source {
            // BOOKSYNC_FIRESTORE_URL points at another deployment of the REST API
            // (a gateway, a test server); plain HTTP only to loopback.
            if let url = environment["BOOKSYNC_FIRESTORE_URL"], !url.isEmpty {
                return try custom(baseURL: url, tokens: AccessTokens(source: source))
            }
            return FirestoreEndpoint(baseURL: productionURL, isEmulator: false, tokens: AccessTokens(source: source))
        }
        throw .authentication(
            "no Firestore credentials: set BOOKSYNC_ACCESS_TOKEN, or remote.tokenCommand in .booksync/config.json "
                + "(e.g. \"gcloud auth print-access-token\"), or FIRESTORE_EMULATOR_HOST for the emulator")
    }

    /// An explicit base URL (tests, other deployments). Plain HTTP is accepted only
    /// for loopback hosts, so a token is never sent in the clear over a network.
    public static func custom(baseURL: String, tokens: AccessTokens) throws(RemoteError) -> FirestoreEndpoint {
        guard let (scheme, host) = schemeAndHost(baseURL) else {
            throw .configuration("'\(baseURL)' is not a URL")
        }
        if scheme == "http", !isLoopback(host) {
            throw .configuration("refusing plain HTTP to \(host): only loopback hosts and the emulator may be reached without TLS")
        }
        let normalized = baseURL.hasSuffix("/") ? baseURL : baseURL + "/"
        return FirestoreEndpoint(baseURL: normalized, isEmulator: false, tokens: tokens)
    }

    /// `http` and `127.0.0.1` of `http://127.0.0.1:8080/v1/`; `[::1]` keeps its brackets.
    /// Strict: an authority with user info (`http://127.0.0.1@evil.com/`),
    /// a backslash, or any character a URL parser might read differently from
    /// this one is not a URL here, so the host checked is the host connected to.
    static func schemeAndHost(_ url: String) -> (scheme: String, host: String)? {
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

    /// Whether plain HTTP may go to `host` (see `HostAddress.isLoopback`).
    static func isLoopback(_ host: String) -> Bool {
        HostAddress.isLoopback(host)
    }
}

/// Access tokens for Firestore, fetched once and refreshed once on 401.
/// Tokens are never printed: not in errors, not with `--verbose`.
public actor AccessTokens {
    public enum Source: Sendable {
        /// A token that cannot be refreshed (the emulator's `owner`, `BOOKSYNC_ACCESS_TOKEN`).
        case fixed(String)
        /// A shell command that prints a token (`gcloud auth print-access-token`).
        case command(String)
    }

    private let source: Source
    private var cached: String?

    public init(source: Source) {
        self.source = source
    }

    /// The current token; `refresh` forces a new one from a command source.
    /// Returns nil when a refresh is asked of a fixed token (nothing new to try).
    public func token(refresh: Bool = false) throws(RemoteError) -> String? {
        switch source {
        case .fixed(let token):
            return refresh ? nil : token
        case .command(let command):
            if let cached, !refresh { return cached }
            let token = try Self.run(command)
            cached = token
            return token
        }
    }

    private static func run(_ command: String) throws(RemoteError) -> String {
        let (status, output) = Subprocess.run(["/bin/sh", "-c", command], captureOutput: true)
        let token = String(decoding: output, as: UTF8.self).trimmingWhitespace
        guard status == 0, !token.isEmpty, !token.contains(where: { $0.isWhitespace }) else {
            throw .authentication("the token command '\(command)' failed (exit \(status)) or printed no token")
        }
        return token
    }
}
