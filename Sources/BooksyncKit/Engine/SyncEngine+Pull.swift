import BooksyncCore

extension CollectionDirectory {
    /// Applies remote changes locally (the manual's ThreeWaySync article, `pull` column).
    /// - Parameters:
    ///   - remote: The remote collection to pull from.
    ///   - options: `--dry-run`, `--ours`/`--theirs`, the mass-delete guard.
    ///   - progress: Called from any thread while downloading and applying.
    ///   - onStaleLock: Called with the process id of a booksync that died
    ///     holding the lock (the lock is taken over).
    /// - Returns: What was done (or would be) per record, in id order (as push).
    /// - Throws: `BooksyncError`: the collection is locked, a file cannot be
    ///   written, the remote fails, the plan deletes too much (`.massDelete`),
    ///   or the command was cancelled (`.interrupted`); work done before a
    ///   failure is recorded in the base.
    @_spi(Remote)
    public func pull(remote: any RemoteCollection, options: SyncOptions = SyncOptions(),
                     progress: @escaping @Sendable (SyncProgress) -> Void = { _ in },
                     onStaleLock: (Int32) -> Void = { _ in }) async throws(BooksyncError) -> SyncReport {
        let lock = options.dryRun ? nil : try await self.lock(onStaleLock: onStaleLock)
        defer { lock?.release() }
        try await prepareForSync(holdingLock: lock != nil)
        var engine = try SyncEngine(self, command: .pull, remote: remote, options: options, progress: progress)
        return try await engine.pull()
    }
}

/// Pull: applying remote changes locally (the manual's ThreeWaySync article, `pull` column).
/// gather (scan, remote snapshot, classify) → plan (pure) → guard → execute → record.
extension SyncEngine {
    /// Runs the pull; see `CollectionDirectory.pull`.
    mutating func pull() async throws(BooksyncError) -> SyncReport {
        if base.manifest.entries.isEmpty, options.scope.isEverything {
            // Writing keeps up with the download, so the download alone is reported.
            try await firstPull(applied: ProgressCounter(phase: "applying", total: nil, report: { _ in }))
        } else {
            let applied = ProgressCounter(phase: "applying", total: nil, report: progress)
            var because: FullListingReason?
            var handled = PackedRecordIDs()
            if let mark = changeQueryMark {
                switch try await pullChanges(since: mark, applied: applied) {
                case .done:
                    report.events.sortByID()
                    if !options.dryRun { try base.finish() }
                    return finishedReport()
                case .listEveryName(let reason, let done):
                    because = reason
                    handled = done
                }
            }
            do throws(BooksyncError) {
                try await pullListed(because: because, skipping: handled, applied: applied)
            } catch {
                // What the change query's batches applied is recorded.
                guard !handled.isEmpty, !options.dryRun else { throw error }
                try base.saveAndThrow(error)
            }
        }
        if !options.dryRun { try base.finish() }
        return finishedReport()
    }

    /// The mark a pull reads the changes since (`pullChanges`), when it reads
    /// them: a change field, a mark for it in the base, the whole collection,
    /// no `--full`.
    private var changeQueryMark: ChangeMark? {
        guard options.scope.isEverything, !options.fullListing, let field = rules.changeField,
              let mark = manifest.changesSince, mark.isFor(field: field, scope: rules.scope) else { return nil }
        return mark
    }

