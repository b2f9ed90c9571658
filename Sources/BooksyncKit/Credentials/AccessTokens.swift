/// Access tokens for Firestore, fetched once and refreshed once on 401.
/// Tokens are never printed: not in errors, not with `--verbose`; every text
/// that came from a server or a program is passed through `redaction()` first.
package actor AccessTokens {
    /// Where tokens come from; `FirestoreEndpoint.resolve` picks one from the
    /// environment and user config.
    package enum Source: Sendable {
        /// A token that cannot be refreshed (the emulator's `owner`, `BOOKSYNC_ACCESS_TOKEN`).
        case fixed(String)
        /// A program that prints a token (`gcloud auth print-access-token`), run
        /// through `/bin/sh -c`. `origin` says where the user named it
        /// (`BOOKSYNC_TOKEN_COMMAND`, the user config file), for error messages.
        /// Never a command from inside a collection: see `FirestoreEndpoint.resolve`.
        case command(String, origin: String = EnvironmentVariable.tokenCommand)
        /// A credentials file or the metadata server (`CredentialSources`):
        /// tokens that expire, fetched over HTTP.
        case exchange(TokenExchange)
    }

    /// A token from an exchange is used until this many seconds before it expires.
    package static let expiryMargin = 60.0

    /// The longest a token command may run by default, in seconds.
    package static let defaultCommandTimeout = 30.0

    private let source: Source
    private let isSecret: Bool
    private let commandTimeout: Double
    private var cached: String?
    /// Every token handed out so far (a refresh adds one): all are scrubbed from text.
    private var issued: [String] = []
    /// A command that failed is not run again by every parallel request.
    private var failure: RemoteError?
    /// When the cached token of an exchange stops being used.
    private var expiry: ContinuousClock.Instant?
    /// The exchange under way: parallel requests wait for it instead of each starting one.
    private var inFlight: Task<Result<String, RemoteError>, Never>?

    /// Tokens from `source`, fetched when first asked for.
    /// - Parameters:
    ///   - source: Where tokens come from: a fixed token, a command, an exchange.
    ///   - isSecret: false only for the emulator's well-known `owner`, which is
    ///     not worth garbling every message that happens to contain the word.
    ///   - commandTimeout: Seconds a token command may run before it
    ///     is stopped and the request fails.
    package init(source: Source, isSecret: Bool = true, commandTimeout: Double = AccessTokens.defaultCommandTimeout) {
        self.source = source
        self.isSecret = isSecret
        self.commandTimeout = commandTimeout
        if case .fixed(let token) = source, isSecret { issued = [token] }
        if case .exchange(let exchange) = source { issued = exchange.secrets.filter { !$0.isEmpty } }
    }

    /// The current token; `refresh` forces a new one from a command or an
    /// exchange (the remote asks for one after a 401). Returns nil when a
    /// refresh is asked of a fixed token (nothing new to try). Concurrent
    /// callers share one exchange; a command runs synchronously, up to
    /// `commandTimeout` seconds, and a failure is remembered until a refresh.
    /// - Throws: `RemoteError.authentication` naming the source, the cause
    ///   (also an unreachable token endpoint) and what to do; never a token.
    package func token(refresh: Bool = false) async throws(RemoteError) -> String? {
        switch source {
        case .fixed(let token):
            return refresh ? nil : token
        case .command(let command, let origin):
            if let cached, !refresh { return cached }
            if let failure, !refresh { throw failure }
            do {
                let token = try TokenCommand.run(command, origin: origin, timeout: commandTimeout)
                cached = token
                if !issued.contains(token) { issued.append(token) }
                return token
            } catch {
                failure = error
                throw error
            }
        case .exchange(let exchange):
            if let cached, !refresh, let expiry, ContinuousClock.now < expiry { return cached }
            if let failure, !refresh { throw failure }
            let task: Task<Result<String, RemoteError>, Never>
            if let inFlight {
                task = inFlight
            } else {
                task = Task { await self.exchange(exchange) }
                inFlight = task
            }
            return try await task.value.get()
        }
    }

    /// One exchange: caches its token until `expiryMargin` seconds before it
    /// expires (half its life for one shorter than twice the margin).
    private func exchange(_ exchange: TokenExchange) async -> Result<String, RemoteError> {
        defer { inFlight = nil }
        do {
            let fetched = try await exchange.fetch()
            let (token, lifetime) = (fetched.token, fetched.lifetime)
            let usable = lifetime > 2 * Self.expiryMargin ? lifetime - Self.expiryMargin : lifetime / 2
            cached = token
            expiry = ContinuousClock.now + .milliseconds(Int64(usable * 1000))
            failure = nil
            // The subject, federated or source token that led to it is as secret as the token.
            for secret in fetched.secrets + [token] where !secret.isEmpty && !issued.contains(secret) { issued.append(secret) }
            return .success(token)
        } catch {
            failure = error
            return .failure(error)
        }
    }

    /// What scrubs this source's tokens (and any `Bearer …`) from a text.
    package func redaction() -> SecretRedaction {
        SecretRedaction(secrets: issued)
    }
}

