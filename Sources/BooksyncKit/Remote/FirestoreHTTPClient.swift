import BooksyncCore

/// The thin Firestore HTTP client under `FirestoreRemote`: a request in, the
/// parsed JSON answer out, with what every request needs and nothing about
/// collections.
///
/// - Auth: the endpoint's access token in `Authorization` (and the quota
///   project header); a 401 refreshes a command token once.
/// - Timeout: every request carries `retry.requestTimeout`.
/// - Retries with backoff (`RetryPolicy`) for 429, 5xx, 409 ABORTED, network
///   errors and 2xx answers that are not JSON, bounded in attempts and time.
/// - Logging for `--verbose`: one line per attempt (method, path, status,
///   duration), scrubbed of tokens, never headers.
/// - The last problem is typed (`RequestProblem`): what it was decides which
///   `RemoteError` ends the retries.
struct FirestoreHTTPClient: Sendable {
    let endpoint: FirestoreEndpoint
    let transport: HTTPTransport
    let retry: RetryPolicy
    /// Called with a one-line description of each request (method, path, status,
    /// duration) for `--verbose`. Never includes headers or tokens.
    let log: @Sendable (String) -> Void
    /// Requests sent and the estimated billed reads of the answers received.
    let usage: FirestoreUsage

    /// Sends a request with auth, timeout and retries, and parses the JSON answer.
    /// - Parameter during: what the request is for, in words ("list books"), for errors.
    func send(_ request: HTTPRequest, during: String) async throws(RemoteError) -> Value {
        try await sendMeasured(request, during: during).value
    }

    /// A parsed 2xx answer.
    struct Answer {
        let value: Value
        /// The size of the body in bytes.
        let bytes: Int
        /// By index among `entries`: the entries the parser refused, each
        /// replaced in `value` by `entries.placeholder`.
        let refused: [Int: RefusedEntry]
    }

    /// `send`, also returning the size of the body; with `entries`, an
    /// answer the parser refuses only because of some of those entries is
    /// read all the same, the refused ones apart (see `salvage`).
    func sendMeasured(_ request: HTTPRequest, during: String, entries: AnswerEntries? = nil) async throws(RemoteError) -> Answer {
        var request = request
        request.timeout = retry.requestTimeout
        if request.body != nil { request.headers["Content-Type"] = "application/json" }
        let started = ContinuousClock.now
        var attempt = 1
        var refreshedToken = false
        while true {
            if Task.isCancelled { throw cancelled(attempts: attempt) }
            guard let token = try await endpoint.tokens.token() else {
                throw .authentication("no Firestore access token")
            }
            request.headers["Authorization"] = "Bearer " + token
            if let quota = endpoint.quotaProject { request.headers["x-goog-user-project"] = quota }
            let redact = await endpoint.tokens.redaction()
            let path = URLPath.displayPath(request.url, base: endpoint.baseURL)
            let sent = ContinuousClock.now
            let problem: RequestProblem
            var retryAfter: Double?
            let response: HTTPResponse
            usage.requestSent()
            do {
                response = try await transport(request)
            } catch {
                log(redact("\(request.method) \(path) → \(error.message) after \(Self.milliseconds(since: sent)) ms"))
                if error.kind == .cancelled { throw cancelled(attempts: attempt) }
                if error.kind == .tooLarge { throw .malformedResponse(during: during, detail: error.message) }
                problem = .noAnswer(error.message)
                try await giveUpOrWait(problem, retryAfter: nil, attempt: &attempt, started: started, during: during)
                continue
            }
            log(redact("\(request.method) \(path) → \(response.status) in \(Self.milliseconds(since: sent)) ms"))
            if (300..<400).contains(response.status) {
                // URLSessionTransport refuses to follow redirects: one could
                // carry the Authorization header to another host, in clear.
                throw .configuration(Self.redirectMessage(response, during: during, redact: redact))
            }
            if (200..<300).contains(response.status) {
                var answer: (value: Value, refused: [Int: RefusedEntry])?
                var unreadable = ""
                do {
                    answer = (try JSONParser.parse(response.body, decodeTags: false), [:])
                } catch {
                    answer = entries.flatMap { Self.salvage(response.body, entries: $0) }
                    unreadable = "\(error)"
                }
                if let answer {
                    // Counted here, before the answer is interpreted, so that
                    // documents of an answer that then fails (an error entry
                    // after some documents) are counted too. A 2xx answer that
                    // is not JSON cannot be counted.
                    usage.answered(method: request.method, url: request.url, answer: answer.value)
                    return Answer(value: answer.value, bytes: response.body.count, refused: answer.refused)
                }
                // A truncated or garbled answer is worth another try.
                problem = .unreadableAnswer(unreadable)
            } else {
                var (code, message) = Self.errorDetails(response.body)
                (code, message) = (redact(code), Self.shownMessage(message, redact: redact))
                // A refresh that fails says why (an expired refresh token, say), not just "401".
                if response.status == 401, !refreshedToken, try await endpoint.tokens.token(refresh: true) != nil {
                    refreshedToken = true
                    continue
                }
                if response.status == 401 || response.status == 403 {
                    throw .authentication("Firestore refused the credentials (\(response.status) \(code)): \(message)")
                }
                guard RetryPolicy.isRetryable(status: response.status, code: code) else {
                    throw .rejected(during: during, status: response.status, code: code, message: message)
                }
                problem = .status(response.status, code: code, message: message)
                retryAfter = response.headers["retry-after"].flatMap(Double.init)
            }
            try await giveUpOrWait(problem, retryAfter: retryAfter, attempt: &attempt, started: started, during: during)
        }
    }