    /// The pull from a listing of revisions (every name, the pathspecs'
    /// ranges, or the base updated by the change query): gather, plan, guard,
    /// then apply chunk by chunk, each chunk's bodies fetched right before
    /// it is applied (`applyPullPlan`). `because`: the change query was read
    /// and cannot be trusted (`pullChanges`), so every name is listed; the
    /// records it applied (`skipping`) are left out.
    private mutating func pullListed(because: FullListingReason?, skipping handled: PackedRecordIDs,
                                     applied: ProgressCounter) async throws(BooksyncError) {
        let skipped: ((RecordID) -> Bool)? = handled.isEmpty ? nil : { handled.sortedIndex(of: $0) != nil }
        let snapshot: RemoteSnapshot, localReads: [RecordID: LocalRead]
        var plan: PullPlan
        (snapshot, plan, localReads) = try await planListed(because: because, skipping: skipped)
        report.unusableRemote = snapshot.listing.unusable
        report.remoteRead = snapshot.read
        try checkNotEmptied(snapshot, deletes: plan.deletes)
        try options.checkDeletes(plan, command: .pull, baseCount: guardedBaseCount,
                                 rerun: ForcedCommandLine.advice("pull", remote: collection.remote, scope: options.scope, fromWatcher: options.round.scopeFromWatcher))
        var fetchedLater: [RecordID: String] = [:]
        if options.dryRun {
            // The bodies planned writes still need are read all the same, a
            // chunk at a time: an invalid document is reported as it will be.
            report.events += try await applyPullPlan(&plan, snapshot: snapshot, localReads: localReads, applied: applied,
                                                     fetchedLater: &fetchedLater)
            if skipped != nil { report.events.sortByID() }
            return
        }
        if skipped == nil { try await requireGitQuiet() }  // else checked before the change query's first write
        releasePlanningBase()
        scan.files.dropCleanHashes()
        report.events += try await applyPullPlan(&plan, snapshot: snapshot, localReads: localReads, applied: applied,
                                                 fetchedLater: &fetchedLater)
        if skipped != nil { report.events.sortByID() }
        // A change query that found nothing leaves the mark where it is: the
        // manifest is not rewritten by a pull that changed nothing.
        // Only a pull that saw the whole collection moves the mark.
        if case .changes(_, 0, _) = snapshot.read {} else if options.scope.isEverything {
            base.setChangeMark(rules.changeField.flatMap { snapshot.nextChangeMark(field: $0, scope: rules.scope, base: base.manifest, fetchedLater: fetchedLater) })
        }
    }

    /// The gather and plan of `pullListed`: the remote read (bodies of
    /// records changed remotely only come later, chunk by chunk, in
    /// `applyPullPlan`), the pathspecs matched, and each record that is not
    /// clean planned as it is classified, so a pull of a million changes
    /// holds its packed plan and not a million classified records as well.
    /// A function of its own, so that what planning holds (copies of the
    /// base among them) is let go before the plan is applied.
    private func planListed(because: FullListingReason?, skipping skipped: ((RecordID) -> Bool)?)
        async throws(BooksyncError) -> (RemoteSnapshot, PullPlan, [RecordID: LocalRead]) {
        let (scan, manifest) = (self.scan, self.manifest)
        let snapshot = try await gather.readRemote(remote,
                                                   needing: { skipped?($0) != true && scan.pullNeedsRemoteBody($0, base: manifest) },
                                                   fullListing: options.fullListing, listingBecause: because,
                                                   counting: !options.round.changesWithoutCount, prefetched: options.round.prefetchedChanges,
                                                   progress: progress)
        try gather.requireMatches(snapshot)
        var localReads: [RecordID: LocalRead] = [:]
        let plan = SyncPlanner.pull(choice: options.conflictChoice, chunkSize: Self.pullChunk) { add in
            gather.eachDiffering(remote: snapshot, skipping: skipped, localReads: &localReads, add)
        }
        return (snapshot, plan, localReads)
    }

    /// Refuses a pull that would delete files because the whole target is
    /// empty while the base is not, at any size (the mass-delete guard lets up
    /// to three deletes through): an emulator restarted, a wrong project or a
    /// wiped database looks exactly like "every document deleted", and
    /// mirroring it would empty the directory. `--force` lets it through.
    private func checkNotEmptied(_ snapshot: RemoteSnapshot, deletes: Int) throws(BooksyncError) {
        var emptied = snapshot.wholeTargetEmpty
        if options.scope.isEverything, case .everyName = snapshot.read {
            emptied = snapshot.listing.revisions.isEmpty && snapshot.listing.unusable.isEmpty
        }
        guard !options.force, deletes > 0, !manifest.entries.isEmpty, emptied else { return }
        throw .emptiedTarget(remote: collection.remote.name, target: remote.identity?.description ?? remote.displayName,
                             baseCount: manifest.entries.count, deletes: deletes)
    }

