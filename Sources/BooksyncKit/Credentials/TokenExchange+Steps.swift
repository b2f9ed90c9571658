import BooksyncCore

/// What the keyless grants (`ExternalAccount`, `ServiceAccountImpersonation`)
/// share: one request of a chain sent with the retry rule of every token
/// request, and the error text of a Google API read and scrubbed.
extension TokenExchange {
    /// One request of a chain (the subject-token URL, the STS, IAM): a 429,
    /// 5xx or network error is tried again, up to `attempts` tries in all, as
    /// a single token request is; a refusal is returned to the caller, which
    /// knows what it means; a redirect is an error (never followed, so a
    /// token cannot be carried to another host).
    /// - Parameters:
    ///   - step: What the request does, in messages ("the STS at URL").
    func send(_ request: HTTPRequest, step: String) async throws(RemoteError) -> HTTPResponse {
        var attempt = 1
        var response: HTTPResponse
        while true {
            do {
                response = try await transport(request)
            } catch {
                if error.kind == .cancelled || error.kind == .tooLarge || Task.isCancelled || attempt >= Self.attempts {
                    throw .authentication("\(origin): cannot reach \(step): \(error.message)")
                }
                attempt += 1
                try? await Task.sleep(for: .milliseconds(250 * attempt))
                continue
            }
            if attempt < Self.attempts, response.status == 429 || (500...599).contains(response.status) {
                attempt += 1
                try? await Task.sleep(for: .milliseconds(250 * attempt))
                continue
            }
            break
        }
        if (300..<400).contains(response.status) {
            throw .authentication("\(origin): \(step) answered with a redirect (\(response.status)), which booksync does not follow")
        }
        return response
    }

    /// A Google API's error answer, `{"error": {"code", "status", "message"}}`
    /// (AIP-193), as `403 PERMISSION_DENIED: message`; an OAuth error
    /// (`{"error", "error_description"}`, RFC 6749 §5.2) as `400 invalid_grant:
    /// description`; anything else as its text. Scrubbed of `redact`'s secrets,
    /// then shortened.
    static func refusal(status: Int, body: [UInt8], redact: SecretRedaction) -> (code: String, said: String) {
        var code = ""
        var message = ""
        if let answer = try? JSONParser.parse(body, decodeTags: false), case .map(let top) = answer {
            switch top["error"] {
            case .map(let error)?:
                if case .string(let s)? = error["status"] { code = s }
                if case .string(let m)? = error["message"] { message = m }
            case .string(let s)?:
                code = s
                if case .string(let d)? = top["error_description"] { message = d }
            default: break
            }
        }
        if code.isEmpty, message.isEmpty { message = String(decoding: body, as: UTF8.self) }
        code = redact.excerpt(code, limit: 100)
        message = redact.excerpt(message.trimmingWhitespace, limit: shownErrorCharacters)
        let said = ([code, message].filter { !$0.isEmpty }).joined(separator: ": ")
        return (code, "\(status)" + (said.isEmpty ? "" : " " + said))
    }

    /// The last dot-separated part of a JWT-shaped secret (its signature): a
    /// server that echoes a token's parts must not show the one that cannot
    /// be made without the key. Nothing for a token without dots.
    static func signature(of token: String) -> [String] {
        let parts = token.split(separator: ".")
        guard parts.count >= 3, let last = parts.last, last.count >= 16 else { return [] }
        return [String(last)]
    }
}
