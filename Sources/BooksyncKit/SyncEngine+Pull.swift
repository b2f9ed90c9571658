import BooksyncCore

/// Pull: applying remote changes locally (DESIGN.md §3, `pull` column).
extension CollectionDirectory {
    /// The base and a scan of the files, as pull and push start. A dry run
    /// does not even update the stat cache. `keepChangedRecords` keeps the
    /// records that differ from the base, parsed, for push to send.
    func startSync(_ options: SyncOptions, keepChangedRecords: Bool = false) throws(BooksyncError) -> (Manifest, LocalScan) {
        let manifest = try loadManifest()
        var scanner = LocalScanner(paths: paths, rules: rules, fingerprint: configFingerprint)
        scanner.writeIndex = !options.dryRun
        if keepChangedRecords { scanner.keepRecordsChangedFrom = manifest }
        return (manifest, try scanner.scan())
    }

    /// Applies remote changes locally (DESIGN.md §3, `pull` column).
    public func pull(remote: any RemoteCollection, options: SyncOptions = SyncOptions(),
                     progress: @escaping @Sendable (SyncProgress) -> Void = { _ in },
                     onStaleLock: (Int32) -> Void = { _ in }) async throws(BooksyncError) -> SyncReport {
        let lock = options.dryRun ? nil : try self.lock(onStaleLock: onStaleLock)
        defer { lock?.release() }
        let (manifest, scan) = try startSync(options)
        var report = SyncReport(command: "pull", dryRun: options.dryRun, events: [], unusableFiles: scan.unusableFiles, unusableRemote: [])
        var base = BaseState(copies: baseCopies, manifest: manifest, configFingerprint: configFingerprint)
        let applying = PullApplication(scan: scan, conflictsExist: FileSystem.exists(paths.conflicts),
                                       counter: ProgressCounter(phase: "applying", total: nil, report: progress))
        if manifest.entries.isEmpty {
            try await firstPull(remote, scan: scan, manifest: manifest, options: options, applying: applying,
                                base: &base, report: &report, progress: progress)
        } else {
            let (current, bodies) = try await remoteChanges(remote, scan: scan, manifest: manifest, progress: progress)
            report.unusableRemote = current.unusable
            let steps = planPull(nil, scan: scan, manifest: manifest, listing: current, bodies: bodies, options: options, report: &report)
            let deletes = steps.filter { $0.1 == .delete }.count
            if !options.force, options.deleteGuard.refuses(deletes: deletes, baseCount: manifest.entries.count) {
                throw .massDelete(command: "pull", deletes: deletes, baseCount: manifest.entries.count, maximumPercent: options.deleteGuard.maximumPercent)
            }
            if options.dryRun {
                report.events += Self.dryRunEvents(steps)
                return report
            }
            try applyPullSteps(steps, bodies: bodies, revisions: current.revisions, applying: applying, base: &base, report: &report)
        }
        if !options.dryRun { try base.finish() }
        return report
    }

    /// A first pull: every body is needed, so they come in the listing itself,
    /// and each answer's documents are written while the next answer is on its
    /// way. Nothing can be deleted (there is no base), so no mass-delete guard.
    private func firstPull(_ remote: any RemoteCollection, scan: LocalScan, manifest: Manifest, options: SyncOptions,
                           applying: PullApplication, base: inout BaseState, report: inout SyncReport,
                           progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) {
        typealias Batch = (listing: RemoteListing, documents: [RecordID: RemoteDocument])
        let (batches, continuation) = AsyncStream.makeStream(of: Batch.self)
        let downloaded = ProgressCounter(phase: "downloading", total: nil, report: progress)
        let lister = Task { () async -> RemoteError? in
            defer { continuation.finish() }
            do throws(RemoteError) {
                try await remote.listDocuments(batch: { continuation.yield(($0, $1)) }, progress: { downloaded.add($0) })
                return nil
            } catch {
                return error
            }
        }
        var failure: BooksyncError?
        await withTaskCancellationHandler {
            for await batch in batches where failure == nil {
                report.unusableRemote += batch.listing.unusable
                let steps = planPull(Array(batch.listing.revisions.keys), scan: scan, manifest: manifest, listing: batch.listing,
                                     bodies: batch.documents, options: options, report: &report)
                if options.dryRun {
                    report.events += Self.dryRunEvents(steps)
                    continue
                }
                do throws(BooksyncError) {
                    try applyPullSteps(steps, bodies: batch.documents, revisions: batch.listing.revisions, applying: applying,
                                       base: &base, report: &report)
                } catch {
                    failure = error
                    lister.cancel()
                }
            }
        } onCancel: {
            lister.cancel()
        }
        // Always awaited, also after a failure cancelled it: nothing outlives the command.
        if let error = await lister.value, failure == nil { failure = Task.isCancelled ? .interrupted : .remote(error) }
        if failure == nil, Task.isCancelled { failure = .interrupted }
        // Batches arrive in the server's order; report in id order, as for every other pull.
        report.events.sort { $0.id < $1.id }
        if let failure {
            if !options.dryRun { try base.save() }  // keep what was done before the failure
            throw failure
        }
    }

