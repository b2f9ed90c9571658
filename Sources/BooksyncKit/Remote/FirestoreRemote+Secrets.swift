/// How FirestoreRemote keeps tokens out of what it reports (the manual's Firestore article):
/// every text that came from the server (error messages and status names,
/// write statuses, names of unusable documents, a redirect's Location) is
/// scrubbed by `SecretRedaction` before it leaves `FirestoreRemote` in an
/// error, an outcome or a `--verbose` log line. A proxy or a test server that
/// echoes the request's `Authorization` header would otherwise print the
/// token on every failing command.
extension FirestoreHTTPClient {
    /// What scrubs tokens from server text (see `SecretRedaction`), with the
    /// token fetched first, so that one a command prints is known to it too.
    /// A token that cannot be had fails the first request instead, with its reason.
    func redaction() async -> SecretRedaction {
        _ = try? await endpoint.tokens.token()
        return await endpoint.tokens.redaction()
    }

    /// Characters of a server's message shown in an error (cut by
    /// `SecretRedaction.excerpt`, after scrubbing).
    static let shownMessageCharacters = 500

    /// A server's message as an error shows it: scrubbed and cut at
    /// `shownMessageCharacters`, except that a link to the Firebase console
    /// is never cut (up to 4,000 characters): a query that needs a composite
    /// index (a scope with the change field) fails with the link that
    /// creates it, and half a link creates nothing.
    static func shownMessage(_ message: String, redact: SecretRedaction) -> String {
        let scrubbed = redact(message)
        guard scrubbed.count > shownMessageCharacters, let link = scrubbed.firstRange(of: "https://console.firebase.google.com/") else {
            return redact.excerpt(message, limit: shownMessageCharacters)
        }
        let end = scrubbed[link.lowerBound...].firstIndex(where: { $0.isWhitespace }) ?? scrubbed.endIndex
        let keep = min(max(shownMessageCharacters, scrubbed.distance(from: scrubbed.startIndex, to: end)), 4_000)
        return keep >= scrubbed.count ? scrubbed : String(scrubbed.prefix(keep)) + " …"
    }

    /// Why a 3xx answer is an error: where it pointed, and that booksync does not go there.
    static func redirectMessage(_ response: HTTPResponse, during: String, redact: SecretRedaction) -> String {
        let location = response.headers["location"].map { " to " + redact.excerpt($0, limit: shownMessageCharacters) } ?? ""
        return "Firestore answered \(response.status), a redirect\(location), to \(during); booksync does not follow redirects "
            + "(one could carry the access token to another host): check the endpoint (BOOKSYNC_FIRESTORE_URL, FIRESTORE_EMULATOR_HOST)"
    }
}

extension FirestoreRemote {
    /// The client's token scrubber (see `FirestoreHTTPClient.redaction()`).
    func redaction() async -> SecretRedaction {
        await client.redaction()
    }
}

extension RemoteError {
    /// The same error with every text in it scrubbed; the case and status stay,
    /// so callers that match on them (a failed precondition) are unaffected.
    func redacted(_ redact: SecretRedaction) -> RemoteError {
        switch self {
        case .unreachable(let endpoint, let detail, let attempts):
            .unreachable(endpoint: redact(endpoint), detail: redact(detail), attempts: attempts)
        case .rejected(let during, let status, let code, let message):
            .rejected(during: redact(during), status: status, code: redact(code), message: redact(message))
        case .malformedResponse(let during, let detail):
            .malformedResponse(during: redact(during), detail: redact(detail))
        case .authentication(let message):
            .authentication(redact(message))
        case .configuration(let message):
            .configuration(redact(message))
        case .deadlineExceeded(let during, let seconds, let lastProblem):
            .deadlineExceeded(during: redact(during), seconds: seconds, lastProblem: redact(lastProblem))
        }
    }
}

extension UnusableRemoteDocument {
    func redacted(_ redact: SecretRedaction) -> UnusableRemoteDocument {
        UnusableRemoteDocument(name: redact(name), message: redact(message))
    }
}
