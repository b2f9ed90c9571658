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
    /// The document left the scope: drop the base entry, keep the file.
    case leaveScope
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
    /// `seed`: write the record whatever the document holds (no precondition).
    case overwrite
    /// `seed --delete`: delete the document if it exists (no precondition).
    case remove
}

/// A pull or push action: what the mass-delete guard counts, what a dry run
/// reports for it, and which actions a plan keeps in a byte.
package protocol PlanAction: Sendable, Equatable {
    /// True for an action that deletes the record (a local file for pull, a
    /// remote document for push).
    var isDelete: Bool { get }
    /// The event a dry run reports for the step.
    var plannedKind: SyncEventKind { get }
    /// The actions without a payload, which a plan keeps as one byte each
    /// (at most 255); the others are kept whole beside them.
    static var packedActions: [Self] { get }
}

extension PullAction: PlanAction {
    /// Removing the local file (deleted remotely, or `--theirs`).
    package var isDelete: Bool { self == .delete }

    /// A conflict as a conflict, the rest as pulled.
    package var plannedKind: SyncEventKind {
        if case .conflict(let kind) = self { return .conflict(kind) }
        return .pulled(self)
    }

    /// Every action but a merge and a conflict.
    package static let packedActions: [PullAction] = [.write, .delete, .adopt, .forget, .leaveScope, .keepLocal]
}

extension PushAction: PlanAction {
    /// Deleting the remote document.
    package var isDelete: Bool {
        switch self {
        case .delete, .remove: true
        default: false
        }
    }

    /// Pushed; a seed's steps as seeded.
    package var plannedKind: SyncEventKind {
        switch self {
        case .overwrite: .seeded(deleted: false)
        case .remove: .seeded(deleted: true)
        default: .pushed(self)
        }
    }

    /// Every action but an update and a delete, which carry a revision.
    package static let packedActions: [PushAction] = [.create, .adopt, .forget, .overwrite, .remove]
}