    /// The pull steps for `ids` (every record known to any side when nil), and
    /// the events of records that get none because they are invalid.
    private func planPull(_ ids: [RecordID]?, scan: LocalScan, manifest: Manifest, listing current: RemoteListing,
                          bodies: [RecordID: RemoteDocument], options: SyncOptions, report: inout SyncReport) -> [(RecordID, PullAction)] {
        let states = classify(scan: scan, manifest: manifest, listing: current, bodies: bodies, only: ids)
        var steps: [(RecordID, PullAction)] = []
        for status in states {
            switch status.state {
            case .invalidLocal(let diagnostics):
                // Reported only when the remote changed it: otherwise status covers it.
                if current.revisions[status.id] != manifest.entries[status.id]?.revision {
                    report.events.append(SyncEvent(id: status.id, kind: .invalidLocal(diagnostics)))
                }
            case .invalidRemote(let diagnostics):
                report.events.append(SyncEvent(id: status.id, kind: .invalidRemote(diagnostics)))
            default:
                let exists = current.revisions[status.id] != nil
                guard var action = SyncPlanner.pullAction(for: status.state, choice: options.conflictChoice, remoteExists: exists) else { continue }
                // --ours / --theirs decide only the fields that really conflict:
                // one-sided changes from either side are kept.
                if options.conflictChoice != .ask, case .conflict(.bothModified) = status.state,
                   let remoteFields = bodies[status.id]?.record?.fields,
                   let merged = preferredMerge(status.id, baseHash: manifest.entries[status.id]?.hash, remote: remoteFields, preferLocal: options.conflictChoice == .ours) {
                    // Nothing of ours survived the merge: that is simply taking theirs.
                    action = merged == remoteFields ? .write : .merge(merged)
                }
                steps.append((status.id, action))
            }
        }
        return steps
    }

    private static func dryRunEvents(_ steps: [(RecordID, PullAction)]) -> [SyncEvent] {
        steps.map { step in
            if case .conflict(let kind) = step.1 { return SyncEvent(id: step.0, kind: .conflict(kind)) }
            return SyncEvent(id: step.0, kind: .pulled(step.1))
        }
    }

    /// Carries out pull steps: file work on several threads (each record touches
    /// only its own files), then the base, in order. Stops at the first failure
    /// or on cancellation, with what was done before recorded in `base`.
    private func applyPullSteps(_ steps: [(RecordID, PullAction)], bodies: [RecordID: RemoteDocument], revisions: [RecordID: String],
                                applying: PullApplication, base: inout BaseState, report: inout SyncReport) throws(BooksyncError) {
        // Records whose file names could be one file on a case-insensitive or
        // normalizing file system (macOS) go in a batch of their own, one by
        // one: the second then finds the file "changed" and is left alone.
        let sharedNames = Dictionary(grouping: steps, by: { $0.0.fileName.lowercased() }).filter { $0.value.count > 1 }
        let colliding = Set(sharedNames.values.flatMap { $0.map(\.0) })
        let batches = steps.filter { !colliding.contains($0.0) }.chunked(into: 500).map { ($0, 32) }
            + steps.filter { colliding.contains($0.0) }.chunked(into: 1).map { ($0, 1) }
        let scan = applying.scan
        let conflictsExist = applying.conflictsExist
        for (batch, parallelChunk) in batches {
            if Task.isCancelled {
                try base.save()
                throw .interrupted
            }
            let outcomes = ParallelMap.map(Array(batch), chunkSize: parallelChunk) { (id, action) in
                applyPull(action, id: id, scanned: scan.files[id], document: bodies[id],
                          revision: bodies[id]?.revision ?? revisions[id], conflictsExist: conflictsExist)
            }
            var failure: BooksyncError?
            for ((id, _), outcome) in zip(batch, outcomes) {
                switch outcome {
                case .success(let (kind, change)):
                    base.note(change)
                    report.events.append(SyncEvent(id: id, kind: kind))
                case .failure(let error):
                    failure = failure ?? error
                }
            }
            if let failure {
                try base.save()  // keep what was done before the failure
                throw failure
            }
            try base.saveIfDue()
            applying.counter.add(batch.count)
        }
    }

