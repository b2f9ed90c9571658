import Synchronization
import BooksyncCore

/// Options of the writing commands.
public struct SyncOptions: Sendable {
    /// Print the plan, write nothing anywhere.
    public var dryRun = false
    /// `--ours` / `--theirs` for pull's conflicts.
    public var conflictChoice: ConflictChoice = .ask
    public var deleteGuard = DeleteGuard()
    /// `--force`: skip the mass-delete guard.
    public var force = false
    /// `--atomic`: push all writes in one commit, or none.
    public var atomic = false

    public init() {}
}

/// Progress of a long transfer, for a progress bar.
public struct SyncProgress: Sendable {
    public let phase: String
    public let done: Int
    public let total: Int?
}

/// One record's three-way state.
public struct RecordStatus: Sendable, Equatable {
    public let id: RecordID
    public let state: SyncState
}

/// The result of `status`.
public struct SyncStatus: Sendable {
    /// Records that are not clean, sorted by id.
    public let records: [RecordStatus]
    public let unusableFiles: [UnusableFile]
    public let unusableRemote: [UnusableRemoteDocument]
    /// Record files in the directory.
    public let recordCount: Int
    /// Documents in the remote collection; nil when the remote was not checked.
    public let remoteCount: Int?
    /// Record files read during the scan (0 for an unchanged tree with a warm cache).
    public let filesRead: Int

    public var remoteChecked: Bool { remoteCount != nil }
    public var isClean: Bool { records.isEmpty && unusableFiles.isEmpty && unusableRemote.isEmpty }

    /// Conflicts, invalid files or unusable documents: exit status 1.
    public var needsAttention: Bool {
        !unusableFiles.isEmpty || !unusableRemote.isEmpty || records.contains { $0.state.needsAttention }
    }
}

/// What a pull or push did (or, with `--dry-run`, would do) to one record.
public enum SyncEventKind: Sendable, Equatable {
    case pulled(PullAction)
    case pushed(PushAction)
    /// Left alone: both sides changed it (pull).
    case conflict(ConflictKind)
    /// Push found the remote changed since the base and the content differs.
    case remoteChangedSincePull
    case invalidLocal([RecordDiagnostic])
    case invalidRemote([RecordDiagnostic])
    /// The server refused the write for a reason other than a precondition.
    case rejected(String)
    /// The local file changed while booksync was working; it was left alone.
    case changedDuringSync
}

public struct SyncEvent: Sendable, Equatable {
    public let id: RecordID
    public let kind: SyncEventKind
}

/// The result of `pull` or `push`.
public struct SyncReport: Sendable {
    public let command: String
    public let dryRun: Bool
    public var events: [SyncEvent]
    public var unusableFiles: [UnusableFile]
    public var unusableRemote: [UnusableRemoteDocument]

    public var needsAttention: Bool {
        !unusableFiles.isEmpty || !unusableRemote.isEmpty || events.contains {
            switch $0.kind {
            case .pulled, .pushed: false
            default: true
            }
        }
    }
}

extension CollectionDirectory {
    // MARK: status

