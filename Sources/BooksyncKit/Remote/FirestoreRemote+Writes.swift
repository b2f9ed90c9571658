import BooksyncCore

/// Writes: `:batchWrite` (or `:commit` when atomic), preconditions in the body.
extension FirestoreRemote {
    /// Applies guarded writes (see `RemoteCollection.write`).
    ///
    /// Chunking belongs to the caller: the push pipeline hands over at most
    /// `FirestoreLimits.maximumWritesPerRequest` writes at a time, and writes
    /// within Firestore's limits (that count, `requestByteLimit` bytes of
    /// JSON) go out as one request. More than that — an app passing a whole
    /// collection, or a chunk of large records over the byte limit — is split
    /// here into requests within the limits, up to `parallelRequests` in
    /// flight: the writes are independent of each other, so a split loses
    /// nothing, and an error would make every caller learn Firestore's limits.
    /// Atomic writes cannot be split: over the limits they are refused. A
    /// request Firestore refuses as a whole for what it holds is split until
    /// the writes it refuses are alone (`batchWriteNarrowing`); a commit is
    /// all or nothing, and such a refusal leaves every write of it rejected
    /// as not written (`commitReportingRefusal`).
    ///
    /// - Throws: `RemoteError.configuration` for atomic writes over the limits;
    ///   the request's error when one fails after retries.
    @_spi(Remote) public func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
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

    /// The bytes of `writes` as one `:commit`, against the request limit booksync keeps under Firestore's.
    @_spi(Remote) public func atomicRequestSize(_ writes: [RemoteWrite]) -> (bytes: Int, limit: Int)? {
        (encoded(writes).reduce(0) { $0 + $1.bytes }, requestByteLimit)
    }

    /// Bytes of writes in one request to this target: less for the emulator,
    /// whose message limit is lower than production's.
    var requestByteLimit: Int {
        endpoint.isEmulator ? FirestoreLimits.emulatorWriteRequestBytes : FirestoreLimits.maximumWriteRequestBytes
    }

    private func encoded(_ writes: [RemoteWrite]) -> [EncodedWrite] {
        writes.map { EncodedWrite(write: $0, json: CanonicalJSON.encodeInline(encode($0))) }
    }

    private func writeUnredacted(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        let encoded = encoded(writes)
        if atomic {
            // The engine refuses an oversized atomic push before it gets here
            // (BooksyncError.atomicTooLarge); this guards any other caller.
            let bytes = encoded.reduce(0) { $0 + $1.bytes }
            let (most, mostBytes) = (FirestoreLimits.maximumWritesPerRequest, requestByteLimit)
            guard encoded.count <= most, bytes <= mostBytes else {
                throw .configuration("--atomic can send at most \(most) writes and \(mostBytes / 1024) KiB in one commit; this push has \(encoded.count) writes of \(bytes / 1024) KiB")
            }
            let outcomes = try await commitReportingRefusal(encoded)
            progress(writes.count)
            return outcomes
        }
        let requests = Self.withinRequestLimits(encoded, byteLimit: requestByteLimit)
        if requests.count == 1 {
            let outcomes = try await batchWriteNarrowing(requests[0])
            progress(writes.count)
            return outcomes
        }
        let results = try await BoundedTaskGroup.map(requests, limit: Self.parallelRequests, cancelled: client.cancelled()) { (batch) throws(RemoteError) -> [RecordID: WriteOutcome] in
            let outcomes = try await self.batchWriteNarrowing(batch)
            progress(batch.count)
            return outcomes
        }
        return results.reduce(into: [:]) { all, part in all.merge(part) { a, _ in a } }
    }

    /// The writes in order, cut into requests of at most
    /// `FirestoreLimits.maximumWritesPerRequest` writes and
    /// `byteLimit` bytes of JSON (a single larger write goes alone).
    static func withinRequestLimits(_ encoded: [EncodedWrite], byteLimit: Int) -> [[EncodedWrite]] {
        var requests: [[EncodedWrite]] = []
        var current: [EncodedWrite] = []
        var currentBytes = 0
        for item in encoded {
            if current.count >= FirestoreLimits.maximumWritesPerRequest
                || (currentBytes + item.bytes > byteLimit && !current.isEmpty) {
                requests.append(current)
                current = []
                currentBytes = 0
            }
            current.append(item)
            currentBytes += item.bytes
        }
        if !current.isEmpty { requests.append(current) }
        return requests
    }

