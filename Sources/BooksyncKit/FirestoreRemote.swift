import BooksyncCore

/// A Firestore collection over the REST API v1.
///
/// - Listing is a `:runQuery` ordered by name, in batches continued after the
///   last name seen; it selects only names and revisions (`select __name__`)
///   unless bodies are wanted. On the emulator this is 4× faster than paging
///   through `GET …/books` with bodies and 7× faster without (BENCHMARKS.md),
///   and it needs a request per up to 2,000 documents (10,000 without
///   bodies) instead of per 300.
/// - Bodies come from `:batchGet` (answers in any order: keyed by name).
/// - Writes go through `:batchWrite` (or `:commit` when atomic), preconditions
///   in the JSON body, chunked by count and size, a few requests in flight.
/// - Every request has a timeout and is retried with backoff for 429, 5xx,
///   ABORTED and network errors; 401 refreshes a command token once.
public struct FirestoreRemote: RemoteCollection {
    public let target: FirestoreTarget
    public let endpoint: FirestoreEndpoint
    let transport: HTTPTransport
    let retry: RetryPolicy
    let rules: RecordRules
    /// Called with a one-line description of each request (method, path, status,
    /// duration) for `--verbose`. Never includes headers or tokens.
    let log: @Sendable (String) -> Void
    /// Documents per listing query, with and without bodies; tests use fewer.
    var firstQueryBatch = Self.firstQueryBatch
    var queryBatch = Self.defaultQueryBatch
    var namesQueryBatch = Self.defaultNamesQueryBatch

    /// Documents per `documents.list` page, when that is used (the emulator caps pages at 150).
    static let pageSize = 300
    /// Documents per listing query with bodies: the first asks for as many as a
    /// `documents.list` page holds; later ones for as many as fit in about
    /// `queryTargetBytes` at the size seen so far (documents can be up to 1 MiB),
    /// at most `defaultQueryBatch`.
    static let firstQueryBatch = 300
    static let defaultQueryBatch = 2_000
    static let queryTargetBytes = 4 << 20
    /// Documents per listing query of names and revisions only (~200 bytes each).
    static let defaultNamesQueryBatch = 10_000
    /// Documents per `:batchGet` request.
    static let fetchBatch = 200
    /// Writes per `:batchWrite` / `:commit` request (Firestore's limit).
    static let writeBatch = 500
    /// Bytes per write request, under Firestore's 10 MiB request limit.
    static let maximumRequestBytes = 9 * 1024 * 1024
    /// Requests in flight at once.
    static let parallelRequests = 4

    public init(
        target: FirestoreTarget, endpoint: FirestoreEndpoint, rules: RecordRules,
        transport: @escaping HTTPTransport, retry: RetryPolicy = RetryPolicy(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.target = target
        self.endpoint = endpoint
        self.rules = rules
        self.transport = transport
        self.retry = retry
        self.log = log
    }

    public var displayName: String {
        "firestore \(target.project)/\(target.database) \(target.collectionPath)" + (endpoint.isEmulator ? " (emulator)" : "")
    }

    var documentsRoot: String { target.documentsRoot }
    var collectionName: String { documentsRoot + "/" + target.collectionPath }

    func documentName(_ id: RecordID) -> String { collectionName + "/" + id.rawValue }

    // MARK: listing

    public func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
        let redact = await redaction()
        var all = RemoteListing()
        do {
            try await list(withBodies: false, progress: progress) { listing, _ in
                all.revisions.merge(listing.revisions) { _, new in new }
                all.unusable += listing.unusable.map { $0.redacted(redact) }
            }
        } catch {
            throw error.redacted(await redaction())
        }
        return all
    }