/// Runs a token command: bounded in time, its standard error shown when it
/// fails (gcloud says there what to do, "run gcloud auth login"; it never
/// holds the token). Its lines are joined into the one-line message; control
/// characters in it are escaped where every message is, at the CLI's console
/// gate (`TerminalText`, the manual's Safety article), so they are not escaped twice.
enum TokenCommand {
    /// Characters of a failing command's standard error shown in the message.
    static let shownErrorCharacters = 2_000

    static func run(_ command: String, origin: String, timeout: Double) throws(RemoteError) -> String {
        let result = Subprocess.capture(["/bin/sh", "-c", command], timeout: timeout)
        let named = "the token command '\(command)' (from \(origin))"
        guard let status = result.status else {
            throw .authentication(
                "\(named) printed no token within \(format(timeout)) s and was stopped; run it by hand to see what it waits for"
                    + " (BOOKSYNC_REQUEST_TIMEOUT sets the limit)" + details(result.error))
        }
        let token = String(decoding: result.output, as: UTF8.self).trimmingWhitespace
        guard status == 0, !token.isEmpty, !token.contains(where: { $0.isWhitespace }) else {
            let what = status == 0 ? (token.isEmpty ? "printed no token" : "printed more than one word") : "failed (exit \(status))"
            throw .authentication("\(named) \(what)" + details(result.error))
        }
        return token
    }

