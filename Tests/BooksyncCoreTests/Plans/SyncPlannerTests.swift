import Testing
@testable import BooksyncCore

/// The planner at the core level, without I/O: one row per class × conflict
/// choice, with the step or event pull and push plan for it (<doc:ThreeWaySync>,
/// the table's last two columns).
@Suite struct SyncPlannerTests {
    static let base = BaseEntry(hash: "sha256:base", revision: "r1")
    static let problem = RecordDiagnostic(position: SourcePosition(line: 2, column: 3), message: "expected ',' or '}'")
    static let baseFields: Fields = ["id": .string("x"), "title": .string("T"), "year": .integer(1)]
    /// Title conflicts; isbn added locally only, year changed remotely only.
    static let bothModified = RecordMerge(base: baseFields, local: with(["title": .string("L"), "isbn": .string("1")]),
                                          remote: with(["title": .string("R"), "year": .integer(2)]))
    /// Only the conflicting title changed locally: ours does not survive --theirs.
    static let onlyConflicting = RecordMerge(base: baseFields, local: with(["title": .string("L")]), remote: with(["title": .string("R")]))

    static func with(_ changes: Fields) -> Fields { baseFields.merging(changes) { _, new in new } }

    /// What the plan holds for the record: a step, an event, or nothing.
    enum Planned<Action: Equatable & Sendable>: Equatable, Sendable {
        case step(Action)
        case event(SyncEventKind)
        case nothing
    }

    struct PullRow: CustomTestStringConvertible, Sendable {
        let name: String
        let state: SyncState
        let choice: ConflictChoice
        /// The remote revision the classification saw (nil: absent).
        var remote: String? = "r2"
        var merge: RecordMerge? = nil
        let expected: Planned<PullAction>
        var testDescription: String { "\(name), \(choice)" }
    }

    static let pullRows: [PullRow] = [
        PullRow(name: "clean", state: .clean, choice: .ask, remote: "r1", expected: .nothing),
        PullRow(name: "local change", state: .localChange(.modified), choice: .theirs, remote: "r1", expected: .nothing),
        PullRow(name: "remote added", state: .remoteChange(.added), choice: .ask, expected: .step(.write)),
        PullRow(name: "remote modified", state: .remoteChange(.modified), choice: .ask, expected: .step(.write)),
        PullRow(name: "remote deleted", state: .remoteChange(.deleted), choice: .ask, remote: nil, expected: .step(.delete)),
        PullRow(name: "converged", state: .converged, choice: .ask, expected: .step(.adopt)),
        PullRow(name: "both deleted", state: .converged, choice: .ask, remote: nil, expected: .step(.forget)),
        PullRow(name: "mergeable", state: .mergeable(merged: ["a": .integer(1)]), choice: .ask, expected: .step(.merge(["a": .integer(1)]))),
        PullRow(name: "mergeable", state: .mergeable(merged: ["a": .integer(1)]), choice: .theirs, expected: .step(.merge(["a": .integer(1)]))),
        // conflicts: left alone unless told
        PullRow(name: "both added", state: .conflict(.bothAdded), choice: .ask, expected: .step(.conflict(.bothAdded))),
        PullRow(name: "both added", state: .conflict(.bothAdded), choice: .theirs, expected: .step(.write)),
        PullRow(name: "both added", state: .conflict(.bothAdded), choice: .ours, expected: .step(.keepLocal)),
        PullRow(name: "modified here, deleted there", state: .conflict(.modifiedLocallyDeletedRemotely), choice: .theirs, remote: nil, expected: .step(.delete)),
        PullRow(name: "modified here, deleted there", state: .conflict(.modifiedLocallyDeletedRemotely), choice: .ours, remote: nil, expected: .step(.keepLocal)),
        PullRow(name: "deleted here, modified there", state: .conflict(.deletedLocallyModifiedRemotely), choice: .theirs, expected: .step(.write)),
        PullRow(name: "deleted here, modified there", state: .conflict(.deletedLocallyModifiedRemotely), choice: .ours, expected: .step(.keepLocal)),
        // an unknown remote body is never settled on a guess
        PullRow(name: "remote unknown", state: .conflict(.remoteContentUnknown), choice: .theirs, expected: .step(.conflict(.remoteContentUnknown))),
        PullRow(name: "remote unknown", state: .conflict(.remoteContentUnknown), choice: .ours, expected: .step(.conflict(.remoteContentUnknown))),
        // --ours / --theirs decide only the conflicting fields, from the merge classification did
        PullRow(name: "fields conflict", state: .conflict(.bothModified(fields: [FieldPath(field: "title")])), choice: .ask, merge: bothModified,
                expected: .step(.conflict(.bothModified(fields: [FieldPath(field: "title")])))),
        PullRow(name: "fields conflict", state: .conflict(.bothModified(fields: [FieldPath(field: "title")])), choice: .ours, merge: bothModified,
                expected: .step(.merge(with(["title": .string("L"), "year": .integer(2), "isbn": .string("1")])))),
        PullRow(name: "fields conflict", state: .conflict(.bothModified(fields: [FieldPath(field: "title")])), choice: .theirs, merge: bothModified,
                expected: .step(.merge(with(["title": .string("R"), "year": .integer(2), "isbn": .string("1")])))),
        PullRow(name: "nothing of ours survives", state: .conflict(.bothModified(fields: [FieldPath(field: "title")])), choice: .theirs, merge: onlyConflicting,
                expected: .step(.write)),
        PullRow(name: "fields conflict, file unreadable", state: .conflict(.bothModified(fields: [FieldPath(field: "title")])), choice: .ours, expected: .step(.keepLocal)),
        // invalid sides: an event, never a step
        PullRow(name: "invalid file, remote unchanged", state: .invalidLocal([problem]), choice: .theirs, remote: "r1", expected: .nothing),
        PullRow(name: "invalid file, remote changed", state: .invalidLocal([problem]), choice: .theirs, expected: .event(.invalidLocal([problem]))),
        PullRow(name: "invalid file, remote deleted", state: .invalidLocal([problem]), choice: .ask, remote: nil, expected: .event(.invalidLocal([problem]))),
        PullRow(name: "invalid remote document", state: .invalidRemote([problem]), choice: .theirs, expected: .event(.invalidRemote([problem]))),
    ]