    /// Carries out one pull step on the files; returns what happened and what
    /// the manifest must now say. Safe to run for different records at once.
    private func applyPull(_ action: PullAction, id: RecordID, scanned: LocalFileState?, document: RemoteDocument?, revision: String?,
                           conflictsExist: Bool) -> Result<(SyncEventKind, BaseChange), BooksyncError> {
        let file = paths.recordFile(id.fileName)
        // The file must still be what the scan saw, or a concurrent edit would be
        // lost: writes and removals check it at the moment of replacement (see
        // `FileSystem.replace(_:with:ifCurrent:)`); the other steps only here.
        let stillScanned: ([UInt8]?) -> Bool = { bytes in self.matchesScan(bytes, scanned) }
        switch action {
        case .write, .delete, .merge: break
        default: guard stillScanned(try? FileSystem.readFile(file)) else { return .success((.changedDuringSync, .none)) }
        }
        let change: BaseChange
        do {
            switch action {
            case .write:
                guard let record = document?.record, let revision else { return .success((.conflict(.remoteContentUnknown), .none)) }
                guard try FileSystem.replace(file, with: record.canonicalBytes, ifCurrent: stillScanned) else {
                    return .success((.changedDuringSync, .none))
                }
                change = BaseState.copy(record, revision: revision)
            case .delete:
                guard try FileSystem.remove(file, ifCurrent: stillScanned) else { return .success((.changedDuringSync, .none)) }
                change = .forgotten(id)
            case .adopt:
                guard let record = document?.record, let revision else { return .success((.conflict(.remoteContentUnknown), .none)) }
                change = BaseState.copy(record, revision: revision)
            case .forget:
                change = .forgotten(id)
            case .merge(let fields):
                guard let record = document?.record, let revision else { return .success((.conflict(.remoteContentUnknown), .none)) }
                guard try FileSystem.replace(file, with: rules.canonicalBytes(fields), ifCurrent: stillScanned) else {
                    return .success((.changedDuringSync, .none))
                }
                change = BaseState.copy(record, revision: revision)
            case .keepLocal:
                if let record = document?.record, let revision {
                    change = BaseState.copy(record, revision: revision)
                } else {
                    change = .forgotten(id)
                }
            case .conflict(let kind):
                guard kind != .remoteContentUnknown else { return .success((.conflict(kind), .none)) }
                try ConflictStore(paths: paths).save(id, record: document?.record, revision: document == nil ? nil : revision)
                return .success((.conflict(kind), .none))
            }
            // Any earlier conflict of this record is settled now.
            if conflictsExist { try ConflictStore(paths: paths).clear(id) }
        } catch {
            return .failure(.io(error))
        }
        return .success((.pulled(action), change))
    }

    /// True if `bytes` (nil: no file) are the content (or absence) the scan recorded.
    private func matchesScan(_ bytes: [UInt8]?, _ scanned: LocalFileState?) -> Bool {
        switch (scanned, bytes) {
        case (nil, nil): return true
        case (nil, _?), (_?, nil): return false
        case (.invalid?, _?): return false
        case (.valid(let hash)?, let bytes?):
            if SHA256.contentHash(bytes) == hash { return true }  // canonical, as booksync wrote it
            guard case .success(let fields) = rules.parse(bytes) else { return false }
            return SHA256.contentHash(rules.canonicalBytes(fields)) == hash
        }
    }
}


/// What every batch of one pull's steps shares.
private struct PullApplication: Sendable {
    let scan: LocalScan
    /// Whether `.booksync/conflicts/` exists, so settled conflicts are cleared.
    let conflictsExist: Bool
    let counter: ProgressCounter
}