    /// The command's standard error after a colon, its lines joined by
    /// spaces, or nothing. A `Bearer …` in it is scrubbed all the same, before
    /// the text is cut.
    static func details(_ error: [UInt8]) -> String {
        let text = String(decoding: error, as: UTF8.self)
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map { String($0).trimmingWhitespace }.filter { !$0.isEmpty }
        guard !lines.isEmpty else { return "" }
        return ": " + SecretRedaction(secrets: []).excerpt(lines.joined(separator: " "), limit: shownErrorCharacters)
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

/// Scrubs secrets from text that came from outside (a server's error message,
/// a program's output) before it is put in an error or a log line: each known
/// secret, and the credential of any `Bearer …`, become `[redacted]`. A server
/// or proxy that echoes the request (its `Authorization` header, its form
/// body) back in its error text would otherwise print the secret.
///
/// A secret is found raw and as it travels in a URL or a form body: any of its
/// bytes may be written `%XX` (either case of hex) and a space `+`, as each
/// encoder has its own idea of what to escape.
///
/// One pass, the longest match first: what has been replaced is never looked
/// at again, so a one-letter secret cannot garble the marker of another.
///
/// Bytes are compared, not Characters: a combining mark after a token must not
/// make it a different "character" and slip through.
package struct SecretRedaction: Sendable {
    /// What each secret is replaced with.
    package static let replacement = "[redacted]"
    /// The exact texts to scrub (for `AccessTokens`, every token handed out); never empty strings.
    package let secrets: [String]
    /// `secrets` as bytes, without repeats, longest first.
    private let needles: [[UInt8]]
    /// Bytes a match can start with: each secret's first, `%` and `+`.
    private let starts: Set<UInt8>

    /// A redaction of `secrets` (empty ones are dropped) and of every `Bearer …`
    /// credential; with no secrets it still scrubs `Bearer …`.
    package init(secrets: [String]) {
        self.secrets = secrets.filter { !$0.isEmpty }
        var seen = Set<String>()
        needles = self.secrets.filter { seen.insert($0).inserted }.map { Array($0.utf8) }.sorted { $0.count > $1.count }
        starts = Set(needles.map { $0[0] } + [UInt8(ascii: "%"), UInt8(ascii: "+")])
    }

    /// `text` with every secret and `Bearer` credential replaced by `replacement`.
    package func callAsFunction(_ text: String) -> String {
        let bytes = Array(text.utf8)
        let marker = Array(Self.replacement.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if let end = longestMatch(in: bytes, at: i) {
                out += marker
                i = end
            } else if let (credential, end) = Self.bearerCredential(in: bytes, at: i) {
                // The credential runs to the end of a secret that starts there,
                // even one with a byte outside the credential characters.
                let stop = max(end, longestMatch(in: bytes, at: credential) ?? end)
                out += bytes[i..<credential]
                out += stop > credential && bytes[credential..<stop] != marker[...] ? marker[...] : bytes[credential..<stop]
                i = stop
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` scrubbed, then cut to `limit` characters (" …" marks a cut). In
    /// that order: a secret that straddles the cut is still whole when it is
    /// looked for, so no piece of it is shown.
    package func excerpt(_ text: String, limit: Int) -> String {
        let scrubbed = self(text)
        return scrubbed.count <= limit ? scrubbed : String(scrubbed.prefix(limit)) + " …"
    }

    /// The end of the longest secret (in any of its encodings) at `start`.
    private func longestMatch(in bytes: [UInt8], at start: Int) -> Int? {
        guard !needles.isEmpty, starts.contains(bytes[start]) else { return nil }
        var best: Int?
        for needle in needles {
            if let end = Self.match(needle, in: bytes, at: start), end > (best ?? start) { best = end }
        }
        return best
    }

    /// Where `needle` ends when it starts at `start`, each byte raw, `%XX` or
    /// (a space) `+`. A raw `%` in a secret is either itself or `%25`, so every
    /// way through is followed; the longest wins.
    static func match(_ needle: [UInt8], in bytes: [UInt8], at start: Int) -> Int? {
        var positions = [start]
        var next: [Int] = []
        for byte in needle {
            next.removeAll(keepingCapacity: true)
            for p in positions where p < bytes.count {
                let c = bytes[p]
                if c == byte { next.append(p + 1) }
                if c == UInt8(ascii: "+"), byte == 0x20 { next.append(p + 1) }
                if c == UInt8(ascii: "%"), p + 2 < bytes.count, let high = hexValue(bytes[p + 1]), let low = hexValue(bytes[p + 2]),
                   high << 4 | low == byte, !next.contains(p + 3) {
                    next.append(p + 3)
                }
            }
            if next.isEmpty { return nil }
            swap(&positions, &next)
        }
        return positions.max()
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: b - 0x30
        case 0x41...0x46: b - 0x41 + 10
        case 0x61...0x66: b - 0x61 + 10
        default: nil
        }
    }

    /// At `Bearer` (any case) followed by blanks: where the credential starts
    /// and where its characters (RFC 6750's b64token, plus `%` for an encoded
    /// one) end.
    static func bearerCredential(in bytes: [UInt8], at i: Int) -> (start: Int, end: Int)? {
        guard bytes[i] | 0x20 == UInt8(ascii: "b") else { return nil }
        let word = Array("bearer".utf8)
        guard i + word.count < bytes.count,
              bytes[i..<i + word.count].map({ $0 | 0x20 }).elementsEqual(word),
              isBlank(bytes[i + word.count]) else { return nil }
        var j = i + word.count
        while j < bytes.count, isBlank(bytes[j]) { j += 1 }
        var k = j
        while k < bytes.count, isCredential(bytes[k]) { k += 1 }
        return (j, k)
    }

    private static func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }

    private static func isCredential(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"),
             UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "%"), UInt8(ascii: "["), UInt8(ascii: "]"):
            true
        default: false
        }
    }
}
