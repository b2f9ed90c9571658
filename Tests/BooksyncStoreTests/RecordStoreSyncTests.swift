import Foundation
import Synchronization
import Testing
import BooksyncCodable
import BooksyncCore
@_spi(Remote) import BooksyncKit
@_spi(Remote) import BooksyncStore
import BooksyncTestSupport

/// The engine's status, pull and push through the store, and the store's
/// promises about threads: never on the main actor, one write or sync at a time.
@Suite struct RecordStoreSyncTests {
    static let dune = #"{"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "science fiction", "pages": 412, "published": {"$timestamp": "1965-08-01T00:00:00.000000Z"}}"#

    @Test func pullStatusAndPushReportWhatTheEngineDid() async throws {
        let workspace = try StoreWorkspace()
        let remote = ScriptedRemote(documents: [try workspace.document("dune", Self.dune, revision: "r7")])
        let store = RecordStore<ShelfBook>(directory: workspace.root) { _ in remote }

        let status = try await store.status()
        #expect(status.records.map(\.id.rawValue) == ["dune"] && status.records.map(\.state) == [.remoteChange(.added)])
        let pulled = try await store.pull()
        #expect(try pulled.command == .pull && pulled.events == [SyncEvent(id: RecordID("dune"), kind: .pulled(.write))])
        let dune = try #require(try await store.get("dune"))
        #expect(dune.pages == 412 && dune.published == Date(timeIntervalSince1970: -139_449_600))

        try await store.save(ShelfBook.sample("solaris", title: "Solaris"))
        let local = try await store.status(offline: true)
        #expect(local.records.map(\.id.rawValue) == ["solaris"] && local.records.map(\.state) == [.localChange(.added)])
        let pushed = try await store.push()
        #expect(try pushed.command == .push && pushed.events == [SyncEvent(id: RecordID("solaris"), kind: .pushed(.create))])
        #expect(remote.chunks.withLock { $0 } == [["solaris"]])
        #expect(try await store.status(offline: true).isClean)
    }

    @Test func aRemoteChangeMergesWithASaveOfAnotherField() async throws {
        let workspace = try StoreWorkspace()
        let first = ScriptedRemote(documents: [try workspace.document("dune", Self.dune, revision: "r1")])
        _ = try await RecordStore<ShelfBook>(directory: workspace.root) { _ in first }.pull()
        var dune = try #require(try await workspace.store().get("dune"))
        dune.rating = 4.5
        try await workspace.store().save(dune)
        let changed = Self.dune.replacingOccurrences(of: "412", with: "896")
        let second = ScriptedRemote(documents: [try workspace.document("dune", changed, revision: "r2")])
        let store = RecordStore<ShelfBook>(directory: workspace.root) { _ in second }
        let report = try await store.pull()
        guard case .pulled(.merge)? = report.events.first?.kind else {
            Issue.record("not merged: \(report.events)")
            return
        }
        let merged = try #require(try await store.get("dune"))
        #expect(merged.rating == 4.5 && merged.pages == 896)
    }

    /// A view model on the main actor awaits the store, and the store's work
    /// never holds the main actor: the remote's calls (made by the engine) and
    /// the decoding of every record (the store's file work) each block until a
    /// job on the main actor has run, which could never happen on the main actor.
    @MainActor @Test func aMainActorViewModelAwaitsTheStoreWhichNeverHoldsTheMainActor() async throws {
        @MainActor final class ShelfModel {
            let store: RecordStore<ProbedBook>
            var books: [ProbedBook] = []
            init(store: RecordStore<ProbedBook>) { self.store = store }
            func refresh() async throws {
                _ = try await store.pull()
                books = try await store.all()
            }
        }
        let workspace = try StoreWorkspace()
        let probe = MainActorProbe()
        let remote = ProbingRemote(ScriptedRemote(documents: [try workspace.document("dune", Self.dune, revision: "r1")]), probe: probe)
        let model = ShelfModel(store: RecordStore(directory: workspace.root) { _ in remote })
        try await model.refresh()
        #expect(model.books.map(\.id) == ["dune"])
        let remoteProbes = probe.results.withLock { $0 }
        let decodingProbes = ProbedBook.probe.results.withLock { $0 }
        #expect(!remoteProbes.isEmpty && !remoteProbes.contains(false), "\(remoteProbes)")
        #expect(!decodingProbes.isEmpty && !decodingProbes.contains(false), "\(decodingProbes)")

        // The probe itself, run on the main actor, finds it held.
        let control = MainActorProbe()
        control.check(waiting: .milliseconds(200))
        #expect(control.results.withLock { $0 } == [false])
    }

