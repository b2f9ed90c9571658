/// How `pull` and `push` settle conflicts when told to (`--ours`, `--theirs`).
public enum ConflictChoice: String, Sendable, Equatable {
    /// Report conflicts and leave them (the default).
    case ask
    /// Keep the local side; the remote side becomes the base so `push` publishes ours.
    case ours
    /// Take the remote side.
    case theirs
}

/// What `pull` does with one record.
public enum PullAction: Sendable, Equatable {
    /// Write the remote document locally; it becomes the base.
    case write
    /// Remove the local file and the base entry (deleted remotely).
    case delete
    /// Both sides hold the same content: record the remote revision in the base.
    case adopt
    /// Both sides deleted the record: drop the base entry.
    case forget
    /// Write the field-level merge locally; the remote version becomes the base,
    /// so the merge is a local change that `push` publishes, guarded by that revision.
    case merge(Fields)
    /// `--ours` on a conflict: keep the local file, make the remote version the base.
    case keepLocal
    /// Leave the local file and report the conflict (remote side stored aside).
    case conflict(ConflictKind)
}

/// What `push` does with one record.
public enum PushAction: Sendable, Equatable {
    /// Create the document; precondition: it does not exist.
    case create
    /// Replace the document; precondition: its revision is still the base revision.
    case update(baseRevision: String)
    /// Delete the document; precondition: its revision is still the base revision.
    case delete(baseRevision: String)
    /// Both sides hold the same content: record the remote revision in the base.
    case adopt
    /// Both sides deleted the record: drop the base entry.
    case forget
}

/// Turns classified records into the steps of a pull or a push. Pure: the
/// engine executes the plan and records outcomes.
public enum SyncPlanner {
    /// The pull step for a record; `remoteExists` tells a converged record
    /// (same content on both sides) from a record both sides deleted.
    public static func pullAction(for state: SyncState, choice: ConflictChoice, remoteExists: Bool) -> PullAction? {
        switch state {
        case .clean, .localChange, .invalidLocal, .invalidRemote:
            return nil
        case .remoteChange(.added), .remoteChange(.modified):
            return .write
        case .remoteChange(.deleted):
            return .delete
        case .converged:
            return remoteExists ? .adopt : .forget
        case .mergeable(let merged):
            return .merge(merged)
        case .conflict(let kind):
            switch choice {
            case .ask: return .conflict(kind)
            case .theirs:
                if kind == .modifiedLocallyDeletedRemotely { return .delete }
                return kind == .remoteContentUnknown ? .conflict(kind) : .write
            case .ours: return kind == .remoteContentUnknown ? .conflict(kind) : .keepLocal
            }
        }
    }

    public static func pushAction(for state: SyncState, base: BaseEntry?) -> PushAction? {
        switch state {
        case .localChange(.added):
            return .create
        case .localChange(.modified):
            return base.map { .update(baseRevision: $0.revision) }
        case .localChange(.deleted):
            return base.map { .delete(baseRevision: $0.revision) }
        case .clean, .remoteChange, .converged, .mergeable, .conflict, .invalidLocal, .invalidRemote:
            return nil
        }
    }
}

/// The mass-delete safety rail (DESIGN.md §6).
public struct DeleteGuard: Sendable, Equatable {
    /// Percentage of the base records one command may delete (`--max-delete`, default 50).
    public var maximumPercent: Double
    /// Deleting this many records is never refused, so one delete in a two-record
    /// collection goes through.
    public static let alwaysAllowed = 3

    public init(maximumPercent: Double = 50) {
        self.maximumPercent = maximumPercent
    }

    /// True when `deletes` of `baseCount` records is too many without `--force`.
    public func refuses(deletes: Int, baseCount: Int) -> Bool {
        guard deletes > Self.alwaysAllowed else { return false }
        return Double(deletes) > Double(baseCount) * maximumPercent / 100
    }

    /// Parses `--max-delete N%` (the `%` is optional).
    public static func parsePercent(_ text: String) -> Double? {
        let number = text.hasSuffix("%") ? String(text.dropLast()) : text
        guard let value = Double(number), value >= 0, value <= 100 else { return nil }
        return value
    }
}