    /// The three-way status (DESIGN.md §3). Without a remote (`--offline`) the
    /// remote side counts as unchanged.
    public func status(remote: (any RemoteCollection)?, progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(BooksyncError) -> SyncStatus {
        if remote == nil, let clean = quickCleanStatus() { return clean }
        let stamp = manifestStamp()
        let manifest = try loadManifest()
        let scan = try await scanLocal(base: manifest, baseStamp: stamp)
        var listing: RemoteListing?
        var bodies: [RecordID: RemoteDocument] = [:]
        if let remote {
            (listing, bodies) = try await remoteChanges(remote, scan: scan, manifest: manifest, progress: progress)
        }
        let states = classify(scan: scan, manifest: manifest, listing: listing, bodies: bodies, includeClean: false)
        return SyncStatus(
            records: states,
            unusableFiles: scan.unusableFiles, unusableRemote: listing?.unusable ?? [],
            recordCount: scan.files.count, remoteCount: listing.map { $0.revisions.count + $0.unusable.count },
            filesRead: scan.filesRead)
    }

    /// The remote side as status and pull both see it, so they classify every
    /// record alike: the revision of every document, and the body of each one
    /// whose revision differs from the base (unless its local file is invalid,
    /// which decides the class alone). Only a body tells a pullable change from
    /// a document that cannot be a record (wrong types, missing fields, a bad
    /// tag: invalid, never "added"). Unchanged documents' bodies are never
    /// fetched: each is a billed read. A document listed but gone when its
    /// body was fetched was deleted meanwhile and counts as absent.
    func remoteChanges(_ remote: any RemoteCollection, scan: LocalScan, manifest: Manifest,
                       progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> (RemoteListing, [RecordID: RemoteDocument]) {
        var listing = try await listRemoteRevisions(remote, progress: progress)
        let needed = listing.revisions.keys.filter { id in
            if case .invalid? = scan.files[id] { return false }
            return manifest.entries[id]?.revision != listing.revisions[id]
        }
        let bodies = try await fetchRemoteBodies(remote, ids: needed, progress: progress)
        for id in needed where bodies[id] == nil { listing.revisions[id] = nil }
        return (listing, bodies)
    }

    func listRemoteRevisions(_ remote: any RemoteCollection, progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> RemoteListing {
        let counter = ProgressCounter(phase: "listing", total: nil, report: progress)
        do {
            return try await remote.listRevisions { counter.add($0) }
        } catch {
            throw Task.isCancelled ? .interrupted : .remote(error)
        }
    }

    func fetchRemoteBodies(_ remote: any RemoteCollection, ids: [RecordID], progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> [RecordID: RemoteDocument] {
        guard !ids.isEmpty else { return [:] }
        let counter = ProgressCounter(phase: "downloading", total: ids.count, report: progress)
        do {
            return try await remote.fetch(ids.sorted()) { counter.add($0) }
        } catch {
            throw Task.isCancelled ? .interrupted : .remote(error)
        }
    }

    /// Classifies every record known to any side (or just `ids`), sorted by id. `bodies` holds
    /// the fetched documents; a listed document whose body was asked for but not
    /// returned was deleted in between and counts as absent. With `includeClean`
    /// false only the records that differ are returned (what status lists), which
    /// spares sorting the whole collection.
    func classify(scan: LocalScan, manifest: Manifest, listing: RemoteListing?, bodies: [RecordID: RemoteDocument], includeClean: Bool = true,
                  only ids: [RecordID]? = nil) -> [RecordStatus] {
        var result: [RecordStatus] = []
        func visit(_ id: RecordID) {
            let base = manifest.entries[id]
            let local: LocalVersion
            switch scan.files[id] {
            case nil: local = .absent
            case .invalid(let diagnostics)?: local = .invalid(diagnostics)
            case .valid(let hash)?: local = .present(hash: hash)
            }
            let remote = remoteVersion(id, listing: listing, bodies: bodies)
            let state = SyncRules.classify(base: base, local: local, remote: remote) {
                guard let remoteFields = bodies[id]?.record?.fields, let localFields = loadLocalFields(id) else { return nil }
                return FieldMerge.merge(base: baseCopies.fields(id, hash: base?.hash), local: localFields, remote: remoteFields)
            }
            if includeClean || state != .clean { result.append(RecordStatus(id: id, state: state)) }
        }
        if let ids {
            for id in ids { visit(id) }
        } else {
            for id in scan.files.keys { visit(id) }
            for id in manifest.entries.keys where scan.files[id] == nil { visit(id) }
            if let listing {
                for id in listing.revisions.keys where scan.files[id] == nil && manifest.entries[id] == nil { visit(id) }
            }
        }
        return result.sorted { $0.id < $1.id }
    }

    func remoteVersion(_ id: RecordID, listing: RemoteListing?, bodies: [RecordID: RemoteDocument]) -> RemoteVersion {
        guard let listing else { return .notChecked }
        guard let revision = listing.revisions[id] else { return .absent }
        guard let document = bodies[id] else { return .present(revision: revision, hash: nil) }
        switch document.content {
        case .record(let record): return .present(revision: document.revision, hash: record.hash)
        case .invalid(let diagnostics): return .invalid(revision: document.revision, diagnostics)
        }
    }

    /// The three-way merge of a conflicted record where each conflicting field
    /// takes the preferred side's value; nil when the local file cannot be read.
    func preferredMerge(_ id: RecordID, baseHash: String?, remote: Fields, preferLocal: Bool) -> Fields? {
        guard let local = loadLocalFields(id) else { return nil }
        let base = baseCopies.fields(id, hash: baseHash)
        return preferLocal
            ? FieldMerge.mergeKeepingLocal(base: base, local: local, remote: remote).merged
            : FieldMerge.mergeKeepingLocal(base: base, local: remote, remote: local).merged
    }

    func loadLocalFields(_ id: RecordID) -> Fields? {
        guard let bytes = try? FileSystem.readFile(paths.recordFile(id.fileName)), case .success(let fields) = rules.parse(bytes) else { return nil }
        return fields
    }

    // MARK: pull

    /// The base and a scan of the files, as pull and push start. A dry run
    /// does not even update the stat cache. `keepChangedRecords` keeps the
    /// records that differ from the base, parsed, for push to send.
    private func startSync(_ options: SyncOptions, keepChangedRecords: Bool = false) throws(BooksyncError) -> (Manifest, LocalScan) {
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

    // MARK: push

    /// Publishes local changes (DESIGN.md §3, `push` column). Sends only what
    /// changed, every write guarded by a precondition; a failed precondition is
    /// settled by fetching that document: same content → recorded, else reported.
    public func push(remote: any RemoteCollection, options: SyncOptions = SyncOptions(),
                     progress: @escaping @Sendable (SyncProgress) -> Void = { _ in },
                     onStaleLock: (Int32) -> Void = { _ in }) async throws(BooksyncError) -> SyncReport {
        let lock = options.dryRun ? nil : try self.lock(onStaleLock: onStaleLock)
        defer { lock?.release() }
        let (manifest, scan) = try startSync(options, keepChangedRecords: !options.dryRun)
        let states = classify(scan: scan, manifest: manifest, listing: nil, bodies: [:])

        var report = SyncReport(command: "push", dryRun: options.dryRun, events: [], unusableFiles: scan.unusableFiles, unusableRemote: [])
        var planned: [(RecordID, PushAction)] = []
        for status in states {
            if case .invalidLocal(let diagnostics) = status.state {
                report.events.append(SyncEvent(id: status.id, kind: .invalidLocal(diagnostics)))
            } else if let action = SyncPlanner.pushAction(for: status.state, base: manifest.entries[status.id]) {
                planned.append((status.id, action))
            }
        }
        let deletes = planned.filter { if case .delete = $0.1 { return true } else { return false } }.count
        if !options.force, options.deleteGuard.refuses(deletes: deletes, baseCount: manifest.entries.count) {
            throw .massDelete(command: "push", deletes: deletes, baseCount: manifest.entries.count, maximumPercent: options.deleteGuard.maximumPercent)
        }
        if options.dryRun {
            report.events += planned.map { SyncEvent(id: $0.0, kind: .pushed($0.1)) }
            return report
        }

        let (writes, sentRecords, loadEvents) = loadWrites(planned, scanned: scan.changedRecords)
        report.events += loadEvents
        var base = BaseState(copies: baseCopies, manifest: manifest, configFingerprint: configFingerprint)
        let failure = await sendPipelined(writes, sent: sentRecords, manifest: manifest, options: options,
                                          remote: remote, base: &base, report: &report, progress: progress)
        if let failure {
            try base.save()  // keep what was done before the failure
            throw failure
        }
        try base.finish()
        report.events.sort { $0.id < $1.id }
        return report
    }

    /// Writes per request (Firestore's limit for `:batchWrite` and `:commit`).
    static let pushChunk = 500
    /// Requests in flight: while the server applies one chunk, the next is
    /// encoded and sent.
    static let pushRequestsInFlight = 3

    /// The writes for the planned push steps. Records parsed by the scan are
    /// sent as scanned; the others (proven changed by the stat cache alone) are
    /// read now, on several threads.
    private func loadWrites(_ planned: [(RecordID, PushAction)], scanned: [RecordID: Record])
        -> (writes: [RemoteWrite], records: [RecordID: Record], events: [SyncEvent]) {
        let rules = self.rules
        let paths = self.paths
        let loaded = ParallelMap.map(planned, chunkSize: 64) { (id, action) -> PushLoad in
            let record: Record
            switch action {
            case .delete(let revision):
                return .write(.delete(id, baseRevision: revision))
            case .adopt, .forget:
                return .nothing
            case .create, .update:
                if let scannedRecord = scanned[id] {
                    record = scannedRecord
                } else {
                    guard let bytes = try? FileSystem.readFile(paths.recordFile(id.fileName)) else { return .event(.changedDuringSync) }
                    switch rules.load(bytes, id: id) {
                    case .failure(let problems): return .event(.invalidLocal(problems.diagnostics))
                    case .success(let loaded): record = loaded
                    }
                }
            }
            if case .update(let revision) = action { return .write(.update(record, baseRevision: revision)) }
            return .write(.create(record))
        }
        var writes: [RemoteWrite] = []
        var records: [RecordID: Record] = [:]
        var events: [SyncEvent] = []
        for ((id, _), outcome) in zip(planned, loaded) {
            switch outcome {
            case .write(let write):
                writes.append(write)
                switch write {
                case .create(let record), .update(let record, _): records[id] = record
                case .delete: break
                }
            case .nothing:
                break
            case .event(let kind):
                events.append(SyncEvent(id: id, kind: kind))
            }
        }
        return (writes, records, events)
    }

    /// Sends the writes in chunks, a few requests in flight, and records in the
    /// base what the server accepted as each answer arrives. On a failure or
    /// cancellation no new chunk starts, the ones in flight are still recorded,
    /// and the first failure is returned.
    private func sendPipelined(_ writes: [RemoteWrite], sent: [RecordID: Record], manifest: Manifest, options: SyncOptions,
                               remote: any RemoteCollection, base: inout BaseState, report: inout SyncReport,
                               progress: @escaping @Sendable (SyncProgress) -> Void) async -> BooksyncError? {
        let counter = ProgressCounter(phase: "uploading", total: writes.count, report: progress)
        let chunks = writes.chunked(into: options.atomic ? max(writes.count, 1) : Self.pushChunk)
        let atomic = options.atomic
        return await withTaskGroup(of: Result<SentChunk, RemoteError>.self) { group -> BooksyncError? in
            var failure: BooksyncError?
            var next = 0
            func startNext() {
                guard next < chunks.count, failure == nil, !Task.isCancelled else { return }
                let chunk = Array(chunks[next])
                next += 1
                group.addTask {
                    do throws(RemoteError) {
                        let outcomes = try await remote.write(chunk, atomic: atomic) { counter.add($0) }
                        return .success(SentChunk(chunk, outcomes: outcomes, sent: sent))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            for _ in 0..<Self.pushRequestsInFlight { startNext() }
            for await result in group {
                switch result {
                case .failure(let error):
                    if failure == nil { failure = Task.isCancelled ? .interrupted : .remote(error) }
                case .success(let done):
                    report.events += done.events
                    for (write, change) in done.accepted {
                        base.note(change)
                        let kind: PushAction = change.isForgotten
                            ? .delete(baseRevision: manifest.entries[write.id]?.revision ?? "")
                            : (manifest.entries[write.id].map { .update(baseRevision: $0.revision) } ?? .create)
                        report.events.append(SyncEvent(id: write.id, kind: .pushed(kind)))
                    }
                    if !done.stale.isEmpty {
                        let preconditions = Dictionary(uniqueKeysWithValues: done.chunk.map { ($0.id, $0) })
                        do throws(BooksyncError) {
                            report.events += try await settleStaleWrites(done.stale, sent: sent, writes: preconditions, atomic: atomic,
                                                                         remote: remote, base: &base, progress: progress)
                        } catch {
                            if failure == nil { failure = error }
                        }
                    }
                    do throws(BooksyncError) {
                        try base.saveIfDue()
                    } catch {
                        if failure == nil { failure = error }
                    }
                }
                startNext()
            }
            // Chunks left unsent without a failure: the command was cancelled (Ctrl-C).
            if failure == nil, next < chunks.count { failure = .interrupted }
            return failure
        }
    }

    /// A write whose precondition failed: the remote changed since the base, or
    /// an earlier attempt of this very write succeeded but its answer was lost.
    /// Fetch the document; the same content as ours (or both gone) is adopted.
    ///
    /// After a refused `--atomic` commit every write is reported stale, though
    /// only some conflicted: those whose precondition still holds were simply
    /// not applied, and are reported as such.
    private func settleStaleWrites(_ ids: [RecordID], sent: [RecordID: Record], writes: [RecordID: RemoteWrite], atomic: Bool,
                                   remote: any RemoteCollection, base: inout BaseState,
                                   progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> [SyncEvent] {
        let documents = try await fetchRemoteBodies(remote, ids: ids, progress: progress)
        var events: [SyncEvent] = []
        for id in ids {
            let ours = sent[id]
            switch (ours, documents[id]) {
            case (let record?, let document?) where document.record?.hash == record.hash:
                base.record(record, revision: document.revision)
                events.append(SyncEvent(id: id, kind: .pushed(.adopt)))
            case (nil, nil):
                base.forget(id)
                events.append(SyncEvent(id: id, kind: .pushed(.forget)))
            default:
                if atomic, let write = writes[id], Self.preconditionHolds(write, document: documents[id]) {
                    events.append(SyncEvent(id: id, kind: .rejected("not written: the --atomic commit was refused because another record in it changed remotely")))
                } else {
                    events.append(SyncEvent(id: id, kind: .remoteChangedSincePull))
                }
            }
        }
        return events
    }

    private static func preconditionHolds(_ write: RemoteWrite, document: RemoteDocument?) -> Bool {
        switch write {
        case .create: document == nil
        case .update(_, let revision), .delete(_, let revision): document?.revision == revision
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

/// What loading one planned push step gave.
private enum PushLoad: Sendable {
    case write(RemoteWrite)
    case nothing
    /// The record cannot be sent (changed away, invalid).
    case event(SyncEventKind)
}

/// One chunk of push writes after the server answered: the base changes for
/// what it accepted, the stale writes to settle, and the refusals.
private struct SentChunk: Sendable {
    let chunk: [RemoteWrite]
    var accepted: [(RemoteWrite, BaseChange)] = []
    var stale: [RecordID] = []
    var events: [SyncEvent] = []

    /// Sorts the server's answers; base changes (with their pack lines) are
    /// prepared here, in the chunk's task, off the task that applies them.
    init(_ chunk: [RemoteWrite], outcomes: [RecordID: WriteOutcome], sent: [RecordID: Record]) {
        self.chunk = chunk
        for write in chunk {
            switch outcomes[write.id] {
            case .written(let revision)?:
                if write.isDelete {
                    accepted.append((write, .forgotten(write.id)))
                } else if let record = sent[write.id], let revision {
                    accepted.append((write, BaseState.copy(record, revision: revision)))
                } else {
                    events.append(SyncEvent(id: write.id, kind: .rejected("the server did not return the new revision")))
                }
            case .preconditionFailed?:
                stale.append(write.id)
            case .rejected(let message)?:
                events.append(SyncEvent(id: write.id, kind: .rejected(message)))
            case nil:
                events.append(SyncEvent(id: write.id, kind: .rejected("no answer for this write")))
            }
        }
    }
}

/// Counts progress from concurrent callbacks and reports totals.
final class ProgressCounter: Sendable {
    private let phase: String
    private let total: Int?
    private let report: @Sendable (SyncProgress) -> Void
    private let done = Mutex(0)

    init(phase: String, total: Int?, report: @escaping @Sendable (SyncProgress) -> Void) {
        self.phase = phase
        self.total = total
        self.report = report
    }

    func add(_ count: Int) {
        let now = done.withLock { value in
            value += count
            return value
        }
        report(SyncProgress(phase: phase, done: now, total: total))
    }
}

extension Array {
    func chunked(into size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
