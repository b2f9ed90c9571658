import BooksyncCore

/// Options of `seed`.
package struct SeedOptions: Sendable {
    /// Print what would be written; write nothing.
    package var dryRun = false
    /// Also delete the documents no record file has (`--delete`), within the mass-delete guard.
    package var deleteOthers = false
    /// The mass-delete guard, counted against the remote's documents.
    package var deleteGuard = DeleteGuard()
    /// `--force`: skip the mass-delete guard.
    package var force = false

    /// The defaults: write, keep documents without a file, guard deletes.
    package init() {}
}

/// Seed: one-way publishing of the files to a target without a three-way
/// base, for loading the emulator or a fresh staging project (<doc:RemotesAndTargets>).
extension CollectionDirectory {
    /// Writes every valid record file to the selected remote, overwriting what
    /// is there (no preconditions: nothing of the remote is compared), and,
    /// with `deleteOthers`, deletes the documents no file has. Afterwards
    /// this remote's base is exactly what was written, so two-way sync goes on
    /// from there; no other remote's state is touched.
    ///
    /// Base entries of records that were not written (no file) are forgotten,
    /// never turned into deletions: the next pull shows those documents as
    /// added remotely instead of push deleting them.
    package func seed(remote: any RemoteCollection, options: SeedOptions = SeedOptions(),
                     progress: @escaping @Sendable (SyncProgress) -> Void = { _ in },
                     onStaleLock: (Int32) -> Void = { _ in }) async throws(BooksyncError) -> SyncReport {
        let lock = options.dryRun ? nil : try await self.lock(onStaleLock: onStaleLock)
        defer { lock?.release() }
        try await prepareForSync(holdingLock: lock != nil)
        let manifest = try loadManifest(for: remote)
        var scanner = LocalScanner(paths: paths, rules: rules, fingerprint: configFingerprint)
        scanner.writeIndex = !options.dryRun
        scanner.keepsHashes = false
        let scan = try scanner.scan()
        var report = SyncReport(command: .seed, dryRun: options.dryRun, events: [], unusableFiles: scan.unusableFiles, unusableRemote: [])
        var valid: [RecordID] = []
        for id in scan.files.keys {
            switch scan.files[id] {
            case .valid?: valid.append(id)
            case .invalid(let problems)?: report.events.append(SyncEvent(id: id, kind: .invalidLocal(problems)))
            case nil: break
            }
        }
        valid.sort()
        var deletes: [RecordID] = []
        if options.deleteOthers {
            let listing: RemoteListing
            do {
                listing = try await remote.listRevisions(progress: { _ in })
            } catch {
                throw .remoteFailure(error)
            }
            report.unusableRemote = listing.unusable
            deletes = listing.revisions.keys.filter { scan.files[$0] == nil }.sorted()
            if !options.force, options.deleteGuard.refuses(deletes: deletes.count, baseCount: listing.revisions.count) {
                throw .massDelete(command: "seed", deletes: deletes.count, baseCount: listing.revisions.count,
                                  maximumPercent: options.deleteGuard.maximumPercent,
                                  rerun: forcedCommandLine("seed", options: ["--delete"]) ?? "booksync seed --delete --force")
            }
        }
        if options.dryRun {
            report.events += valid.map { SyncEvent(id: $0, kind: .seeded(deleted: false)) }
            report.events += deletes.map { SyncEvent(id: $0, kind: .seeded(deleted: true)) }
            report.events.sortByID()
            return report
        }
        if let activity = GitActivity.inProgress(at: paths.root) { throw .gitBusy(activity: activity) }
        var stripped = manifest
        stripped.changesSince = nil
        var base = BaseState(copies: baseCopies, manifest: stripped, configFingerprint: configFingerprint, target: remote.identity)
        base.markChanged()
        let written = Set(valid)
        for id in Array(manifest.entries.keys) where !written.contains(id) { base.forget(id) }
        let chunks = (valid.map { SeedItem.write($0) } + deletes.map { SeedItem.delete($0) }).chunked(into: Self.pushChunk).map(Array.init)
        let counter = ProgressCounter(phase: "uploading", total: valid.count + deletes.count, report: progress)
        let paths = self.paths
        let rules = self.rules
        var failure: BooksyncError?
        var events: [SyncEvent] = []
        let started = await BoundedTaskGroup.run(chunks, limit: Self.pushRequestsInFlight) { chunk -> Result<SeedChunk, FailedChunk> in
            var loaded = SeedChunk()
            for (item, outcome) in zip(chunk, ParallelMap.map(chunk, chunkSize: 64) { Self.seedWrite($0, paths: paths, rules: rules) }) {
                switch outcome {
                case .success(let write): loaded.writes.append(write)
                case .failure(let skip): loaded.events.append(SyncEvent(id: item.id, kind: skip.kind))
                }
            }
            guard !loaded.writes.isEmpty else { return .success(loaded) }
            do throws(RemoteError) {
                loaded.outcomes = try await remote.write(loaded.writes, atomic: false) { counter.add($0) }
                return .success(loaded)
            } catch {
                return .failure(FailedChunk(error: error))
            }
        } receive: { _, result in
            switch result {
            case .failure(let failed):
                if failure == nil { failure = .remoteFailure(failed.error) }
            case .success(let done):
                events += done.events
                for write in done.writes {
                    switch (write, done.outcomes[write.id]) {
                    case (.overwrite(let record), .written(let revision?)?):
                        base.record(record, revision: revision)
                        events.append(SyncEvent(id: record.id, kind: .seeded(deleted: false)))
                    case (.remove(let id), .written?):
                        base.forget(id)
                        events.append(SyncEvent(id: id, kind: .seeded(deleted: true)))
                    case (_, .rejected(let message)?):
                        events.append(SyncEvent(id: write.id, kind: .rejected(message)))
                    default:
                        events.append(SyncEvent(id: write.id, kind: .rejected("no answer for this write")))
                    }
                }
                do throws(BooksyncError) {
                    try base.saveIfDue()
                } catch {
                    if failure == nil { failure = error }
                }
            }
            return failure == nil ? .proceed : .drain
        }
        if failure == nil, started < chunks.count { failure = .interrupted }
        report.events += events
        report.events.sortByID()
        if let failure { try base.saveAndThrow(failure) }
        try base.finish()
        return report
    }

    /// The write for one item of a seed, the record read from its file now.
    private static func seedWrite(_ item: SeedItem, paths: CollectionPaths, rules: RecordRules) -> Result<RemoteWrite, SeedSkip> {
        switch item {
        case .delete(let id):
            return .success(.remove(id))
        case .write(let id):
            guard let bytes = try? FileSystem.readFile(paths.recordFile(id)) else { return .failure(SeedSkip(kind: .changedDuringSync)) }
            switch rules.load(bytes, id: id) {
            case .failure(let problems): return .failure(SeedSkip(kind: .invalidLocal(problems.diagnostics)))
            case .success(let record): return .success(.overwrite(record))
            }
        }
    }
}

/// What a seed does to one record.
private enum SeedItem: Sendable {
    case write(RecordID)
    case delete(RecordID)

    var id: RecordID {
        switch self {
        case .write(let id), .delete(let id): id
        }
    }
}

/// Why a record of a seed was not sent.
private struct SeedSkip: Error {
    let kind: SyncEventKind
}

/// One request of a seed: its writes, their outcomes, and the records not sent.
private struct SeedChunk: Sendable {
    var writes: [RemoteWrite] = []
    var outcomes: [RecordID: WriteOutcome] = [:]
    var events: [SyncEvent] = []
}
