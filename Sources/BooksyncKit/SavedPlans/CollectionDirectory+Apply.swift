import BooksyncCore

/// What `booksync apply` did.
public struct ApplyOutcome: Sendable {
    /// The plan's writes as push reports them (`pushed`, or why one was not
    /// written), and the ones the remote already held as `pushed(.adopt)`.
    public let report: SyncReport
    /// How many of the plan's writes the remote already held (an earlier apply).
    public let alreadyApplied: Int
    /// How many writes were sent.
    public let sent: Int
}

extension CollectionDirectory {
    /// `booksync apply`: performs exactly the writes of a saved plan
    /// (the manual's ReviewingChanges article).
    ///
    /// Before anything is written, every planned file is read and compared
    /// with the plan's hash, every planned record classified against the base
    /// as push would (the same action, the same precondition), and every
    /// planned document read in one `:batchGet` and compared with the plan's
    /// revision and field changes. Anything that moved refuses the whole plan
    /// (`.planDrift`, naming each record). Then the writes go out with push's
    /// preconditions and pipeline, and the base is recorded as push records it.
    /// A write whose document already holds the planned content (the plan was
    /// applied before, from here or another clone) is recorded, not sent.
    /// - Parameters:
    ///   - plan: The plan, read by `SavedPlan.read`.
    ///   - planName: How messages name the plan file.
    ///   - remote: The remote the plan writes to; its identity must be the plan's target.
    ///   - options: `--atomic`, and the mass-delete guard (`--max-delete`,
    ///     `--force`), measured against the whole base as for push.
    /// - Throws: `.planRefused` (another target, or another scope in
    ///   config.json than the plan was made under), `.planDrift`, and as `push`.
    @_spi(Remote)
    public func apply(_ plan: SavedPlan, planName: String, remote: any RemoteCollection, options: SyncOptions = SyncOptions(),
                      progress: @escaping @Sendable (SyncProgress) -> Void = { _ in },
                      onStaleLock: (Int32) -> Void = { _ in }) async throws(BooksyncError) -> ApplyOutcome {
        guard let identity = remote.identity, identity == plan.target else {
            throw .planRefused(plan: planName, problem: "writes to \(plan.target), but the remote here is "
                + (remote.identity?.description ?? "one without a fixed identity")
                + "; apply it where it was made (booksync apply --remote NAME), or make a plan for this remote")
        }
        if let problem = plan.scopeProblem(now: rules.scope?.description) {
            throw .planRefused(plan: planName, problem: problem)
        }
        let lock = try await self.lock(onStaleLock: onStaleLock)
        defer { lock.release() }
        try await prepareForSync(holdingLock: true)
        var scoped = options
        scoped.dryRun = false
        scoped.scope = plan.writes.isEmpty ? .everything : RecordScope(plan.writes.map { .init(.record($0.id), text: $0.id.rawValue) })
        var engine = try SyncEngine(self, command: .push, remote: remote, options: scoped, progress: progress, keepHashes: false)
        return try await engine.apply(plan, planName: planName)
    }
}

extension SyncEngine {
    /// Checks the plan against the files, the base and the remote, then sends
    /// its writes; see `CollectionDirectory.apply`.
    mutating func apply(_ plan: SavedPlan, planName: String) async throws(BooksyncError) -> ApplyOutcome {
        var drifted: [(id: RecordID, problem: String)] = []
        var records: [RecordID: CanonicalRecord] = [:]
        var checked: [PlanCheck] = []
        for write in plan.writes {
            switch checkLocal(write) {
            case .failure(let problem): drifted.append((write.id, problem.description))
            case .success(let check):
                checked.append(check)
                if let record = check.record { records[write.id] = record }
            }
        }
        let documents = try await RemoteReads.fetchBodies(remote, ids: checked.map(\.write.id), progress: progress)
        var steps: [PushStep] = []
        var adopted: [SyncEvent] = []
        for check in checked {
            let write = check.write
            let document = documents[write.id]
            let holdsPlannedContent = document?.record?.hash == check.record?.hash && (document == nil) == (check.record == nil)
            if document?.revision == write.remoteRevision, !check.recorded {
                let before = document.map { $0.record?.fields ?? collection.baseCopies.fields(write.id, hash: check.baseHash) ?? [:] }
                guard SavedPlan.FieldChange.between(before, check.record?.fields) == write.changes else {
                    drifted.append((write.id, "the plan's field changes are not what the write would change; it was edited"))
                    continue
                }
                steps.append(PushStep(id: write.id, action: check.action))
            } else if holdsPlannedContent {
                // Applied before (here, or from another clone whose base was not committed).
                if let record = check.record, let document {
                    base.record(record, revision: document.revision)
                } else {
                    base.forget(write.id)
                }
                adopted.append(SyncEvent(id: write.id, kind: .pushed(.adopt)))
            } else {
                drifted.append((write.id, Self.remoteMoved(planned: write.remoteRevision, now: document?.revision)))
            }
        }
        guard drifted.isEmpty else {
            throw .planDrift(plan: planName, drifted: drifted.sorted { $0.id < $1.id }.map { "\(Self.label($0.id)): \($0.problem)" })
        }
        var push = PushPlan(chunkSize: options.atomic ? Int.max : CollectionDirectory.pushChunk)
        for step in steps { push.add(.step(step)) }
        push.finish()
        // The guard push applies: a crafted plan may not delete what a push could not.
        try options.checkDeletes(push, command: .push, baseCount: base.manifest.entries.count, rerun: "booksync apply --force \(planName)")
        if options.atomic { try checkAtomicSize(push, records: records) }
        try await requireGitQuiet()
        try await send(&push, records: records)
        // The adopted records join the report in id order.
        var events = Array(report.events) + adopted
        events.sort { $0.id < $1.id }
        report.events = SyncEvents()
        report.events += events
        return ApplyOutcome(report: finishedReport(), alreadyApplied: adopted.count, sent: steps.count)
    }