    public func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                              progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
        let redact = await redaction()
        do {
            try await list(withBodies: true, progress: progress) { listing, documents in
                var listing = listing
                listing.unusable = listing.unusable.map { $0.redacted(redact) }
                batch(listing, documents)
            }
        } catch {
            throw error.redacted(await redaction())
        }
    }

    /// The whole collection, by `:runQuery`; a server that does not offer it
    /// (a gateway answering 404 or 501 UNIMPLEMENTED) is paged through
    /// `documents.list` instead, as DESIGN.md §5 first described.
    /// Each answer's documents go to `each` as it arrives.
    private func list(withBodies: Bool, progress: @escaping @Sendable (Int) -> Void,
                      each: (RemoteListing, [RecordID: RemoteDocument]) -> Void) async throws(RemoteError) {
        var handedOn = false
        do {
            try await query(withBodies: withBodies, progress: progress) { listing, documents in
                handedOn = true
                each(listing, documents)
            }
        } catch {
            // Refused before any answer: the server has no :runQuery.
            guard !handedOn, case .rejected(_, let status, let code, _) = error, status == 404 || status == 501 || code == "UNIMPLEMENTED" else { throw error }
            log(":runQuery refused (\(status) \(code)): listing page by page")
            try await page(withBodies: withBodies, progress: progress, each: each)
        }
    }

    /// Queries the whole collection in batches ordered by name, each continuing
    /// after the last name of the one before; names and revisions only
    /// (`select __name__`) unless `withBodies`.
    private func query(withBodies: Bool, progress: @escaping @Sendable (Int) -> Void,
                       each: (RemoteListing, [RecordID: RemoteDocument]) -> Void) async throws(RemoteError) {
        let slash = collectionName.lastIndex(of: "/")!  // documentsRoot has slashes
        let parent = String(collectionName[..<slash])
        let collectionID = String(collectionName[collectionName.index(after: slash)...])
        let url = endpoint.baseURL + URLPath.encode(parent) + ":runQuery"
        let during = "list \(target.collectionPath)"
        var batch = withBodies ? firstQueryBatch : namesQueryBatch
        var after: String?
        repeat {
            let (body, bytes) = try await sendMeasured(HTTPRequest(method: "POST", url: url, body: Self.listQuery(collectionID, after: after, limit: batch, withBodies: withBodies)), during: during)
            guard case .array(let items) = body else { throw .malformedResponse(during: during, detail: "expected a JSON array") }
            var found = ListedDocuments(withBodies: withBodies)
            var count = 0
            var lastName: String?
            for item in items {
                guard case .map(let entry) = item else { throw .malformedResponse(during: during, detail: "an entry that is not an object") }
                if case .map(let error)? = entry["error"] {
                    let (code, message) = Self.errorDetails(error)
                    throw .rejected(during: during, status: 200, code: code.isEmpty ? "UNKNOWN" : code, message: message)
                }
                guard case .map(let document)? = entry["document"] else { continue }  // readTime-only entries
                lastName = try found.add(document, remote: self, during: during)
                count += 1
            }
            each(found.listing, found.documents)
            progress(count)
            guard count >= batch, let lastName else { break }
            if lastName == after { throw .malformedResponse(during: during, detail: "the query did not move past \(lastName)") }
            after = lastName
            if withBodies { batch = min(queryBatch, max(1, Self.queryTargetBytes / max(1, bytes / count))) }
        } while true
    }

    /// Pages through `documents.list` to the end; names and revisions only
    /// (`mask.fieldPaths=__name__`) unless `withBodies`.
    private func page(withBodies: Bool, progress: @escaping @Sendable (Int) -> Void,
                      each: (RemoteListing, [RecordID: RemoteDocument]) -> Void) async throws(RemoteError) {
        var pageToken: String?
        let collectionURL = endpoint.baseURL + URLPath.encode(collectionName)
        let during = "list \(target.collectionPath)"
        repeat {
            var url = collectionURL + "?pageSize=\(Self.pageSize)" + (withBodies ? "" : "&mask.fieldPaths=__name__")
            if let pageToken { url += "&pageToken=" + URLPath.encodeQueryValue(pageToken) }
            let body = try await send(HTTPRequest(method: "GET", url: url), during: during)
            guard case .map(let page) = body else { throw .malformedResponse(during: during, detail: "not a JSON object") }
            if case .array(let items)? = page["documents"] {
                var found = ListedDocuments(withBodies: withBodies)
                for item in items {
                    guard case .map(let document) = item else { throw .malformedResponse(during: during, detail: "a document that is not an object") }
                    _ = try found.add(document, remote: self, during: during)
                }
                each(found.listing, found.documents)
                progress(items.count)
            }
            if case .string(let next)? = page["nextPageToken"], !next.isEmpty { pageToken = next } else { pageToken = nil }
        } while pageToken != nil
    }

    /// The body of one listing query: the collection in name order, `limit`
    /// documents after the document named `after` (from the start if nil).
    static func listQuery(_ collectionID: String, after: String?, limit: Int, withBodies: Bool) -> [UInt8] {
        var query: [String: Value] = [
            "from": .array([.map(["collectionId": .string(collectionID)])]),
            "orderBy": .array([.map(["field": .map(["fieldPath": .string("__name__")]), "direction": .string("ASCENDING")])]),
            "limit": .integer(Int64(limit)),
        ]
        if !withBodies { query["select"] = .map(["fields": .array([.map(["fieldPath": .string("__name__")])])]) }
        if let after { query["startAt"] = .map(["values": .array([.map(["referenceValue": .string(after)])]), "before": .bool(false)]) }
        return Array(CanonicalJSON.encodeInline(.map(["structuredQuery": .map(query)])).utf8)
    }

    /// The record id of a document name in our collection, or why it cannot be one.
    func recordID(fromName name: String) -> Result<RecordID, UnusableRemoteDocument> {
        let prefix = collectionName + "/"
        guard name.hasPrefix(prefix) else {
            return .failure(UnusableRemoteDocument(name: name, message: "document is not in collection \(target.collectionPath)"))
        }
        let raw = String(name.dropFirst(prefix.count))
        do {
            return .success(try RecordID(raw))
        } catch {
            return .failure(UnusableRemoteDocument(name: raw, message: error.message))
        }
    }

    // MARK: bodies

    public func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument] {
        let batches = stride(from: 0, to: ids.count, by: Self.fetchBatch).map { Array(ids[$0..<min($0 + Self.fetchBatch, ids.count)]) }
        let results: [[RecordID: RemoteDocument]]
        do {
            results = try await inParallel(batches) { (batch) throws(RemoteError) -> [RecordID: RemoteDocument] in
                let documents = try await self.fetchBatch(batch)
                progress(batch.count)
                return documents
            }
        } catch {
            throw error.redacted(await redaction())
        }
        return results.reduce(into: [:]) { all, part in all.merge(part) { a, _ in a } }
    }

    private func fetchBatch(_ ids: [RecordID]) async throws(RemoteError) -> [RecordID: RemoteDocument] {
        let during = "read \(ids.count) document\(ids.count == 1 ? "" : "s") of \(target.collectionPath)"
        let request = Value.map(["documents": .array(ids.map { .string(documentName($0)) })])
        let body = try await send(
            HTTPRequest(method: "POST", url: endpoint.baseURL + URLPath.encode(documentsRoot) + ":batchGet", body: Array(CanonicalJSON.encodeInline(request).utf8)),
            during: during)
        guard case .array(let items) = body else { throw .malformedResponse(during: during, detail: "expected a JSON array") }
        var documents: [RecordID: RemoteDocument] = [:]
        for item in items {
            guard case .map(let entry) = item else { throw .malformedResponse(during: during, detail: "an entry is not an object") }
            if case .map(let found)? = entry["found"] {
                let document = try decodeDocument(found, during: during)
                documents[document.id] = document
            } else if entry["missing"] == nil {
                throw .malformedResponse(during: during, detail: "an entry is neither found nor missing")
            }
        }
        return documents
    }

    /// A document body as a record, or the reasons it cannot be one.
    func decodeDocument(_ document: Fields, during: String) throws(RemoteError) -> RemoteDocument {
        guard case .string(let name)? = document["name"], case .string(let revision)? = document["updateTime"] else {
            throw .malformedResponse(during: during, detail: "a document without name or updateTime")
        }
        let id: RecordID
        switch recordID(fromName: name) {
        case .success(let decoded): id = decoded
        case .failure(let problem): throw .malformedResponse(during: during, detail: "\(problem.name): \(problem.message)")
        }
        var fields: Fields
        do {
            fields = try FirestoreValueCodec.decodeFields(document["fields"], documentsRoot: documentsRoot)
        } catch {
            return RemoteDocument(id: id, revision: revision, content: .invalid([RecordDiagnostic(message: error.message)]))
        }
        return RemoteDocument(id: id, revision: revision, content: Self.recordContent(&fields, id: id, rules: rules))
    }

    /// The record file view of a document: its fields with the record id
    /// mapped by `rules.idField` (see `IDField.record(from:id:)`); `fields`
    /// becomes the record's fields when the mapping succeeds.
    static func recordContent(_ fields: inout Fields, id: RecordID, rules: RecordRules) -> RemoteDocument.Content {
        let untaggable = FirestoreValueCodec.untaggableMaps(in: fields).map {
            RecordDiagnostic(message: "field '\($0)' is a map with a single '$' key, which a record file would read as a tagged value")
        }
        switch rules.record(fromDocument: fields, id: id) {
        case .success(let record):
            fields = record.fields
            return untaggable.isEmpty ? .record(record) : .invalid(untaggable)
        case .failure(let problems):
            return .invalid(untaggable + problems.diagnostics)
        }
    }

    // MARK: writes

    public func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        let outcomes: [RecordID: WriteOutcome]
        do {
            outcomes = try await writeUnredacted(writes, atomic: atomic, progress: progress)
        } catch {
            throw error.redacted(await redaction())
        }
        let redact = await redaction()
        return outcomes.mapValues { outcome in
            if case .rejected(let message) = outcome { return .rejected(redact(message)) }
            return outcome
        }
    }

    private func writeUnredacted(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        let encoded = writes.map { (write: $0, json: CanonicalJSON.encodeInline(encode($0))) }
        if atomic {
            let bytes = encoded.reduce(0) { $0 + $1.json.utf8.count + 1 }
            guard encoded.count <= Self.writeBatch, bytes <= Self.maximumRequestBytes else {
                throw .configuration("--atomic can send at most \(Self.writeBatch) writes and 9 MiB in one commit; this push has \(encoded.count) writes of \(bytes / 1024) KiB")
            }
            let outcomes = try await commit(encoded)
            progress(writes.count)
            return outcomes
        }
        var batches: [[(write: RemoteWrite, json: String)]] = [[]]
        var batchBytes = 0
        for item in encoded {
            let size = item.json.utf8.count + 1
            if batches[batches.count - 1].count >= Self.writeBatch || (batchBytes + size > Self.maximumRequestBytes && !batches[batches.count - 1].isEmpty) {
                batches.append([])
                batchBytes = 0
            }
            batches[batches.count - 1].append(item)
            batchBytes += size
        }
        let results = try await inParallel(batches.filter { !$0.isEmpty }) { (batch) throws(RemoteError) -> [RecordID: WriteOutcome] in
            let outcomes = try await self.batchWrite(batch)
            progress(batch.count)
            return outcomes
        }
        return results.reduce(into: [:]) { all, part in all.merge(part) { a, _ in a } }
    }

    func encode(_ write: RemoteWrite) -> Value {
        switch write {
        case .create(let record):
            return .map([
                "update": .map(["name": .string(documentName(record.id)), "fields": FirestoreValueCodec.encodeFields(rules.documentFields(of: record), documentsRoot: documentsRoot)]),
                "currentDocument": .map(["exists": .bool(false)]),
            ])
        case .update(let record, let baseRevision):
            return .map([
                "update": .map(["name": .string(documentName(record.id)), "fields": FirestoreValueCodec.encodeFields(rules.documentFields(of: record), documentsRoot: documentsRoot)]),
                "currentDocument": .map(["updateTime": .string(baseRevision)]),
            ])
        case .delete(let id, let baseRevision):
            return .map(["delete": .string(documentName(id)), "currentDocument": .map(["updateTime": .string(baseRevision)])])
        }
    }

    private func requestBody(_ batch: [(write: RemoteWrite, json: String)]) -> [UInt8] {
        Array(("{\"writes\": [" + batch.map(\.json).joined(separator: ", ") + "]}").utf8)
    }

    /// `:batchWrite`: each write succeeds or fails on its own. Writes that fail
    /// with a transient status are sent again, within the retry budget.
    private func batchWrite(_ batch: [(write: RemoteWrite, json: String)]) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        var pending = batch
        var outcomes: [RecordID: WriteOutcome] = [:]
        var attempt = 1
        while !pending.isEmpty {
            let during = "write \(pending.count) document\(pending.count == 1 ? "" : "s") of \(target.collectionPath)"
            let body = try await send(
                HTTPRequest(method: "POST", url: endpoint.baseURL + URLPath.encode(documentsRoot) + ":batchWrite", body: requestBody(pending)),
                during: during)
            guard case .map(let answer) = body, case .array(let results)? = answer["writeResults"], results.count == pending.count else {
                throw .malformedResponse(during: during, detail: "expected one writeResult per write")
            }
            var statuses: [Value] = []
            if case .array(let s)? = answer["status"] { statuses = s }
            var retryLater: [(write: RemoteWrite, json: String)] = []
            for (i, item) in pending.enumerated() {
                var code: Int64 = 0
                var message = ""
                if i < statuses.count, case .map(let status) = statuses[i] {
                    if case .integer(let c)? = status["code"] { code = c }
                    if case .string(let m)? = status["message"] { message = m }
                }
                switch code {
                case 0:
                    var revision: String?
                    if case .map(let result) = results[i], case .string(let time)? = result["updateTime"] { revision = time }
                    if case .delete = item.write { revision = nil }
                    outcomes[item.write.id] = .written(revision: revision)
                case 5, 6, 9:  // NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION
                    outcomes[item.write.id] = .preconditionFailed
                case 4, 8, 10, 13, 14:  // DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, INTERNAL, UNAVAILABLE
                    retryLater.append(item)
                    outcomes[item.write.id] = .rejected(message.isEmpty ? "transient error \(code)" : message)
                default:
                    outcomes[item.write.id] = .rejected(message.isEmpty ? "error \(code)" : message)
                }
            }
            if retryLater.isEmpty || attempt >= retry.maximumAttempts { break }
            await retry.sleep(retry.delay(afterAttempt: attempt, retryAfter: nil))
            attempt += 1
            pending = retryLater
        }
        return outcomes
    }

    /// `:commit`: all writes or none. A failed precondition fails the whole
    /// commit, and the answer does not say which write caused it: every write
    /// is reported as precondition-failed, for the engine to re-check.
    private func commit(_ batch: [(write: RemoteWrite, json: String)]) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        let during = "commit \(batch.count) write\(batch.count == 1 ? "" : "s") to \(target.collectionPath)"
        let request = HTTPRequest(method: "POST", url: endpoint.baseURL + URLPath.encode(documentsRoot) + ":commit", body: requestBody(batch))
        let body: Value
        do {
            body = try await send(request, during: during)
        } catch {
            if case .rejected(_, _, let code, _) = error, ["FAILED_PRECONDITION", "ALREADY_EXISTS", "NOT_FOUND"].contains(code) {
                return Dictionary(uniqueKeysWithValues: batch.map { ($0.write.id, WriteOutcome.preconditionFailed) })
            }
            throw error
        }
        guard case .map(let answer) = body, case .array(let results)? = answer["writeResults"], results.count == batch.count else {
            throw .malformedResponse(during: during, detail: "expected one writeResult per write")
        }
        var outcomes: [RecordID: WriteOutcome] = [:]
        for (item, result) in zip(batch, results) {
            var revision: String?
            if case .map(let r) = result, case .string(let time)? = r["updateTime"] { revision = time }
            if case .string(let time)? = answer["commitTime"], revision == nil, !(item.write.isDelete) { revision = time }
            outcomes[item.write.id] = .written(revision: item.write.isDelete ? nil : revision)
        }
        return outcomes
    }

    // MARK: transport with retries

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

