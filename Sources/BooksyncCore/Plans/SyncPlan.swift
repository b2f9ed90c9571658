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
/// before anything is written or sent, and held packed: a plan of a million
/// records is not a million values. An entry is a record the command acts on
/// (a step) or only reports; its id is front-coded (`PackedRecordIDs`), and
/// its action a byte when it carries no payload (`PlanAction.packedActions`:
/// a creation, a pull's write or delete…); an action with one (push's update
/// or delete and its revision, a merge, a conflict) and most reported
/// records are kept whole beside them.
///
/// Steps are cut into chunks as they are added: the engine applies or sends
/// one chunk at a time, writing what came out differently into an
/// `ExecutionLog`, and the report is the view of the two (`takeReport`); a
/// dry run's report is the plan's view alone.
package struct SyncPlan<Action: PlanAction>: Sendable {
    /// The record of each entry, in the order planned.
    private var ids = PackedRecordIDs()
    /// Per entry: 1 + the action's index in `Action.packedActions`, then
    /// the reported kinds of `packedReports`; 0 for an entry in `unpacked`.
    private var codes: [UInt8] = []
    /// The entries that are not a byte (steps with a payload, most reported
    /// records), by index, in blocks of 4,096 indexes (`blockShift`): the
    /// report frees each block once it has made its events (`takeReport`).
    private var unpacked: [[Int: Entry]] = []
    private static var blockShift: Int { 12 }
    /// Reported kinds without a payload, kept as a byte (a push of a scoped
    /// collection may report every new file outside the scope).
    private static var packedReports: [SyncEventKind] { [.outsideScope] }
    /// The steps in groups of at most `chunkSize`, as index ranges of the
    /// entries (a range may also hold reported entries between its steps).
    package private(set) var chunks: [Range<Int>] = []
    /// How many steps the plan holds.
    package private(set) var steps = 0
    /// How many steps delete a record: what the mass-delete guard counts.
    package private(set) var deletes = 0
    private let chunkSize: Int
    private var chunkStart = 0
    private var inChunk = 0

    private enum Entry: Sendable {
        case step(Action)
        case reported(SyncEventKind)

        var plannedKind: SyncEventKind {
            switch self {
            case .step(let action): action.plannedKind
            case .reported(let kind): kind
            }
        }
    }

    /// An empty plan whose steps are chunked `chunkSize` at a time.
    package init(chunkSize: Int = .max) {
        self.chunkSize = max(1, chunkSize)
    }

    /// How many records the plan acts on or reports.
    package var count: Int { codes.count }

    /// Adds what the planner made of one record (in id order).
    package mutating func add(_ planned: PlannedRecord<Action>) {
        switch planned {
        case .step(let step):
            ids.append(step.id)
            if let code = Action.packedActions.firstIndex(of: step.action) {
                codes.append(UInt8(code + 1))
            } else {
                appendUnpacked(.step(step.action))
            }
            steps += 1
            if step.action.isDelete { deletes += 1 }
            inChunk += 1
            if inChunk == chunkSize { closeChunk() }
        case .reported(let event):
            ids.append(event.id)
            if let code = Self.packedReports.firstIndex(of: event.kind) {
                codes.append(UInt8(Action.packedActions.count + code + 1))
            } else {
                appendUnpacked(.reported(event.kind))
            }
        case .nothing:
            break
        }
    }

    /// Ends the plan: the last, shorter chunk is closed.
    package mutating func finish() {
        if inChunk > 0 { closeChunk() }
    }

    /// The record of the entry at `index`.
    package func id(at index: Int) -> RecordID { ids[index] }

    /// The step at `index`; nil for a reported record.
    package func step(at index: Int) -> PlanStep<Action>? {
        action(at: index).map { PlanStep(id: ids[index], action: $0) }
    }

    /// The steps of `chunk` with their indexes, in order (each id decoded once).
    package func indexedSteps(in chunk: Range<Int>) -> [(index: Int, step: PlanStep<Action>)] {
        var result: [(index: Int, step: PlanStep<Action>)] = []
        guard !chunk.isEmpty else { return result }
        result.reserveCapacity(chunk.count)
        for (index, id) in zip(chunk, ids.ids(in: chunk)) {
            if let action = action(at: index) { result.append((index, PlanStep(id: id, action: action))) }
        }
        return result
    }

    /// The steps of `chunk`, in order.
    package func steps(in chunk: Range<Int>) -> [PlanStep<Action>] {
        indexedSteps(in: chunk).map(\.step)
    }

    /// What a dry run reports for the entry at `index`.
    package func plannedKind(at index: Int) -> SyncEventKind {
        entry(at: index).plannedKind
    }

    /// The report of the plan carried out as `log` says: each entry's event,
    /// the outcome the log holds where it differs from the plan. Moved out
    /// (the plan is left empty): the ids become the report's without a copy,
    /// and each block of unpacked entries is freed once its events are made,
    /// so a million payloads are not held twice.
    package mutating func takeReport(_ log: ExecutionLog = ExecutionLog()) -> SyncEvents {
        let (ids, codes) = (self.ids, self.codes)
        var blocks: [[Int: Entry]] = []
        swap(&blocks, &unpacked)
        self = SyncPlan(chunkSize: chunkSize)
        var kinds = ReportKinds(codes: codes, blocks: blocks, log: log)
        blocks = []
        return SyncEvents(ids: ids, kinds: AnyIterator { kinds.next() })
    }

    /// The kinds of a report, entry by entry, freeing each block of unpacked
    /// entries once past it.
    private struct ReportKinds {
        let codes: [UInt8]
        var blocks: [[Int: Entry]]
        let log: ExecutionLog
        var index = 0

        mutating func next() -> SyncEventKind? {
            guard index < codes.count else { return nil }
            defer {
                index += 1
                let block = (index - 1) >> SyncPlan.blockShift
                if index >> SyncPlan.blockShift != block, block < blocks.count { blocks[block] = [:] }
            }
            if let outcome = log[index] { return outcome }
            let code = Int(codes[index])
            if let packed = SyncPlan.packedEntry(code) { return packed.plannedKind }
            return blocks[index >> SyncPlan.blockShift][index]!.plannedKind
        }
    }

    private func action(at index: Int) -> Action? {
        if case .step(let action) = entry(at: index) { return action }
        return nil
    }

    private func entry(at index: Int) -> Entry {
        SyncPlan.packedEntry(Int(codes[index])) ?? unpacked[index >> Self.blockShift][index]!
    }

    /// The entry a nonzero code stands for; nil for 0 (an unpacked entry).
    private static func packedEntry(_ code: Int) -> Entry? {
        guard code > 0 else { return nil }
        let actions = Action.packedActions
        return code <= actions.count ? .step(actions[code - 1]) : .reported(packedReports[code - actions.count - 1])
    }

    private mutating func appendUnpacked(_ entry: Entry) {
        let index = codes.count
        let block = index >> Self.blockShift
        while unpacked.count <= block { unpacked.append([:]) }
        unpacked[block][index] = entry
        codes.append(0)
    }

    private mutating func closeChunk() {
        chunks.append(chunkStart..<codes.count)
        chunkStart = codes.count
        inChunk = 0
    }
}

/// What carrying out a plan did, entry by entry: as planned, unless this log
/// holds another outcome for it (a write the server refused, a file changed
/// meanwhile). Nearly every step goes as planned, so the log holds only the
/// others, by the entry's index in the plan.
package struct ExecutionLog: Sendable {
    private var differing: [Int: SyncEventKind] = [:]

    /// A log where everything went as planned.
    package init() {}

    /// Records that the entry at `index` of `plan` ended as `outcome`.
    package mutating func record<Action>(_ outcome: SyncEventKind, at index: Int, of plan: SyncPlan<Action>) {
        if outcome == plan.plannedKind(at: index) {
            differing[index] = nil
        } else {
            differing[index] = outcome
        }
    }

    /// The outcome of the entry at `index`, when it differs from the plan.
    package subscript(index: Int) -> SyncEventKind? { differing[index] }
}

/// A step of a pull plan.
package typealias PullStep = PlanStep<PullAction>
/// A step of a push plan.
package typealias PushStep = PlanStep<PushAction>
/// What a pull will do.
package typealias PullPlan = SyncPlan<PullAction>
/// What a push will do.
package typealias PushPlan = SyncPlan<PushAction>