    /// A first pull: every body is needed, so they come in the listing itself,
    /// and each answer's documents are planned and written while the next
    /// answer is on its way. Nothing can be deleted (there is no base), so no
    /// mass-delete guard, and nothing is merged (nothing both sides modified).
    private mutating func firstPull(applied: ProgressCounter) async throws(BooksyncError) {
        let (batches, continuation) = AsyncStream.makeStream(of: RemoteSnapshot.self)
        let downloaded = ProgressCounter(phase: "downloading", total: nil, report: progress)
        let remote = self.remote
        if let known = options.knownTotal { downloaded.learnTotal(known) }
        let counting = options.knownTotal == nil ? downloaded.learnTotal(from: remote, after: options.countTotalAfter) : nil
        let lister = Task { () async -> RemoteError? in
            defer { continuation.finish() }
            do throws(RemoteError) {
                try await remote.listDocuments(batch: { continuation.yield(RemoteSnapshot(listing: $0, bodies: $1)) },
                                               progress: { downloaded.add($0) })
                return nil
            } catch {
                return error
            }
        }
        var failure: BooksyncError?
        var marking = FirstPullMark(field: rules.changeField)
        report.remoteRead = .everyName(because: rules.changeField.map { .noMark(field: $0) })
        await withTaskCancellationHandler {
            for await batch in batches where failure == nil {
                report.unusableRemote += batch.listing.unusable
                let classified = gather.classify(remote: batch, only: Array(batch.listing.revisions.keys))
                var plan = SyncPlanner.pull(classified.records, choice: options.conflictChoice, chunkSize: Self.pullChunk)
                if options.dryRun {
                    report.events += plan.takeReport()
                    continue
                }
                do throws(BooksyncError) {
                    // Every body came with the listing: nothing is fetched later.
                    var fetchedLater: [RecordID: String] = [:]
                    report.events += try await applyPullPlan(&plan, snapshot: batch, localReads: classified.localReads, applied: applied,
                                                             fetchedLater: &fetchedLater)
                    marking.add(batch, base: base.manifest)
                } catch {
                    failure = error
                    lister.cancel()
                }
            }
        } onCancel: {
            lister.cancel()
        }
        // Always awaited, also after a failure cancelled it: nothing outlives the command.
        if let error = await lister.value, failure == nil { failure = .remoteFailure(error) }
        counting?.cancel()
        await counting?.value
        if failure == nil, Task.isCancelled { failure = .interrupted }
        // Batches arrive in the server's order; report in id order, as for every other pull.
        report.events.sortByID()
        if let failure {
            if options.dryRun { throw failure }
            try base.saveAndThrow(failure)
        }
        if !options.dryRun, let field = rules.changeField {
            base.setChangeMark(marking.safe ? ChangeMark.after(field: field, scope: rules.scope, readTime: marking.readTime, unrecorded: marking.unrecorded) : nil)
        }
    }

    /// Steps applied at a time: file work on several threads, then the base.
    static let pullChunk = 500

