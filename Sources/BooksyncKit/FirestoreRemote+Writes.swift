import BooksyncCore

/// Writes: `:batchWrite` (or `:commit` when atomic), preconditions in the body.
extension FirestoreRemote {
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
}

extension RemoteWrite {
    var isDelete: Bool {
        if case .delete = self { return true }
        return false
    }
}
