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

/// A pull or push action: what the mass-delete guard counts, and how a plan
/// holds it packed as the event a dry run reports for it.
package protocol PlanAction: Sendable, Equatable {
    /// True for an action that deletes the record (a local file for pull, a
    /// remote document for push).
    var isDelete: Bool { get }
    /// The event a dry run reports for the step, which is also how a plan keeps it.
    var plannedKind: SyncEventKind { get }
    /// The action a plan keeps as `kind`; nil for an event that is no step of this command.
    init?(plannedKind kind: SyncEventKind)
}

extension PullAction: PlanAction {
    /// Removing the local file (deleted remotely, or `--theirs`).
    package var isDelete: Bool { self == .delete }

    /// A conflict as a conflict, the rest as pulled.
    package var plannedKind: SyncEventKind {
        if case .conflict(let kind) = self { return .conflict(kind) }
        return .pulled(self)
    }

    /// From `.pulled(action)` or `.conflict(kind)`.
    package init?(plannedKind kind: SyncEventKind) {
        switch kind {
        case .pulled(let action): self = action
        case .conflict(let conflict): self = .conflict(conflict)
        default: return nil
        }
    }
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

    /// From `.pushed(action)` or `.seeded(deleted:)`.
    package init?(plannedKind kind: SyncEventKind) {
        switch kind {
        case .pushed(let action): self = action
        case .seeded(let deleted): self = deleted ? .remove : .overwrite
        default: return nil
        }
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

    /// What a dry run reports for this step.
    package var dryRunEvent: SyncEvent { SyncEvent(id: id, kind: action.plannedKind) }
}

/// What the planner makes of one record: a step, an event to report, or nothing.
package enum PlannedRecord<Action: PlanAction>: Sendable, Equatable {
    /// The command changes the record.
    case step(PlanStep<Action>)
    /// The command only reports the record (an invalid file or document).
    case reported(SyncEvent)
    /// Nothing to do or say.
    case nothing
}

/// Everything a pull or push will do, decided record by record in id order
/// before anything is written or sent, and held packed: one event per record
/// the command acts on or reports (`SyncEvents`, a few bytes each), so a plan
/// of a million records is not a million steps. A step is kept as the event
/// a dry run reports for it (`PlanAction.plannedKind`); a record that is only
/// reported, as its event. Steps are cut into chunks as they are added: the
/// engine applies or sends one chunk at a time, and the report is these
/// events with the kinds of the outcomes that differ from the plan.
package struct SyncPlan<Action: PlanAction>: Sendable {
    /// One per record acted on or reported, in the order planned.
    package private(set) var events = SyncEvents()
    /// The steps in groups of at most `chunkSize`, as index ranges of `events`
    /// (a range may also hold reported events between its steps).
    package private(set) var chunks: [Range<Int>] = []
    /// How many steps the plan holds.
    package private(set) var steps = 0
    /// How many steps delete a record: what the mass-delete guard counts.
    package private(set) var deletes = 0
    private let chunkSize: Int
    private var chunkStart = 0
    private var inChunk = 0

    /// An empty plan whose steps are chunked `chunkSize` at a time.
    package init(chunkSize: Int = .max) {
        self.chunkSize = max(1, chunkSize)
    }

    /// Adds what the planner made of one record (in id order).
    package mutating func add(_ planned: PlannedRecord<Action>) {
        switch planned {
        case .step(let step):
            events.append(step.dryRunEvent)
            steps += 1
            if step.action.isDelete { deletes += 1 }
            inChunk += 1
            if inChunk == chunkSize { closeChunk() }
        case .reported(let event):
            // A reported event that read as a step would be carried out.
            precondition(Action(plannedKind: event.kind) == nil, "a reported event that reads as a step")
            events.append(event)
        case .nothing:
            break
        }
    }

    /// The step kept at `index` of `events`; nil for a reported record.
    package func step(at index: Int) -> PlanStep<Action>? {
        let event = events[index]
        return Action(plannedKind: event.kind).map { PlanStep(id: event.id, action: $0) }
    }

    /// The steps of `chunk`, in order.
    package func steps(in chunk: Range<Int>) -> [PlanStep<Action>] {
        chunk.compactMap { step(at: $0) }
    }

    /// Ends the plan: the last, shorter chunk is closed.
    package mutating func finish() {
        if inChunk > 0 { closeChunk() }
    }

    /// The events, moved out (the plan keeps none): the report changes them
    /// in place instead of in a copy.
    package mutating func takeEvents() -> SyncEvents {
        defer { events = SyncEvents() }
        return events
    }

    private mutating func closeChunk() {
        chunks.append(chunkStart..<events.count)
        chunkStart = events.count
        inChunk = 0
    }
}

/// A step of a pull plan.
package typealias PullStep = PlanStep<PullAction>
/// A step of a push plan.
package typealias PushStep = PlanStep<PushAction>
/// What a pull will do.
package typealias PullPlan = SyncPlan<PullAction>
/// What a push will do.
package typealias PushPlan = SyncPlan<PushAction>

/// The mass-delete safety rail (the manual's Safety article).
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
