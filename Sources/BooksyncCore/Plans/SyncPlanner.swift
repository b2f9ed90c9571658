/// A record as the gather step classified it, with everything the planner
/// needs: nothing is read or merged a second time to plan it.
package struct ClassifiedRecord: Sendable, Equatable {
    /// The record classified.
    package let id: RecordID
    /// The record's class (the manual's ThreeWaySync article).
    package let state: SyncState
    /// The base entry the record was classified against (nil: not in the base).
    package let base: BaseEntry?
    /// The remote revision the classification saw; nil when the document is
    /// absent (deleted meanwhile counts as absent) or the remote was not asked.
    package let remoteRevision: String?
    /// The field-level merge, when both sides modified the record and both
    /// were readable: `--ours` / `--theirs` take their merge from it.
    package let merge: RecordMerge?

    /// A classified record; see the properties.
    package init(id: RecordID, state: SyncState, base: BaseEntry?, remoteRevision: String?, merge: RecordMerge? = nil) {
        self.id = id
        self.state = state
        self.base = base
        self.remoteRevision = remoteRevision
        self.merge = merge
    }
}

/// The field-level three-way merge of one record, done once while
/// classifying; every preferred merge (`--ours`, `--theirs`, `resolve`) is
/// derived from it without merging again.
package struct RecordMerge: Sendable, Equatable {
    /// The remote side's fields.
    package let remote: Fields
    /// The merge with every conflicting field at its local value.
    package let keepingLocal: Fields
    /// Paths changed differently on both sides, sorted (empty: a clean merge).
    package let conflicts: [FieldPath]

    /// Merges `local` and `remote` against `base` (see `FieldMerge`).
    package init(base: Fields?, local: Fields, remote: Fields) {
        (keepingLocal, conflicts) = FieldMerge.mergeKeepingLocal(base: base, local: local, remote: remote)
        self.remote = remote
    }

    /// What `SyncRules.classify` needs: the merged record, or the conflicts.
    package var outcome: FieldMerge.Outcome {
        conflicts.isEmpty ? .merged(keepingLocal) : .conflicts(conflicts)
    }

    /// The merge with every conflicting path at its remote value (removed
    /// where the remote removed it); every one-sided change is kept. The same
    /// as merging with the sides swapped: only the conflicting paths differ.
    package var keepingRemote: Fields {
        var fields = keepingLocal
        for path in conflicts { path.set(path.value(in: remote), in: &fields) }
        return fields
    }

    /// The merge that takes `preferLocal`'s side for each conflicting field.
    package func preferring(local preferLocal: Bool) -> Fields {
        preferLocal ? keepingLocal : keepingRemote
    }
}

/// Turns classified records into the plan of a pull or a push (the manual's ThreeWaySync article,
/// the table's last two columns). Pure: the engine executes the plan, after
/// the mass-delete guard has seen its deletes, and records the outcomes.
package enum SyncPlanner {
    /// What pull makes of one record: a step when it changes the record, an
    /// event when it cannot touch it. An invalid local file is reported only
    /// when the remote changed it (otherwise `status` covers it); an invalid
    /// remote document always.
    package static func pull(_ record: ClassifiedRecord, choice: ConflictChoice) -> PlannedRecord<PullAction> {
        switch record.state {
        case .invalidLocal(let diagnostics):
            guard record.remoteRevision != record.base?.revision else { return .nothing }
            return .reported(SyncEvent(id: record.id, kind: .invalidLocal(diagnostics)))
        case .invalidRemote(let diagnostics):
            return .reported(SyncEvent(id: record.id, kind: .invalidRemote(diagnostics)))
        default:
            return pullAction(for: record, choice: choice).map { .step(PullStep(id: record.id, action: $0)) } ?? .nothing
        }
    }

    /// The pull plan of `records` (classified, in id order), planned record by
    /// record into a packed plan whose steps are applied `chunkSize` at a time.
    package static func pull(_ records: [ClassifiedRecord], choice: ConflictChoice, chunkSize: Int) -> PullPlan {
        pull(choice: choice, chunkSize: chunkSize) { add in records.forEach(add) }
    }

    /// The pull plan of the records `records` hands to its argument one at a
    /// time (classified, in id order): each is planned as it comes, so the
    /// caller need not hold them all.
    package static func pull(choice: ConflictChoice, chunkSize: Int,
                             records: ((ClassifiedRecord) -> Void) -> Void) -> PullPlan {
        var plan = PullPlan(chunkSize: chunkSize)
        records { plan.add(pull($0, choice: choice)) }
        plan.finish()
        return plan
    }

    /// What push makes of one record: a step per local change, an event per
    /// invalid local file.
    package static func push(_ record: ClassifiedRecord) -> PlannedRecord<PushAction> {
        if case .invalidLocal(let diagnostics) = record.state {
            return .reported(SyncEvent(id: record.id, kind: .invalidLocal(diagnostics)))
        }
        if record.state == .outsideScope { return .reported(SyncEvent(id: record.id, kind: .outsideScope)) }
        return pushAction(for: record.state, base: record.base).map { .step(PushStep(id: record.id, action: $0)) } ?? .nothing
    }

    /// The pull step for one record; nil when pull leaves it alone.
    static func pullAction(for record: ClassifiedRecord, choice: ConflictChoice) -> PullAction? {
        switch record.state {
        case .clean, .localChange, .invalidLocal, .invalidRemote, .outsideScope:
            return nil
        case .leftScope:
            return .leaveScope
        case .remoteChange(.added), .remoteChange(.modified):
            return .write
        case .remoteChange(.deleted):
            return .delete
        case .converged:
            return record.remoteRevision != nil ? .adopt : .forget
        case .mergeable(let merged):
            return .merge(merged)
        case .conflict(let kind):
            switch (choice, kind) {
            case (.ask, _), (_, .remoteContentUnknown):
                return .conflict(kind)
            case (.ours, .bothModified), (.theirs, .bothModified):
                // --ours / --theirs decide only the fields that really conflict:
                // one-sided changes from either side are kept.
                guard let merge = record.merge else { return choice == .ours ? .keepLocal : .write }
                let merged = merge.preferring(local: choice == .ours)
                // Nothing of ours survived the merge: that is simply taking theirs.
                return merged == merge.remote ? .write : .merge(merged)
            case (.theirs, .modifiedLocallyDeletedRemotely):
                return .delete
            case (.theirs, _):
                return .write
            case (.ours, _):
                return .keepLocal
            }
        }
    }

    /// The push step for a record in `state`; nil when push leaves it alone.
    static func pushAction(for state: SyncState, base: BaseEntry?) -> PushAction? {
        switch state {
        case .localChange(.added):
            return .create
        case .localChange(.modified):
            return base.map { .update(baseRevision: $0.revision) }
        case .localChange(.deleted):
            return base.map { .delete(baseRevision: $0.revision) }
        case .clean, .remoteChange, .converged, .mergeable, .conflict, .invalidLocal, .invalidRemote, .leftScope, .outsideScope:
            return nil
        }
    }
}
