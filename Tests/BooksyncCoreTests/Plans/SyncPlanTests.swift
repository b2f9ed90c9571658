import Testing
@testable import BooksyncCore

/// The packed plan holds each step exactly as planned, and its report is
/// the plan's view with the outcomes an `ExecutionLog` holds in place of
/// the planned ones.
@Suite struct SyncPlanTests {
    static let problem = RecordDiagnostic(position: SourcePosition(line: 1, column: 1), message: "expected '{'")

    /// Every pull action, packed in a byte or kept whole.
    static let pullActions: [PullAction] = [
        .write, .delete, .adopt, .forget, .leaveScope, .keepLocal,
        .merge(["id": .string("m"), "title": .string("T")]),
        .conflict(.bothModified(fields: [FieldPath(field: "title")])), .conflict(.bothAdded),
        .conflict(.modifiedLocallyDeletedRemotely), .conflict(.deletedLocallyModifiedRemotely), .conflict(.remoteContentUnknown),
    ]
    /// Every push action.
    static let pushActions: [PushAction] = [
        .create, .update(baseRevision: "r1"), .delete(baseRevision: "r2"), .adopt, .forget, .overwrite, .remove,
    ]

    /// A plan of `actions`, one record each (`r00`, `r01`, …), with a
    /// reported record after every third step.
    static func plan<Action: PlanAction>(_ actions: [Action], chunkSize: Int = .max) throws -> SyncPlan<Action> {
        var plan = SyncPlan<Action>(chunkSize: chunkSize)
        for (n, action) in actions.enumerated() {
            plan.add(.step(PlanStep(id: try RecordID("r" + (n < 10 ? "0" : "") + String(n)), action: action)))
            if n % 3 == 2 { plan.add(.reported(SyncEvent(id: try RecordID("r\(n)-bad"), kind: .invalidLocal([problem])))) }
        }
        plan.finish()
        return plan
    }

    /// What the plan holds, entry by entry: each step's action, or nil.
    static func actions<Action>(_ plan: SyncPlan<Action>) -> [Action?] {
        (0..<plan.count).map { plan.step(at: $0)?.action }
    }

    @Test func everyPullActionComesBackExactly() throws {
        let plan = try Self.plan(Self.pullActions, chunkSize: 5)
        #expect(Self.actions(plan).compactMap { $0 } == Self.pullActions)
        #expect(plan.chunks.flatMap { plan.steps(in: $0).map(\.action) } == Self.pullActions)
        #expect(plan.steps == Self.pullActions.count && plan.count == Self.pullActions.count + 4)
        #expect(plan.deletes == 1)
        for index in 0..<plan.count {
            #expect(plan.plannedKind(at: index) == plan.step(at: index)?.action.plannedKind ?? .invalidLocal([Self.problem]))
        }
    }

    @Test func everyPushActionComesBackExactly() throws {
        let plan = try Self.plan(Self.pushActions, chunkSize: 2)
        #expect(Self.actions(plan).compactMap { $0 } == Self.pushActions)
        #expect(plan.chunks.flatMap { plan.indexedSteps(in: $0).map(\.step.action) } == Self.pushActions)
        #expect(plan.deletes == 2)
        #expect(plan.plannedKind(at: 0) == .pushed(.create) && plan.plannedKind(at: 3) == .invalidLocal([Self.problem]))
    }

    /// A dry run's report is the plan's view; a run's is the same with the
    /// log's outcomes in place, an outcome equal to the plan leaving none.
    @Test func theReportIsThePlanWithTheOutcomesThatDiffered() throws {
        var dry = try Self.plan(Self.pushActions)
        let planned = (0..<dry.count).map { SyncEvent(id: dry.id(at: $0), kind: dry.plannedKind(at: $0)) }
        #expect(Array(dry.takeReport()) == planned)
        #expect(dry.count == 0 && dry.steps == 0 && dry.chunks.isEmpty, "the report took the plan's entries")

        var plan = try Self.plan(Self.pushActions)
        var log = ExecutionLog()
        log.record(.remoteChangedSincePull, at: 1, of: plan)
        log.record(.pushed(.create), at: 0, of: plan)  // as planned: nothing to hold
        log.record(.rejected("refused"), at: 2, of: plan)
        log.record(.pushed(.delete(baseRevision: "r2")), at: 2, of: plan)  // settled as planned after all
        #expect(log[0] == nil && log[1] == .remoteChangedSincePull && log[2] == nil)
        var expected = planned
        expected[1] = SyncEvent(id: planned[1].id, kind: .remoteChangedSincePull)
        #expect(Array(plan.takeReport(log)) == expected)
    }

    /// Past several blocks of unpacked entries (the report frees each once
    /// past it), with reported records kept as a byte and as a payload.
    @Test func aLargePlanReportsEveryEntryAcrossBlocks() throws {
        var plan = PushPlan(chunkSize: 500)
        var expected: [SyncEvent] = []
        for n in 0..<10_000 {
            let id = try RecordID("r" + String(100_000 + n))
            switch n % 7 {
            case 0:
                plan.add(.reported(SyncEvent(id: id, kind: .outsideScope)))
                expected.append(SyncEvent(id: id, kind: .outsideScope))
            case 1:
                plan.add(.reported(SyncEvent(id: id, kind: .invalidLocal([Self.problem]))))
                expected.append(SyncEvent(id: id, kind: .invalidLocal([Self.problem])))
            case 2, 3:
                plan.add(.step(PushStep(id: id, action: .create)))
                expected.append(SyncEvent(id: id, kind: .pushed(.create)))
            default:
                plan.add(.step(PushStep(id: id, action: .update(baseRevision: "v\(n)"))))
                expected.append(SyncEvent(id: id, kind: .pushed(.update(baseRevision: "v\(n)"))))
            }
        }
        plan.finish()
        #expect(plan.step(at: 9_993)?.action == .update(baseRevision: "v9993"), "a payload step in the last block")
        var log = ExecutionLog()
        for index in [4, 4_100, 8_200] {
            log.record(.remoteChangedSincePull, at: index, of: plan)
            expected[index] = SyncEvent(id: expected[index].id, kind: .remoteChangedSincePull)
        }
        #expect(Array(plan.takeReport(log)) == expected)
    }

    /// A range of packed ids decodes as the same range of the array, from
    /// any restart and across several.
    @Test(arguments: [0..<0, 0..<1, 0..<40, 3..<4, 15..<17, 16..<32, 5..<39, 39..<40])
    func idsOfARangeAreTheArraysSlice(range: Range<Int>) throws {
        let ids = try (0..<40).map { try RecordID("book-\($0 * 7)") }
        var packed = PackedRecordIDs()
        for id in ids { packed.append(id) }
        #expect(packed.ids(in: range) == Array(ids[range]))
    }
}