    /// Carries out a pull plan chunk by chunk: the bodies of the chunk's
    /// writes that the snapshot lacks (records changed remotely only) are
    /// fetched first (`PullBodies`), then the file work runs on several
    /// threads (each record touches only its own files), then the base, in
    /// order. Stops at the first failure or on cancellation, with what was
    /// done before recorded in `base`. In a dry run (`options.dryRun`) only
    /// the bodies are fetched, for the outcomes they change.
    /// - Parameter fetchedLater: Gets the change times of fetched bodies the
    ///   base may not record at their listed revision (`nextChangeMark`).
    /// - Returns: The plan's report: its events, with the outcomes that differed from it.
    mutating func applyPullPlan(_ plan: inout PullPlan, snapshot: RemoteSnapshot, localReads: [RecordID: LocalRead],
                                applied: ProgressCounter, fetchedLater: inout [RecordID: String]) async throws(BooksyncError) -> SyncEvents {
        // Records whose file names could be one file on a case-insensitive or
        // normalizing file system (macOS) are applied one by one after the
        // rest of their chunk: the second then finds the file "changed" and is
        // left alone.
        let colliding = PullFileSteps.collidingNames(in: plan)
        var log = ExecutionLog()
        let (fileSteps, files) = (PullFileSteps(rules: rules, paths: collection.paths), scan.files)
        let keepsTimes = rules.changeField != nil
        // The next chunk's bodies are fetched while this one is applied: two
        // chunks of bodies are held at most, and the network is not waited
        // for between chunks. The fetch under way is always awaited, also
        // after a failure cancelled it: nothing outlives the command.
        let chunks = plan.chunks
        let remote = self.remote
        func fetching(_ steps: [PullStep]) -> Task<Result<PullBodies, BooksyncError>, Never> {
            Task {
                do throws(BooksyncError) {
                    return .success(try await PullBodies.fetch(for: steps, snapshot: snapshot, from: remote))
                } catch {
                    return .failure(error)
                }
            }
        }
        var next = chunks.first.map { fetching(plan.steps(in: $0)) }
        do throws(BooksyncError) {
            for (number, chunk) in chunks.enumerated() {
                MallocArenas.returnFreePages()  // the previous chunk's bodies and records, freed by now
                let indexed = plan.indexedSteps(in: chunk)
                if Task.isCancelled {
                    if options.dryRun { throw .interrupted }
                    try base.saveAndThrow(.interrupted)
                }
                guard let fetch = next else { break }
                let fetched = await withTaskCancellationHandler { await fetch.value } onCancel: { fetch.cancel() }
                next = number + 1 < chunks.count ? fetching(plan.steps(in: chunks[number + 1])) : nil
                let bodies: PullBodies
                switch fetched {
                case .success(let got):
                    bodies = got
                case .failure(let error):
                    if options.dryRun { throw error }
                    try base.saveAndThrow(error)
                }
                // A body that cannot be written as planned is reported, and its record left alone.
                var pending: [(index: Int, step: PullStep)] = []
                for planned in indexed {
                    if let kind = bodies.unwritable[planned.step.id] { log.record(kind, at: planned.index, of: plan) } else { pending.append(planned) }
                }
                if keepsTimes { fetchedLater.merge(bodies.changeTimes) { _, new in new } }
                if options.dryRun { continue }
                let together = pending.filter { !colliding.contains($0.step.id.fileName.lowercased()) }
                let alone = pending.filter { colliding.contains($0.step.id.fileName.lowercased()) }
                for (batch, parallelChunk) in [(together, 32)] + alone.map({ ([$0], 1) }) where !batch.isEmpty {
                    if Task.isCancelled { try base.saveAndThrow(.interrupted) }
                    // What the files will hold is journaled before any is written (`PullJournal`).
                    let prepared = ParallelMap.map(batch, chunkSize: parallelChunk) { planned in
                        let document = bodies.document(planned.step.id, in: snapshot)
                        return (planned: planned, entry: fileSteps.journalEntry(planned.step, document: document,
                                                                              revision: document?.revision ?? snapshot.listing.revisions[planned.step.id]))
                    }
                    try base.journal(prepared.compactMap(\.entry))
                    // The base as this batch found it, let go before its changes are
                    // noted: still held then, it would make the manifest shared, and
                    // every change would go to its overlay and then to a copy of it.
                    let outcomes = { [manifest = base.manifest] in
                        ParallelMap.map(prepared, chunkSize: parallelChunk) { prepared in
                            let step = prepared.planned.step
                            let document = bodies.document(step.id, in: snapshot)
                            let entry = manifest.entries[step.id]
                            return fileSteps.apply(step, scanned: files.state(of: step.id, cleanHash: entry?.hash), read: localReads[step.id],
                                                   document: document, revision: document?.revision ?? snapshot.listing.revisions[step.id],
                                                   baseRevision: entry?.revision, prepared: prepared.entry?.change)
                        }
                    }()
                    var failure: BooksyncError?
                    for (planned, outcome) in zip(batch, outcomes) {
                        switch outcome {
                        case .success(let (kind, change)):
                            base.note(change)
                            guard kind != planned.step.action.plannedKind else { continue }
                            log.record(kind, at: planned.index, of: plan)
                            // Not written (changed here meanwhile): the base keeps the old revision.
                            if keepsTimes, let time = bodies.fetched[planned.step.id]?.changeTime { fetchedLater[planned.step.id] = time }
                        case .failure(let error):
                            failure = failure ?? error
                        }
                    }
                    if let failure { try base.saveAndThrow(failure) }
                    try base.saveIfDue()
                    applied.add(batch.count)
                }
            }
        } catch {
            next?.cancel()
            _ = await next?.value
            throw error
        }
        return plan.takeReport(log)
    }
}

