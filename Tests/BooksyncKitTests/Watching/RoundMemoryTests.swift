import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@testable import BooksyncKit

/// What a watch remembers between rounds: lingering findings told once while
/// they repeat, failures once per direction, deletions added up.
struct RoundMemoryTests {
    static func id(_ name: String) -> RecordID { try! RecordID(name) }

    static func report(_ command: SyncPhase, _ events: [SyncEvent]) -> SyncReport {
        var all = SyncEvents()
        all += events
        return SyncReport(command: command, dryRun: false, events: all, unusableFiles: [], unusableRemote: [])
    }

    @Test func aLingeringConflictIsToldOnceWhileItRepeats() {
        var memory = RoundMemory()
        let conflict = SyncEvent(id: Self.id("b1"), kind: .pulled(.conflict(.bothModified(fields: [FieldPath(field: "title")]))))
        let write = SyncEvent(id: Self.id("a1"), kind: .pulled(.write))
        let first = memory.succeeded(Self.report(.pull, [conflict, write]))
        #expect(first.events.count == 2)
        let second = memory.succeeded(Self.report(.pull, [conflict, write]))
        #expect(Array(second.events) == [write], "the write is news, the conflict is not")
        let push = memory.succeeded(Self.report(.push, [SyncEvent(id: Self.id("b1"), kind: .remoteChangedSincePull)]))
        #expect(push.events.count == 1, "each direction remembers its own")
        _ = memory.succeeded(Self.report(.pull, []))
        let again = memory.succeeded(Self.report(.pull, [conflict]))
        #expect(again.events.count == 1, "told again after it went away")
    }

    @Test func failuresAreToldOncePerDirection() {
        var memory = RoundMemory()
        let offline = BooksyncError.lockHeld(path: "/c/.booksync/lock", pid: 7)
        var told: [Bool] = []
        told.append(memory.isNewFailure(.push, offline))
        told.append(memory.isNewFailure(.pull, offline))
        told.append(memory.isNewFailure(.push, offline))
        _ = memory.succeeded(Self.report(.pull, []))
        // A pull that ran says nothing about the push; the pull's failure is news again.
        told.append(memory.isNewFailure(.push, offline))
        told.append(memory.isNewFailure(.pull, offline))
        #expect(told == [true, true, false, false, true])
    }

    @Test func deletionsAddUpPerDirection() {
        var memory = RoundMemory()
        _ = memory.succeeded(Self.report(.push, [SyncEvent(id: Self.id("a"), kind: .pushed(.delete(baseRevision: "r1"))),
                                                          SyncEvent(id: Self.id("b"), kind: .pushed(.update(baseRevision: "r2")))]))
        _ = memory.succeeded(Self.report(.push, [SyncEvent(id: Self.id("c"), kind: .pushed(.delete(baseRevision: "r3")))]))
        _ = memory.succeeded(Self.report(.pull, [SyncEvent(id: Self.id("d"), kind: .pulled(.delete))]))
        #expect(memory.deletes[.push] == 2)
        #expect(memory.deletes[.pull] == 1)
    }
}