    /// The planned write checked against the file and the base: the file's
    /// bytes must be the planned ones and push must still plan the same write
    /// (or the base must already record the planned content).
    private func checkLocal(_ write: SavedPlan.Write) -> Result<PlanCheck, PlanProblem> {
        let id = write.id
        var record: CanonicalRecord?
        let bytes: [UInt8]?
        do throws(FileSystemError) {
            bytes = try FileSystem.readFile(try collection.paths.recordFile(id))
        } catch {
            guard error.isNotFound else { return .failure(PlanProblem("the file cannot be read (\(error))")) }
            bytes = nil
        }
        switch (write.fileHash, bytes) {
        case (nil, nil):
            break
        case (nil, _?):
            return .failure(PlanProblem("the plan deletes it, but its file exists again"))
        case (_?, nil):
            return .failure(PlanProblem("its file was deleted since the plan"))
        case (let planned?, let bytes?):
            let now = SHA256.contentHash(bytes)
            guard now == planned else {
                return .failure(PlanProblem("its file changed since the plan (planned \(Self.short(planned)), now \(Self.short(now)))"))
            }
            switch rules.load(bytes, id: id) {
            case .failure(let problems):
                return .failure(PlanProblem("its file is no longer a valid record here: \(problems.diagnostics.first?.description ?? "")"))
            case .success(let loaded): record = loaded
            }
        }
        let classified = gather.classifiedRecord(id)
        let entry = classified.base
        // Already recorded: applied from this clone before (a delete leaves no entry and no file).
        if write.action == .delete ? (entry == nil && record == nil) : (classified.state == .clean && entry?.hash == record?.hash) {
            return .success(PlanCheck(write: write, record: record, action: .adopt, baseHash: entry?.hash, recorded: true))
        }
        guard case .step(let step) = SyncPlanner.push(classified), step.action == write.pushAction else {
            return .failure(PlanProblem("its base changed since the plan (a pull or push ran), so push would now do something else"))
        }
        return .success(PlanCheck(write: write, record: record, action: step.action, baseHash: entry?.hash, recorded: false))
    }

    /// How messages name a record of the plan: its id and file.
    private static func label(_ id: RecordID) -> String {
        "'\(TerminalEscaping.abbreviate(id.rawValue))' (\(id.fileName))"
    }

    /// A content hash shortened for a message: `sha256:` and 12 hex digits.
    private static func short(_ hash: ContentHash) -> String {
        String(hash.text.prefix(19))
    }

    /// What the remote did to a planned document since the plan.
    private static func remoteMoved(planned: String?, now: String?) -> String {
        switch (planned, now) {
        case (nil, _?): "the remote created it since the plan"
        case (_?, nil): "the remote deleted it since the plan (planned against revision \(planned ?? ""))"
        default: "the remote changed it since the plan (planned against revision \(planned ?? ""), now \(now ?? ""))"
        }
    }
}

/// One planned write after the local checks.
private struct PlanCheck {
    let write: SavedPlan.Write
    /// The record the write sends; nil for a delete.
    let record: CanonicalRecord?
    /// The push action with its precondition.
    let action: PushAction
    /// The base entry's hash (the fields a write to an invalid document replaces).
    let baseHash: ContentHash?
    /// The base already records the planned content (applied from here before).
    let recorded: Bool
}

/// Why a planned write no longer fits, as the end of a sentence.
private struct PlanProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension SavedPlan.Write {
    /// The push action this write is, with its precondition.
    var pushAction: PushAction {
        switch action {
        case .create: .create
        case .update: .update(baseRevision: remoteRevision ?? "")
        case .delete: .delete(baseRevision: remoteRevision ?? "")
        }
    }
}
