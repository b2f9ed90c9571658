import Synchronization
import BooksyncCore

/// Push: publishing local changes, every write guarded (the manual's ThreeWaySync article, `push` column).
extension CollectionDirectory {
    /// Publishes local changes (the manual's ThreeWaySync article, `push` column). Sends only what
    /// changed, every write guarded by a precondition; a failed precondition is
    /// settled by fetching that document: same content → recorded, else reported.
    /// gather (scan, classify) → plan (pure) → guard → execute → record.
    /// - Parameters:
    ///   - remote: The remote collection to publish to.
    ///   - options: `--dry-run`, `--atomic`, the mass-delete guard.
    ///   - progress: Called from any thread while uploading.
    ///   - onStaleLock: Called with the process id of a booksync that died
    ///     holding the lock (the lock is taken over).
    /// - Returns: What was done (or would be) per record, sorted by id.
    /// - Throws: `BooksyncError`: the collection is locked, the remote fails,
    ///   the plan deletes too much (`.massDelete`), or the command was
    ///   cancelled (`.interrupted`); writes the server accepted before a
    ///   failure are recorded in the base.
    @_spi(Remote)
    public func push(remote: any RemoteCollection, options: SyncOptions = SyncOptions(),
                     progress: @escaping @Sendable (SyncProgress) -> Void = { _ in },
                     onStaleLock: (Int32) -> Void = { _ in }) async throws(BooksyncError) -> SyncReport {
        let lock = options.dryRun ? nil : try await self.lock(onStaleLock: onStaleLock)
        defer { lock?.release() }
        // No remote content is compared with the files, so the scan keeps no hashes
        // of changed ones, and the push is planned record by record, never whole.
        try await prepareForSync(holdingLock: lock != nil)
        var engine = try SyncEngine(self, command: .push, remote: remote, options: options, progress: progress,
                                    keepChangedRecords: !options.dryRun, keepHashes: false)
        return try await engine.push()
    }
    /// Writes per request: push owns the chunking (the remote sends each
    /// chunk as one request), at Firestore's limit for `:batchWrite` and `:commit`.
    static let pushChunk = FirestoreLimits.maximumWritesPerRequest
    /// Requests in flight: while the server applies one chunk, the next is
    /// encoded and sent.
    static let pushRequestsInFlight = 3
}

extension SyncEngine {
    /// Loads the writes of a chunk of the plan.
    var chunkLoader: PushChunkLoader { PushChunkLoader(rules: rules, paths: collection.paths) }

    /// Runs the push; see `CollectionDirectory.push`.
    mutating func push() async throws(BooksyncError) -> SyncReport {
        try gather.requireMatches(nil, fromWatcher: options.round.scopeFromWatcher)
        var plan = gather.planPush(chunkSize: options.atomic ? Int.max : CollectionDirectory.pushChunk)
        // The added files' ids are in the plan's events now; the scan needs them
        // again only to count the records left below a deleted document.
        if rules.subcollections.isEmpty || plan.deletes == 0 { scan.files.forgetAdded() }
        try options.checkDeletes(plan, command: .push, baseCount: guardedBaseCount,
                                     rerun: ForcedCommandLine.advice("push", remote: collection.remote, scope: options.scope, fromWatcher: options.round.scopeFromWatcher))
        // Refused before anything is sent, and by a dry run as by the real one.
        if options.atomic { try checkAtomicSize(plan, records: scan.changedRecords) }
        if options.dryRun {
            report.events = plan.takeReport()
            return finishedReport()
        }
        try await requireGitQuiet()
        releasePlanningBase()
        // At most one base entry per write: room for them now, not by doubling;
        // only when the writes outnumber an eighth of the base: a copy changed
        // that much takes arrays of its own anyway, and a few writes to a large
        // base must not copy it.
        let baseCount = base.manifest.entries.count
        if plan.steps > baseCount / 8 { base.manifest.entries.reserveCapacity(baseCount + plan.steps) }
        try await send(&plan, records: scan.changedRecords)
        return finishedReport()
    }

