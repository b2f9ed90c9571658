import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

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

    /// The base summary holds no entries: a poll's documents are checked by
    /// binary search in the manifest, at their base revision or not; a count
    /// off by one, an unusable document, or a manifest not as booksync writes
    /// it leaves the decision to the pull; only a poll of held documents moves
    /// the watch's own mark on.
    @Test func theBaseSummaryFindsRevisionsInTheFile() async throws {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("clean")
        let collection = try CollectionDirectory.open(searchingFrom: root)
        let remote = ScriptedRemote()
        let mark = ChangeMark(field: "updatedAt", time: try Timestamp(rfc3339: "2024-05-01T10:00:00Z"))
        var manifest = try collection.manifestFile.load()
        manifest.changesSince = mark
        let ids = Array(manifest.entries.keys)
        try FileSystem.writeAtomically(manifest.encoded(), to: collection.paths.manifest)
        func found(_ revisions: [RecordID: String], count: Int? = nil) -> RemoteChanges {
            RemoteChanges(documents: revisions.reduce(into: [:]) { $0[$1.key] = RemoteDocument(id: $1.key, revision: $1.value, content: .invalid([])) },
                          count: count, readTime: "2024-06-01T00:00:00.000000Z")
        }
        var summary = BaseSummary()
        let loaded = summary.base(collection, remote: remote)
        let head = try #require(loaded)
        #expect(head.count == ids.count && head.canonical && summary.mark(of: head) == mark)
        let held = Dictionary(uniqueKeysWithValues: ids.map { ($0, manifest.entries[$0]!.revision) })
        let held1 = summary.holdsEverything(found([ids[0]: "2099-01-01T00:00:00.000001Z"]), base: head, manifestPath: collection.paths.manifest, field: "updatedAt")
        #expect(!held1)
        let held2 = summary.holdsEverything(found([Self.id("new"): "2024-01-01T00:00:00.000001Z"]), base: head, manifestPath: collection.paths.manifest, field: "updatedAt")
        #expect(!held2)
        let held3 = summary.holdsEverything(found(held, count: ids.count + 1), base: head, manifestPath: collection.paths.manifest, field: "updatedAt")
        #expect(!held3)
        #expect(summary.mark(of: head) == mark, "no mark moves on a poll that found something new")
        let held4 = summary.holdsEverything(found(held, count: ids.count), base: head, manifestPath: collection.paths.manifest, field: "updatedAt")
        #expect(held4)
        #expect(summary.mark(of: head).time > mark.time)
        // The same entries, written by hand on one line: not searched, the pull decides.
        let oneLine = String(decoding: manifest.encoded(), as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
        try FileSystem.writeAtomically(Array(oneLine.utf8), to: collection.paths.manifest)
        var fresh = BaseSummary()
        let reloaded = fresh.base(collection, remote: remote)
        let handWritten = try #require(reloaded)
        #expect(!handWritten.canonical)
        let held5 = fresh.holdsEverything(found(held), base: handWritten, manifestPath: collection.paths.manifest, field: "updatedAt")
        #expect(!held5)
        let held6 = fresh.holdsEverything(found([:], count: ids.count), base: handWritten, manifestPath: collection.paths.manifest, field: "updatedAt")
        #expect(held6)
    }
}