    @Test(arguments: pullRows)
    func pull(_ row: PullRow) throws {
        let id = try RecordID("x")
        let record = ClassifiedRecord(id: id, state: row.state, base: Self.base, remoteRevision: row.remote, merge: row.merge)
        let planned: Planned<PullAction>
        switch SyncPlanner.pull(record, choice: row.choice) {
        case .step(let step):
            #expect(step.id == id)
            planned = .step(step.action)
        case .reported(let event):
            #expect(event.id == id)
            planned = .event(event.kind)
        case .nothing:
            planned = .nothing
        }
        #expect(planned == row.expected)
    }

    struct PushRow: CustomTestStringConvertible, Sendable {
        let name: String
        let state: SyncState
        var base: BaseEntry? = SyncPlannerTests.base
        let expected: Planned<PushAction>
        var testDescription: String { name }
    }

    static let pushRows: [PushRow] = [
        PushRow(name: "clean", state: .clean, expected: .nothing),
        PushRow(name: "local added", state: .localChange(.added), base: nil, expected: .step(.create)),
        PushRow(name: "local modified", state: .localChange(.modified), expected: .step(.update(baseRevision: "r1"))),
        PushRow(name: "local deleted", state: .localChange(.deleted), expected: .step(.delete(baseRevision: "r1"))),
        PushRow(name: "remote change", state: .remoteChange(.modified), expected: .nothing),
        PushRow(name: "conflict", state: .conflict(.bothAdded), base: nil, expected: .nothing),
        PushRow(name: "mergeable", state: .mergeable(merged: [:]), expected: .nothing),
        PushRow(name: "invalid file", state: .invalidLocal([problem]), expected: .event(.invalidLocal([problem]))),
    ]

    @Test(arguments: pushRows)
    func push(_ row: PushRow) throws {
        let record = ClassifiedRecord(id: try RecordID("x"), state: row.state, base: row.base, remoteRevision: nil)
        let planned: Planned<PushAction>
        switch SyncPlanner.push(record) {
        case .step(let step): planned = .step(step.action)
        case .reported(let event): planned = .event(event.kind)
        case .nothing: planned = .nothing
        }
        #expect(planned == row.expected)
    }