    /// Sends the plan's writes (`records` holds the ones already parsed), records
    /// what the server accepted and saves the base; the report's events are
    /// the plan's, with the outcomes that differed from it.
    /// - Throws: The first failure, after the base is saved with what was accepted.
    mutating func send(_ plan: inout PushPlan, records: [RecordID: CanonicalRecord]) async throws(BooksyncError) {
        let outcome = await sendPipelined(plan, records: records)
        if let failure = outcome.failure { try base.saveAndThrow(failure) }
        try base.finish()
        report.events = plan.takeReport(outcome.log)
    }

    /// Refuses an atomic push that one commit cannot take, by count and then by
    /// bytes as the remote encodes them (its one chunk loaded to measure it).
    func checkAtomicSize(_ plan: PushPlan, records: [RecordID: CanonicalRecord]) throws(BooksyncError) {
        guard plan.steps <= FirestoreLimits.maximumWritesPerRequest else {
            throw .atomicTooLarge(writes: plan.steps, limit: FirestoreLimits.maximumWritesPerRequest)
        }
        guard let chunk = plan.chunks.first else { return }
        let writes = chunkLoader.load(plan.steps(in: chunk), scanned: records).writes
        if let size = remote.atomicRequestSize(writes), size.bytes > size.limit {
            throw .atomicTooManyBytes(bytes: size.bytes, limit: size.limit)
        }
    }

    /// Loads and sends the writes of the plan's chunks, a few requests in
    /// flight, and records in the base what the server accepted as each answer
    /// arrives. On a failure or cancellation no new chunk starts, the ones in
    /// flight are still recorded, and the first failure is returned.
    private mutating func sendPipelined(_ plan: PushPlan, records scanned: [RecordID: CanonicalRecord]) async -> PushOutcome {
        let counter = ProgressCounter(phase: "uploading", total: plan.steps, report: progress)
        let (atomic, loader, remote) = (options.atomic, chunkLoader, self.remote)
        var outcome = PushOutcome()
        let started = await BoundedTaskGroup.run(plan.chunks, limit: CollectionDirectory.pushRequestsInFlight) { range -> Result<SentChunk, FailedChunk> in
            let loaded = loader.load(plan.steps(in: range), scanned: scanned)
            guard !loaded.writes.isEmpty else { return .success(SentChunk(loaded, outcomes: [:])) }
            do throws(RemoteError) {
                let outcomes = try await remote.write(loaded.writes, atomic: atomic) { counter.add($0) }
                return .success(SentChunk(loaded, outcomes: outcomes))
            } catch {
                return .failure(FailedChunk(error: error))
            }
        } receive: { chunk, result in
            // Where each record of this chunk is in the plan.
            var entryIndex: [RecordID: Int] = [:]
            func changeEvents(_ events: [SyncEvent]) {
                if entryIndex.isEmpty {
                    for (index, step) in plan.indexedSteps(in: plan.chunks[chunk]) { entryIndex[step.id] = index }
                }
                for event in events {
                    if let index = entryIndex[event.id] { outcome.log.record(event.kind, at: index, of: plan) }
                }
            }
            switch result {
            case .failure(let failed):
                if outcome.failure == nil { outcome.failure = .remoteFailure(failed.error) }
            case .success(let done):
                // An accepted write keeps its planned event (`.pushed` with the same action).
                changeEvents(done.events)
                for change in done.accepted { base.note(change) }
                if !done.stale.isEmpty {
                    do throws(BooksyncError) {
                        changeEvents(try await settleStaleWrites(done.stale))
                    } catch {
                        if outcome.failure == nil { outcome.failure = error }
                    }
                }
                do throws(BooksyncError) {
                    try base.saveIfDue()
                } catch {
                    if outcome.failure == nil { outcome.failure = error }
                }
            }
            // After a failure no new chunk starts; the ones in flight are still recorded.
            return outcome.failure == nil ? .proceed : .drain
        }
        // Chunks left unsent without a failure: the command was cancelled (Ctrl-C).
        if outcome.failure == nil, started < plan.chunks.count { outcome.failure = .interrupted }
        return outcome
    }