    /// An answer the parser refused because of some of its entries (a
    /// document nested deeper than it reads, a number beyond a double): the
    /// rest parsed, each refused entry replaced by `entries.placeholder` and
    /// kept apart with the parser's reason. nil when the answer is broken
    /// elsewhere (truncated, garbled: not well-formed JSON), which stays an
    /// unreadable answer, retried, as is one whose refused part is not an entry.
    static func salvage(_ body: [UInt8], entries: AnswerEntries) -> (value: Value, refused: [Int: RefusedEntry])? {
        guard let (array, elements) = JSONParser.arrayElements(body, member: entries.member) else { return nil }
        var items: [Value] = []
        var refused: [Int: RefusedEntry] = [:]
        for (index, range) in elements.enumerated() {
            do {
                items.append(try JSONParser.parse(body[range], decodeTags: false))
            } catch {
                items.append(entries.placeholder)
                refused[index] = RefusedEntry(bytes: Array(body[range]), reason: error.message)
            }
        }
        guard !refused.isEmpty else { return nil }
        guard let member = entries.member else { return (.array(items), refused) }
        let rest = Array(body[..<array.lowerBound]) + Array("[]".utf8) + body[array.upperBound...]
        guard case .map(var top)? = try? JSONParser.parse(rest, decodeTags: false) else { return nil }
        top[member] = .array(items)
        return (.map(top), refused)
    }

    /// After a failed attempt: the error that ends the retries when attempts or
    /// time have run out, else the backoff wait, and on to the next attempt.
    private func giveUpOrWait(_ problem: RequestProblem, retryAfter: Double?, attempt: inout Int,
                              started: ContinuousClock.Instant, during: String) async throws(RemoteError) {
        let elapsed = Double((ContinuousClock.now - started).components.seconds)
        if attempt >= retry.maximumAttempts {
            switch problem {
            case .unreadableAnswer: throw .malformedResponse(during: during, detail: problem.description)
            case .status(let status, let code, let message) where status == 429 || status == 409:
                // Firestore answered, every time: a quota or contention, not a network that cannot reach it.
                throw .rejected(during: during, status: status, code: code,
                                message: (message.isEmpty ? "" : message + " ") + "(still refused after \(attempt) attempts)")
            case .status, .noAnswer: throw .unreachable(endpoint: endpoint.baseURL, detail: problem.description, attempts: attempt)
            }
        }
        let wait = retry.delay(afterAttempt: attempt, retryAfter: retryAfter)
        if elapsed + wait > retry.totalDeadline.seconds {
            let asked = retryAfter.map { ", and Firestore asked to wait \(RetryPolicy.format($0)) s more" } ?? ""
            throw .deadlineExceeded(during: during, seconds: Int(elapsed), lastProblem: problem.description + asked)
        }
        await retry.sleep(.seconds(wait))
        attempt += 1
    }

