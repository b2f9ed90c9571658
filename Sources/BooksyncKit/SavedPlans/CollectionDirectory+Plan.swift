import BooksyncCore

extension CollectionDirectory {
    /// `booksync plan`: what `push` would do now, pinned to the files' bytes
    /// and the documents' revisions so that `apply` can do exactly that later
    /// (the manual's ReviewingChanges article).
    ///
    /// The writes are push's (its dry run, with the same mass-delete guard);
    /// then the documents they touch are read in one `:batchGet` (one billed
    /// read each) for their revisions and the values they replace. A document
    /// that moved since the base is held, not written: push would find its
    /// precondition failed.
    /// - Parameters:
    ///   - remote: The remote to plan against.
    ///   - remoteName: Its name in the collection (`origin`), kept in the plan.
    ///   - pathspecs: As typed (kept in the plan); `options.scope` is what they select.
    ///   - options: Pathspecs, `--max-delete`, `--force`, `--atomic` (its size limit is checked).
    /// - Throws: `BooksyncError` as `push --dry-run`, and `.remote` for the read.
    @_spi(Remote)
    public func makePlan(remote: any RemoteCollection, remoteName: String, pathspecs: [String], options: SyncOptions,
                         progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(BooksyncError) -> SavedPlan {
        guard let target = remote.identity else {
            throw .invalidArgument("remote '\(remoteName)' has no fixed identity to plan against")
        }
        var dryRun = options
        dryRun.dryRun = true
        try await prepareForSync(holdingLock: false)
        var engine = try SyncEngine(self, command: .push, remote: remote, options: dryRun, progress: progress, keepHashes: false)
        let report = try await engine.push()
        var steps: [PushStep] = []
        var held: [SavedPlan.Held] = []
        for event in report.events {
            switch event.kind {
            case .pushed(let action) where PushStep(id: event.id, action: action).sendsWrite:
                steps.append(PushStep(id: event.id, action: action))
            case .invalidLocal(let diagnostics):
                held.append(.init(id: event.id, reason: "the file is invalid, so push does not send it: \(diagnostics.first?.description ?? "")"))
            case .outsideScope:
                held.append(.init(id: event.id, reason: "outside the collection's scope (config \"scope\"), so push does not create it"))
            default:
                continue
            }
        }
        let documents = try await RemoteReads.fetchBodies(remote, ids: steps.map(\.id), progress: progress)
        var writes: [SavedPlan.Write] = []
        for step in steps {
            switch plannedWrite(step, document: documents[step.id], base: engine.base.manifest.entries[step.id]) {
            case .write(let write): writes.append(write)
            case .held(let reason): held.append(.init(id: step.id, reason: reason))
            }
        }
        held.sort { $0.id < $1.id }
        return SavedPlan(remoteName: remoteName, target: target, pathspecs: pathspecs, writes: writes, held: held,
                         scope: rules.scope?.description)
    }

    /// The planned write of one push step, or why it is held.
    private func plannedWrite(_ step: PushStep, document: RemoteDocument?, base: BaseEntry?) -> PlannedWrite {
        let id = step.id
        var file: (hash: ContentHash, record: CanonicalRecord)?
        if !step.action.isDelete {
            guard let bytes = try? FileSystem.readFile(paths.recordFile(id)), case .success(let record) = rules.load(bytes, id: id) else {
                return .held("the file changed while booksync planned; run booksync plan again")
            }
            file = (SHA256.contentHash(bytes), record)
        }
        let expected: String?
        let action: SavedPlan.Write.Action
        switch step.action {
        case .create: (expected, action) = (nil, .create)
        case .update(let revision): (expected, action) = (revision, .update)
        case .delete(let revision): (expected, action) = (revision, .delete)
        case .adopt, .forget, .overwrite, .remove: return .held("nothing to write")
        }
        guard document?.revision == expected else {
            if document?.record?.hash == file?.record.hash, (document == nil) == (file == nil) {
                return .held("the remote already holds this content; booksync pull records it in the base")
            }
            let moved = document == nil ? "deleted it" : (expected == nil ? "created it" : "changed it")
            return .held("the remote \(moved) since your last pull; run booksync pull, then plan again")
        }
        // An invalid document's fields are unknown; what the base recorded is what push replaces.
        let before = document.map { $0.record?.fields ?? baseCopies.fields(id, hash: base?.hash) ?? [:] }
        return .write(SavedPlan.Write(id: id, action: action, fileHash: file?.hash, remoteRevision: expected,
                                      changes: SavedPlan.FieldChange.between(before, file?.record.fields)))
    }
}

/// A push step as a plan holds it: a write, or the reason it is held.
private enum PlannedWrite {
    case write(SavedPlan.Write)
    case held(String)
}