    /// A plan counts its deletes, which the mass-delete guard checks, keeps
    /// every record's step or event in the order planned, and gives each
    /// step back from its packed event.
    @Test func plansCountTheirDeletes() throws {
        let ids = try ["a", "b", "c", "d"].map { try RecordID($0) }
        let pull = SyncPlanner.pull([
            ClassifiedRecord(id: ids[0], state: .remoteChange(.deleted), base: Self.base, remoteRevision: nil),
            ClassifiedRecord(id: ids[1], state: .remoteChange(.modified), base: Self.base, remoteRevision: "r2"),
            ClassifiedRecord(id: ids[2], state: .conflict(.modifiedLocallyDeletedRemotely), base: Self.base, remoteRevision: nil),
            ClassifiedRecord(id: ids[3], state: .invalidRemote([Self.problem]), base: Self.base, remoteRevision: "r2"),
        ], choice: .theirs, chunkSize: 2)
        #expect(pull.steps == 3 && pull.deletes == 2)
        #expect(pull.chunks.map { pull.steps(in: $0).map(\.id) } == [[ids[0], ids[1]], [ids[2]]])
        #expect((0..<pull.count).map(pull.id(at:)) == ids)
        #expect((0..<4).map { pull.step(at: $0)?.action } == [.delete, .write, .delete, nil])
        #expect(pull.plannedKind(at: 3) == .invalidRemote([Self.problem]))
        var push = PushPlan()
        for id in ids { push.add(SyncPlanner.push(ClassifiedRecord(id: id, state: .localChange(.deleted), base: Self.base, remoteRevision: nil))) }
        #expect(push.deletes == 4)
        #expect(PushPlan().deletes == 0)
    }

    /// Chunks hold `chunkSize` steps each, as consecutive index ranges of the
    /// entries (reported records ride in whichever chunk they fall). Steps come
    /// back from the packed plan exactly, a conflict and a merge (with its
    /// fields) included.
    @Test(arguments: [1, 2, 3, 100])
    func stepsAreChunkedAndComeBackExactly(chunkSize: Int) throws {
        let conflict = PullAction.conflict(.bothModified(fields: [FieldPath(field: "title")]))
        let merge = PullAction.merge(["id": .string("m"), "title": .string("T")])
        let planned: [PlannedRecord<PullAction>] = try [
            .step(PullStep(id: RecordID("a"), action: .write)),
            .reported(SyncEvent(id: RecordID("b"), kind: .invalidRemote([Self.problem]))),
            .step(PullStep(id: RecordID("c"), action: conflict)),
            .nothing,
            .step(PullStep(id: RecordID("d"), action: merge)),
            .reported(SyncEvent(id: RecordID("e"), kind: .invalidRemote([Self.problem]))),
        ]
        var plan = PullPlan(chunkSize: chunkSize)
        for record in planned { plan.add(record) }
        plan.finish()
        #expect((0..<plan.count).map { plan.id(at: $0).rawValue } == ["a", "b", "c", "d", "e"])
        let steps = plan.chunks.map { plan.steps(in: $0).map(\.action) }
        let all: [PullAction] = [.write, conflict, merge]
        #expect(steps == stride(from: 0, to: 3, by: chunkSize).map { Array(all[$0..<min($0 + chunkSize, 3)]) })
        #expect(plan.chunks.first?.lowerBound == 0)
        #expect(zip(plan.chunks, plan.chunks.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }, "chunks follow each other")
        #expect(plan.plannedKind(at: 2) == .conflict(.bothModified(fields: [FieldPath(field: "title")])), "a conflict step reads as the conflict")
        #expect(plan.takeReport().count == 5 && plan.count == 0)
    }

    /// `keepingRemote` is the merge with the sides swapped, without merging again.
    @Test(arguments: [
        (with(["title": .string("L")]), with(["title": .string("R"), "year": .integer(2)])),
        (baseFields.filter { $0.key != "year" }, with(["year": .integer(9)])),
        (with(["year": .integer(9)]), baseFields.filter { $0.key != "year" }),
        (with(["isbn": .string("1")]), with(["isbn": .string("2"), "title": .string("R")])),
    ])
    func keepingRemoteIsTheSwappedMerge(local: Fields, remote: Fields) {
        let merge = RecordMerge(base: Self.baseFields, local: local, remote: remote)
        #expect(!merge.conflicts.isEmpty)
        #expect(merge.keepingRemote == FieldMerge.mergeKeepingLocal(base: Self.baseFields, local: remote, remote: local).merged)
        #expect(merge.preferring(local: true) == FieldMerge.mergeKeepingLocal(base: Self.baseFields, local: local, remote: remote).merged)
    }
}