/// What a listing found so far: revisions, bodies when asked for, and the
/// documents that cannot be records.
private struct ListedDocuments {
    let withBodies: Bool
    var listing = RemoteListing()
    var documents: [RecordID: RemoteDocument] = [:]

    /// Adds one listed document; returns its name.
    mutating func add(_ document: [String: Value], remote: FirestoreRemote, during: String) throws(RemoteError) -> String {
        guard case .string(let name)? = document["name"], case .string(let revision)? = document["updateTime"] else {
            throw .malformedResponse(during: during, detail: "a document without name or updateTime")
        }
        switch remote.recordID(fromName: name) {
        case .success(let id):
            listing.revisions[id] = revision
            if withBodies { documents[id] = try remote.decodeDocument(document, during: during) }
        case .failure(let problem):
            listing.unusable.append(problem)
        }
        return name
    }
}

extension RemoteWrite {
    var isDelete: Bool {
        if case .delete = self { return true }
        return false
    }
}

/// Percent-encoding for URL paths and query values.
enum URLPath {
    private static func isUnreserved(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E
    }

    /// Encodes each segment of a slash-separated path; `(` and `)` stay readable.
    static func encode(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            percentEncode(String(segment)) { isUnreserved($0) || $0 == 0x28 || $0 == 0x29 }
        }.joined(separator: "/")
    }

    static func encodeQueryValue(_ value: String) -> String {
        percentEncode(value, keep: isUnreserved)
    }

    private static func percentEncode(_ text: String, keep: (UInt8) -> Bool) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        for b in text.utf8 {
            if keep(b) {
                out.append(b)
            } else {
                out += [0x25, digits[Int(b >> 4)], digits[Int(b & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The URL without the base and without a page token, for logs.
    static func displayPath(_ url: String, base: String) -> String {
        var path = url.hasPrefix(base) ? String(url.dropFirst(base.count)) : url
        if let token = path.firstRange(of: "&pageToken=") { path = String(path[..<token.lowerBound]) + "&pageToken=…" }
        return path
    }
}