    /// A save during a pull waits for it instead of finding the collection
    /// lock held by its own process; every call completes.
    @Test func writesAndSyncsCalledTogetherRunOneAtATime() async throws {
        let workspace = try StoreWorkspace()
        let documents = try (0..<20).map { i in
            try workspace.document("r\(i)", #"{"id": "r\#(i)", "title": "T", "author": "A", "genre": "g"}"#, revision: "r1")
        }
        let remote = ScriptedRemote(documents: documents, delay: .milliseconds(20), listingBatch: 5)
        let store = RecordStore<ShelfBook>(directory: workspace.root) { _ in remote }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await store.pull() }
            for i in 0..<8 {
                group.addTask { try await store.save(ShelfBook.sample("saved-\(i)")) }
            }
            group.addTask { _ = try await store.status(offline: true) }
            try await group.waitForAll()
        }
        #expect(try await store.all().count == 28)
    }

    /// Another process (the CLI) holding the lock: the store's save fails with
    /// the engine's sentence and writes nothing, as a second CLI command would.
    @Test func aLockHeldElsewhereRefusesTheSave() async throws {
        let workspace = try StoreWorkspace()
        let lock = try await CollectionLock.acquire(at: workspace.collection.paths.lock)
        defer { lock.release() }
        await #expect { try await workspace.store().save(ShelfBook.sample()) } throws: { error in
            guard case RecordStoreError.collection(.lockHeld) = error else { return false }
            return (error as? RecordStoreError)?.description.contains(workspace.collection.paths.lock) == true
        }
        #expect(workspace.bytes("dune.json") == nil)
    }

    @Test func notACollectionIsASentence() async throws {
        let scratch = try ScratchDirectory()
        let store = RecordStore<ShelfBook>(directory: scratch.path) { _ in ScriptedRemote() }
        await #expect { try await store.all() } throws: { error in
            guard case RecordStoreError.collection(.notACollection) = error else { return false }
            return (error as? RecordStoreError)?.description.contains("not a booksync collection") == true
        }
    }
}

/// Blocks its caller until a job on the main actor has run (at most 10 s)
/// and records whether one did: called on the main actor, it never can.
final class MainActorProbe: Sendable {
    let results = Mutex<[Bool]>([])

    func check(waiting limit: Duration = .seconds(10)) {
        let ran = MainActorProbe.Flag()
        Task { @MainActor in ran.value.withLock { $0 = true } }
        let deadline = ContinuousClock.now + limit
        while !ran.value.withLock({ $0 }), ContinuousClock.now < deadline { usleep(1_000) }
        results.withLock { $0.append(ran.value.withLock { $0 }) }
    }

    final class Flag: Sendable {
        let value = Mutex(false)
    }
}

/// A DTO whose decoding, done by the store, probes the main actor.
struct ProbedBook: Codable, Sendable {
    static let probe = MainActorProbe()
    var id: String

    init(from decoder: any Decoder) throws {
        Self.probe.check()
        id = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .id)
    }
}

/// A remote that probes the main actor in every call, around a `ScriptedRemote`.
final class ProbingRemote: RemoteCollection {
    let inner: ScriptedRemote
    let probe: MainActorProbe
    var displayName: String { inner.displayName }

    init(_ inner: ScriptedRemote, probe: MainActorProbe) {
        self.inner = inner
        self.probe = probe
    }

    func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
        probe.check()
        return try await inner.listRevisions(progress: progress)
    }

    func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                       progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
        probe.check()
        try await inner.listDocuments(batch: batch, progress: progress)
    }

    func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument] {
        probe.check()
        return try await inner.fetch(ids, progress: progress)
    }

    func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        probe.check()
        return try await inner.write(writes, atomic: atomic, progress: progress)
    }
}
