import BooksyncCore

/// Every request: auth, timeout, retries with backoff, error details, bounded fan-out.
extension FirestoreRemote {
    /// Sends a request with auth, timeout and retries, and parses the JSON answer.
    func send(_ request: HTTPRequest, during: String) async throws(RemoteError) -> Value {
        try await sendMeasured(request, during: during).value
    }

    /// `send`, also returning the size of the answer's body in bytes.
    func sendMeasured(_ request: HTTPRequest, during: String) async throws(RemoteError) -> (value: Value, bytes: Int) {
        var request = request
        request.timeout = retry.requestTimeout
        if request.body != nil { request.headers["Content-Type"] = "application/json" }
        let started = ContinuousClock.now
        var attempt = 1
        var refreshedToken = false
        var lastProblem = ""
        while true {
            if Task.isCancelled { throw .unreachable(endpoint: endpoint.baseURL, detail: "cancelled", attempts: attempt) }
            guard let token = try await endpoint.tokens.token() else {
                throw .authentication("no Firestore access token")
            }
            request.headers["Authorization"] = "Bearer " + token
            if let quota = endpoint.quotaProject { request.headers["x-goog-user-project"] = quota }
            let redact = await endpoint.tokens.redaction()
            let path = URLPath.displayPath(request.url, base: endpoint.baseURL)
            let sent = ContinuousClock.now
            var retryAfter: Double?
            do {
                let response = try await transport(request)
                log(redact("\(request.method) \(path) → \(response.status) in \(Self.milliseconds(since: sent)) ms"))
                if (300..<400).contains(response.status) {
                    // URLSessionTransport refuses to follow redirects: one could
                    // carry the Authorization header to another host, in clear.
                    throw RemoteError.configuration(Self.redirectMessage(response, during: during, redact: redact))
                }
                if (200..<300).contains(response.status) {
                    do {
                        return (try JSONParser.parse(response.body, decodeTags: false), response.body.count)
                    } catch {
                        lastProblem = "the answer is not valid JSON (\(error))"
                        // A truncated or garbled answer is worth another try.
                    }
                } else {
                    var (code, message) = Self.errorDetails(response.body)
                    (code, message) = (redact(code), Self.shortened(redact(message)))
                    // A refresh that fails says why (an expired refresh token, say), not just "401".
                    if response.status == 401, !refreshedToken, try await endpoint.tokens.token(refresh: true) != nil {
                        refreshedToken = true
                        continue
                    }
                    if response.status == 401 || response.status == 403 {
                        throw RemoteError.authentication("Firestore refused the credentials (\(response.status) \(code)): \(message)")
                    }
                    guard RetryPolicy.isRetryable(status: response.status, code: code) else {
                        throw RemoteError.rejected(during: during, status: response.status, code: code, message: message)
                    }
                    lastProblem = "\(response.status) \(code)"
                    retryAfter = response.headers["retry-after"].flatMap(Double.init)
                }
            } catch let error as TransportError {
                log(redact("\(request.method) \(path) → \(error.message) after \(Self.milliseconds(since: sent)) ms"))
                if error.kind == .cancelled { throw .unreachable(endpoint: endpoint.baseURL, detail: "cancelled", attempts: attempt) }
                lastProblem = error.message
            } catch let error as RemoteError {
                throw error
            } catch {
                lastProblem = "\(error)"
            }
            let elapsed = Double((ContinuousClock.now - started).components.seconds)
            if attempt >= retry.maximumAttempts {
                if lastProblem.contains("not valid JSON") { throw .malformedResponse(during: during, detail: lastProblem) }
                throw .unreachable(endpoint: endpoint.baseURL, detail: lastProblem, attempts: attempt)
            }
            let wait = retry.delay(afterAttempt: attempt, retryAfter: retryAfter)
            if elapsed + wait > retry.totalDeadline {
                throw .deadlineExceeded(during: during, seconds: Int(elapsed), lastProblem: lastProblem)
            }
            await retry.sleep(wait)
            attempt += 1
        }
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let d = ContinuousClock.now - start
        return Int(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Firestore's error body: `{"error": {"code": 409, "message": "…", "status": "ALREADY_EXISTS"}}`.
    /// Anything else is returned as text, whole up to 64 KiB: it is scrubbed of
    /// tokens before `shortened`, so that no token is cut in two and half shown.
    static func errorDetails(_ body: [UInt8]) -> (code: String, message: String) {
        guard case .map(let top)? = try? JSONParser.parse(body, decodeTags: false), case .map(let error)? = top["error"] else {
            return ("", String(decoding: body.prefix(64 * 1024), as: UTF8.self).trimmingWhitespace)
        }
        return errorDetails(error)
    }

    /// Status name and message of a Firestore error object (`{"code", "status", "message"}`),
    /// as an error answer or an entry of a `:runQuery` answer carries it.
    static func errorDetails(_ error: [String: Value]) -> (code: String, message: String) {
        var code = ""
        var message = ""
        if case .string(let s)? = error["status"] { code = s }
        if case .string(let m)? = error["message"] { message = m }
        return (code, message)
    }

    /// Runs `work` over `items` with at most `parallelRequests` in flight; the
    /// first error stops new work and is thrown once the running work ends.
    func inParallel<Item: Sendable, Output: Sendable>(
        _ items: [Item], _ work: @escaping @Sendable (Item) async throws(RemoteError) -> Output
    ) async throws(RemoteError) -> [Output] {
        let outcome = await withTaskGroup(of: Result<Output, RemoteError>.self) { group -> Result<[Output], RemoteError> in
            var collected: [Output] = []
            var firstError: RemoteError?
            var next = 0
            func startNext() {
                guard next < items.count, firstError == nil else { return }
                let item = items[next]
                next += 1
                group.addTask {
                    do throws(RemoteError) {
                        return .success(try await work(item))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            for _ in 0..<min(Self.parallelRequests, items.count) { startNext() }
            for await result in group {
                switch result {
                case .success(let output): collected.append(output)
                case .failure(let error): if firstError == nil { firstError = error }
                }
                startNext()
            }
            if let firstError { return .failure(firstError) }
            return .success(collected)
        }
        return try outcome.get()
    }
}