    /// The error of a request whose task was cancelled (Ctrl-C): the engine
    /// reports the command as interrupted, whatever the text.
    func cancelled(attempts: Int = 1) -> RemoteError {
        .unreachable(endpoint: endpoint.baseURL, detail: "cancelled", attempts: attempts)
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let d = ContinuousClock.now - start
        return Int(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Firestore's error body: `{"error": {"code": 409, "message": "…", "status": "ALREADY_EXISTS"}}`.
    /// Anything else is returned as text, whole: it is cut only after it is
    /// scrubbed (`SecretRedaction.excerpt`), so that no token is cut in two and
    /// a piece of it shown.
    static func errorDetails(_ body: [UInt8]) -> (code: String, message: String) {
        // Bounded work for any error body. The cut is far past what is shown
        // (`shownMessageCharacters`), so a token it splits is never in view.
        let body = body.count > errorBodyLimit ? Array(body.prefix(errorBodyLimit)) : body
        guard case .map(let top)? = try? JSONParser.parse(body, decodeTags: false), case .map(let error)? = top["error"] else {
            return ("", String(decoding: body, as: UTF8.self).trimmingWhitespace)
        }
        return errorDetails(error)
    }

    /// The most of an error body that is read: 1 MiB (Firestore's are a few hundred bytes).
    static let errorBodyLimit = 1 << 20

    /// Status name and message of a Firestore error object (`{"code", "status", "message"}`),
    /// as an error answer or an entry of a `:runQuery` answer carries it. The
    /// name is the `status` string (a `GRPCCode` name, or whatever a gateway
    /// wrote); `code` there is the HTTP status, not the gRPC number.
    static func errorDetails(_ error: [String: Value]) -> (code: String, message: String) {
        var code = ""
        var message = ""
        if case .string(let s)? = error["status"] { code = s }
        if case .string(let m)? = error["message"] { message = m }
        return (code, message)
    }
}

/// Where the entries of a listing or `:batchGet` answer are, so that one
/// entry the parser refuses is read apart from the others.
struct AnswerEntries: Sendable {
    /// The top object's member holding them; nil: the answer is an array of them.
    let member: String?
    /// Stands in for a refused entry in the parsed answer, shaped as an entry
    /// holding a document, so that the billed reads still count it.
    let placeholder: Value
}

/// An entry of an answer that the parser refused, with the parser's reason.
struct RefusedEntry: Sendable {
    let bytes: [UInt8]
    let reason: String
}

/// Why an attempt failed in a way worth another try; the last one becomes the
/// error when the retries end: an unreadable answer is a malformed response,
/// the others mean Firestore could not be reached (or time ran out).
enum RequestProblem: Sendable, Equatable, CustomStringConvertible {
    /// A 2xx answer whose body is not JSON (truncated, garbled); the parser's reason.
    case unreadableAnswer(String)
    /// A retryable status (429, 5xx, 409 ABORTED) with Firestore's status name
    /// and message (scrubbed and shortened): "Quota exceeded …" tells the user
    /// more than any text of ours.
    case status(Int, code: String, message: String)
    /// No HTTP answer (refused, reset, timed out), in the transport's words.
    case noAnswer(String)

    /// The words that end up in the error (`lastProblem`, `detail`).
    var description: String {
        switch self {
        case .unreadableAnswer(let reason): "the answer is not valid JSON (\(reason))"
        case .status(let status, let code, let message): "\(status) \(code)" + (message.isEmpty ? "" : ": " + message)
        case .noAnswer(let message): message
        }
    }
}
