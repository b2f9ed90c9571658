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
/// base, for loading the emulator or a fresh staging project (the manual's RemotesAndTargets article).
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
        var syncOptions = SyncOptions()
        syncOptions.dryRun = options.dryRun
        syncOptions.deleteGuard = options.deleteGuard
        syncOptions.force = options.force
        var engine = try SyncEngine(self, command: .seed, remote: remote, options: syncOptions, progress: progress, keepHashes: false)
        return try await engine.seed(deleteOthers: options.deleteOthers)
    }
}

extension SyncEngine {
    /// Runs the seed: a plan of overwrites (and removals) on push's send
    /// pipeline, under the one mass-delete check (measured against the
    /// remote's documents, which a seed replaces, not against the base).
    mutating func seed(deleteOthers: Bool) async throws(BooksyncError) -> SyncReport {
        var deletes: [RecordID] = []
        var remoteCount = 0
        if deleteOthers {
            let listing: RemoteListing
            do {
                listing = try await remote.listRevisions(progress: { _ in })
            } catch {
                throw .remoteFailure(error)
            }
            report.unusableRemote = listing.unusable
            remoteCount = listing.revisions.count
            deletes = listing.revisions.keys.filter { scan.files[$0] == nil }
        }
        var plan = seedPlan(deleting: deletes)
        try options.checkDeletes(plan, command: .seed, baseCount: remoteCount,
                                 rerun: ForcedCommandLine.advice("seed", remote: collection.remote, options: ["--delete"]) ?? "booksync seed --delete --force")
        if options.dryRun {
            report.events = plan.takeReport()
            return report
        }
        try await requireGitQuiet()
        releasePlanningBase()
        // The base becomes what is written: no change mark (the remote's
        // changes were never read), nothing kept for a record not written.
        base.setChangeMark(nil)
        base.markChanged()
        var written = Set<RecordID>()
        for chunk in plan.chunks { for step in plan.steps(in: chunk) where step.action == .overwrite { written.insert(step.id) } }
        for id in Array(base.manifest.entries.keys) where !written.contains(id) { base.forget(id) }
        try await send(&plan, records: [:])
        return report
    }

    /// Every valid file as an overwrite, every id of `deletes` as a removal,
    /// and every invalid file as its event, in id order.
    private func seedPlan(deleting deletes: [RecordID]) -> PushPlan {
        var planned: [(id: RecordID, record: PlannedRecord<PushAction>)] = []
        planned.reserveCapacity(scan.files.count + deletes.count)
        for id in scan.files.keys {
            switch scan.files[id] {
            case .valid?: planned.append((id, .step(PushStep(id: id, action: .overwrite))))
            case .invalid(let problems)?: planned.append((id, .reported(SyncEvent(id: id, kind: .invalidLocal(problems)))))
            case nil: break
            }
        }
        for id in deletes { planned.append((id, .step(PushStep(id: id, action: .remove)))) }
        planned.sort { $0.id < $1.id }
        var plan = PushPlan(chunkSize: CollectionDirectory.pushChunk)
        for item in planned { plan.add(item.record) }
        plan.finish()
        return plan
    }
}