    /// A write whose precondition failed: the remote changed since the base, or
    /// an earlier attempt of this very write succeeded but its answer was lost.
    /// Fetch the document; the same content as ours (or both gone) is adopted.
    ///
    /// After a refused `--atomic` commit every write is reported stale, though
    /// only some conflicted: those whose precondition still holds were simply
    /// not applied, and are reported as such.
    private mutating func settleStaleWrites(_ stale: [RemoteWrite]) async throws(BooksyncError) -> [SyncEvent] {
        let documents = try await RemoteReads.fetchBodies(remote, ids: stale.map(\.id), progress: progress)
        var events: [SyncEvent] = []
        for write in stale {
            let id = write.id
            switch (write.record, documents[id]) {
            case (let record?, let document?) where document.record?.hash == record.hash:
                base.record(record, revision: document.revision)
                events.append(SyncEvent(id: id, kind: .pushed(.adopt)))
            case (nil, nil):
                base.forget(id)
                events.append(SyncEvent(id: id, kind: .pushed(.forget)))
            case (_?, let document?) where rules.scope != nil && Self.isCreate(write)
                && document.record.map(rules.isInScope) == false:
                // A file of a document outside the scope (it left): not ours to create.
                events.append(SyncEvent(id: id, kind: .outsideScope))
            default:
                if options.atomic, Self.preconditionHolds(write, document: documents[id]) {
                    events.append(SyncEvent(id: id, kind: .rejected("not written: the --atomic commit was refused because another record in it changed remotely")))
                } else {
                    events.append(SyncEvent(id: id, kind: .remoteChangedSincePull))
                }
            }
        }
        return events
    }

    private static func isCreate(_ write: RemoteWrite) -> Bool {
        if case .create = write { return true }
        return false
    }

    private static func preconditionHolds(_ write: RemoteWrite, document: RemoteDocument?) -> Bool {
        switch write {
        case .create: document == nil
        case .update(_, let revision), .delete(_, let revision): document?.revision == revision
        case .overwrite, .remove: true
        }
    }
}

/// How the writes of a push went: the first failure, and the outcomes that
/// differ from the plan.
private struct PushOutcome {
    var failure: BooksyncError?
    var log = ExecutionLog()
}

/// A chunk the server did not answer, and why.
struct FailedChunk: Error {
    let error: RemoteError
}

/// One chunk of push writes after the server answered: the base changes for
/// what it accepted, the stale writes to settle, and the refusals.
private struct SentChunk: Sendable {
    var accepted: [BaseChange] = []
    /// The writes whose precondition failed, to settle by reading the documents.
    var stale: [RemoteWrite] = []
    var events: [SyncEvent]

    /// Sorts the server's answers; base changes (with their pack lines) are
    /// prepared here, in the chunk's task, off the task that applies them.
    init(_ loaded: LoadedChunk, outcomes: [RecordID: WriteOutcome]) {
        events = loaded.events
        for write in loaded.writes {
            switch outcomes[write.id] {
            case .written(let revision)?:
                if write.isDelete {
                    accepted.append(.forgotten(write.id))
                } else if let record = write.record, let revision {
                    accepted.append(BaseState.copy(record, revision: revision))
                } else {
                    events.append(SyncEvent(id: write.id, kind: .rejected("the server did not return the new revision")))
                }
            case .preconditionFailed?:
                stale.append(write)
            case .rejected(let message)?:
                events.append(SyncEvent(id: write.id, kind: .rejected(message)))
            case nil:
                events.append(SyncEvent(id: write.id, kind: .rejected("no answer for this write")))
            }
        }
    }
}