    /// One write of the request body. Creates and updates set the change
    /// field (config `"changeField"`) to the server's request time, so the
    /// change query of every later status finds them.
    func encode(_ write: RemoteWrite) -> Value {
        switch write {
        case .create(let record):
            return setting(record, precondition: ["exists": .bool(false)])
        case .update(let record, let baseRevision):
            return setting(record, precondition: ["updateTime": .string(baseRevision)])
        case .delete(let id, let baseRevision):
            return .map(["delete": .string(documentName(id)), "currentDocument": .map(["updateTime": .string(baseRevision)])])
        case .overwrite(let record):
            return setting(record, precondition: nil)
        case .remove(let id):
            return .map(["delete": .string(documentName(id))])
        }
    }

    private func setting(_ record: CanonicalRecord, precondition: [String: Value]?) -> Value {
        var write: [String: Value] = [
            "update": .map(["name": .string(documentName(record.id)), "fields": FirestoreValueCodec.encodeFields(rules.documentFields(of: record), documentsRoot: documentsRoot)]),
        ]
        if let precondition { write["currentDocument"] = .map(precondition) }
        if let changeField = rules.changeField {
            write["updateTransforms"] = .array([.map(["fieldPath": .string(FieldPathSyntax.quoted(changeField)), "setToServerValue": .string("REQUEST_TIME")])])
        }
        return .map(write)
    }

    private func requestBody(_ batch: [EncodedWrite]) -> [UInt8] {
        Array(("{\"writes\": [" + batch.map(\.json).joined(separator: ", ") + "]}").utf8)
    }

    /// `:batchWrite`: each write succeeds or fails on its own. Writes that fail
    /// with a transient status are sent again, within the retry budget. A
    /// request refused as a whole is narrowed down by `batchWriteNarrowing`.
    func batchWrite(_ batch: [EncodedWrite]) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        var pending = batch
        var outcomes: [RecordID: WriteOutcome] = [:]
        var attempt = 1
        while !pending.isEmpty {
            let during = "write \(pending.count) document\(pending.count == 1 ? "" : "s") of \(target.collectionPath)"
            let body = try await client.send(
                HTTPRequest(method: "POST", url: endpoint.baseURL + URLPath.encode(documentsRoot) + ":batchWrite", body: requestBody(pending)),
                during: during)
            guard case .map(let answer) = body, case .array(let results)? = answer["writeResults"], results.count == pending.count else {
                throw .malformedResponse(during: during, detail: "expected one writeResult per write")
            }
            var statuses: [Value] = []
            if case .array(let s)? = answer["status"] { statuses = s }
            var retryLater: [EncodedWrite] = []
            for (i, item) in pending.enumerated() {
                // A google.rpc.Status: the gRPC code as a number (absent means OK).
                var number: Int64 = 0
                var message = ""
                if i < statuses.count, case .map(let status) = statuses[i] {
                    if case .integer(let c)? = status["code"] { number = c }
                    if case .string(let m)? = status["message"] { message = m }
                }
                let code = GRPCCode(number: number)
                if code == .ok {
                    var revision: String?
                    if case .map(let result) = results[i], case .string(let time)? = result["updateTime"] { revision = time }
                    if case .delete = item.write { revision = nil }
                    outcomes[item.write.id] = .written(revision: revision)
                } else if code?.isPreconditionFailure == true {
                    outcomes[item.write.id] = .preconditionFailed
                } else if code?.isTransientWriteFailure == true {
                    retryLater.append(item)
                    outcomes[item.write.id] = .rejected(message.isEmpty ? "transient error \(number)" : message)
                } else {
                    outcomes[item.write.id] = .rejected(message.isEmpty ? "error \(number)" : message)
                }
            }
            if retryLater.isEmpty || attempt >= client.retry.maximumAttempts { break }
            await client.retry.sleep(.seconds(client.retry.delay(afterAttempt: attempt, retryAfter: nil)))
            attempt += 1
            pending = retryLater
        }
        return outcomes
    }

    /// `:commit`: all writes or none. A failed precondition fails the whole
    /// commit, and the answer does not say which write caused it: every write
    /// is reported as precondition-failed, for the engine to re-check.
    func commit(_ batch: [EncodedWrite]) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        let during = "commit \(batch.count) write\(batch.count == 1 ? "" : "s") to \(target.collectionPath)"
        let request = HTTPRequest(method: "POST", url: endpoint.baseURL + URLPath.encode(documentsRoot) + ":commit", body: requestBody(batch))
        let body: Value
        do {
            body = try await client.send(request, during: during)
        } catch {
            if case .rejected(_, _, let code, _) = error, GRPCCode(name: code)?.isPreconditionFailure == true {
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
}

/// A write and its JSON in a request body.
struct EncodedWrite: Sendable {
    let write: RemoteWrite
    let json: String
    /// Its share of a request body: the JSON and its separator (`, `).
    var bytes: Int { json.utf8.count + 2 }
}
