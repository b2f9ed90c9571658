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

/// A pull or push action, as far as the mass-delete guard cares.
package protocol PlanAction: Sendable, Equatable {
    /// True for an action that deletes the record (a local file for pull, a
    /// remote document for push).
    var isDelete: Bool { get }
}

extension PullAction: PlanAction {
    /// Removing the local file (deleted remotely, or `--theirs`).
    package var isDelete: Bool { self == .delete }
}

extension PushAction: PlanAction {
    /// Deleting the remote document.
    package var isDelete: Bool {
        if case .delete = self { return true }
        return false
    }
}

/// One record's step in a plan: the record and what is done with it.
package struct PlanStep<Action: PlanAction>: Sendable, Equatable {
    /// The record the step is for.
    package let id: RecordID
    /// What the command does with the record.
    package let action: Action

    /// The step `action` for the record `id`.
    package init(id: RecordID, action: Action) {
        self.id = id
        self.action = action
    }
}

/// Everything a pull or push will do, decided before anything is written or
/// sent: the steps, in id order, and the events of the records that get none
/// (invalid ones).
package struct SyncPlan<Action: PlanAction>: Sendable, Equatable {
    /// One per record the command changes, in id order.
    package var steps: [PlanStep<Action>] = []
    /// Reported as they are; nothing is done for these records.
    package var events: [SyncEvent] = []

    /// An empty plan.
    package init() {}

    /// How many steps delete a record: what the mass-delete guard counts.
    package var deletes: Int { steps.count { $0.action.isDelete } }
}

/// A step of a pull plan.
package typealias PullStep = PlanStep<PullAction>
/// A step of a push plan.
package typealias PushStep = PlanStep<PushAction>
/// What a pull will do.
package typealias PullPlan = SyncPlan<PullAction>
/// What a push will do.
package typealias PushPlan = SyncPlan<PushAction>

extension PlanStep where Action == PullAction {
    /// What a dry run reports for this step: a conflict as a conflict, the
    /// rest as pulled.
    package var dryRunEvent: SyncEvent {
        if case .conflict(let kind) = action { return SyncEvent(id: id, kind: .conflict(kind)) }
        return SyncEvent(id: id, kind: .pulled(action))
    }
}

extension PlanStep where Action == PushAction {
    /// What a dry run reports for this step.
    package var dryRunEvent: SyncEvent { SyncEvent(id: id, kind: .pushed(action)) }
}

/// The mass-delete safety rail (<doc:Safety>).
public struct DeleteGuard: Sendable, Equatable {
    /// Percentage of the base records one command may delete (`--max-delete`, default 50).
    public var maximumPercent: Double
    /// Deleting this many records is never refused, so one delete in a two-record
    /// collection goes through.
    package static let alwaysAllowed = 3

    /// A guard that refuses deleting more than `maximumPercent` of the base.
    public init(maximumPercent: Double = 50) {
        self.maximumPercent = maximumPercent
    }

    /// True when `deletes` of `baseCount` records is too many without `--force`.
    package func refuses(deletes: Int, baseCount: Int) -> Bool {
        guard deletes > Self.alwaysAllowed else { return false }
        return Double(deletes) > Double(baseCount) * maximumPercent / 100
    }

    /// Parses `--max-delete N%` (the `%` is optional).
    package static func parsePercent(_ text: String) -> Double? {
        let number = text.hasSuffix("%") ? String(text.dropLast()) : text
        guard let value = Double(number), value >= 0, value <= 100 else { return nil }
        return value
    }
}