/// The bodies of one chunk's writes that a pull fetches right before
/// applying it: those of records changed remotely only, which planning did
/// not need (`LocalScan.pullNeedsRemoteBody`). One `fetch` per chunk (a
/// `:batchGet` of up to 200 ids per request), so a pull of any size holds
/// one chunk of bodies; each document is still read once.
///
/// The document may have changed since it was listed. A newer valid body is
/// written as the listed one would have been (the local file is still checked
/// at the moment of replacement), as a body fetched after the listing always
/// was. One that is now invalid is reported as invalid (`invalidRemote`),
/// and one deleted meanwhile as changed during the sync (its deletion waits
/// for the next pull, which the mass-delete guard sees): both leave the file
/// and the base alone.
struct PullBodies: Sendable {
    /// The fetched documents, by id.
    var fetched: [RecordID: RemoteDocument] = [:]
    /// The outcome of each write that cannot be carried out with what was fetched.
    var unwritable: [RecordID: SyncEventKind] = [:]
    /// The change time of each fetched document whose revision is not the
    /// listed one, or that will not be written: the base will not hold its
    /// listed revision, so the next change mark must not pass it.
    var changeTimes: [RecordID: String] = [:]

    /// The document of `id`: the snapshot's, or the one fetched for the chunk.
    func document(_ id: RecordID, in snapshot: RemoteSnapshot) -> RemoteDocument? {
        snapshot.bodies[id] ?? fetched[id]
    }

    /// Fetches the bodies `steps` still need: those of writes the snapshot
    /// lists without a body.
    static func fetch(for steps: [PullStep], snapshot: RemoteSnapshot, from remote: any RemoteCollection) async throws(BooksyncError) -> PullBodies {
        let ids = steps.compactMap { step in
            step.action == .write && snapshot.bodies[step.id] == nil && snapshot.listing.revisions[step.id] != nil ? step.id : nil
        }
        var bodies = PullBodies()
        guard !ids.isEmpty else { return bodies }
        do {
            bodies.fetched = try await remote.fetch(ids) { _ in }
        } catch {
            throw .remoteFailure(error)
        }
        for id in ids {
            guard let document = bodies.fetched[id] else {
                bodies.unwritable[id] = .changedDuringSync
                continue
            }
            if case .invalid(let diagnostics) = document.content {
                bodies.unwritable[id] = .invalidRemote(diagnostics)
            }
            if let time = document.changeTime, bodies.unwritable[id] != nil || document.revision != snapshot.listing.revisions[id] {
                bodies.changeTimes[id] = time
            }
        }
        return bodies
    }
}

/// The change mark of a first pull, gathered batch by batch (see
/// `RemoteSnapshot.nextChangeMark`): the first answer's read time, and the
/// change time of every document the base did not record.
struct FirstPullMark {
    let field: String?
    var readTime: String?
    var unrecorded: [String?] = []
    /// False once a remote name that cannot be a record was listed.
    var safe = true

    mutating func add(_ batch: RemoteSnapshot, base: Manifest) {
        guard field != nil else { return }
        readTime = readTime ?? batch.listing.readTime
        if !batch.listing.unusable.isEmpty { safe = false }
        unrecorded += batch.unrecordedChangeTimes(base: base).times
    }
}
