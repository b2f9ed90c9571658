import Foundation
import Synchronization
import Testing
import BooksyncCodable
import BooksyncCore
import BooksyncKit
import BooksyncStore
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

    /// A view model on the main actor awaits the store; the store's work
    /// (here: the engine calling the remote) never runs on the main actor's thread.
    @MainActor @Test func aMainActorViewModelAwaitsTheStoreWithoutRunningItsWork() async throws {
        @MainActor final class ShelfModel {
            let store: RecordStore<ShelfBook>
            var books: [ShelfBook] = []
            var threads: [String] = []
            init(store: RecordStore<ShelfBook>) { self.store = store }
            func refresh() async throws {
                threads.append(ThreadRecordingRemote.currentThread())
                _ = try await store.pull()
                threads.append(ThreadRecordingRemote.currentThread())
                books = try await store.all()
                threads.append(ThreadRecordingRemote.currentThread())
            }
        }
        let workspace = try StoreWorkspace()
        let remote = ThreadRecordingRemote(ScriptedRemote(documents: [try workspace.document("dune", Self.dune, revision: "r1")]))
        let model = ShelfModel(store: RecordStore(directory: workspace.root) { _ in remote })
        try await model.refresh()
        #expect(model.books.map(\.id) == ["dune"])
        let mainActorThread = try #require(model.threads.first)
        #expect(model.threads == Array(repeating: mainActorThread, count: 3), "the main actor stays on its thread")
        let remoteThreads = remote.threads.withLock { $0 }
        #expect(!remoteThreads.isEmpty && !remoteThreads.contains(mainActorThread), "\(remoteThreads) vs \(mainActorThread)")
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
        let lock = try CollectionLock.acquire(at: workspace.collection.paths.lock)
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

/// A remote that notes the thread each call runs on, around a `ScriptedRemote`.
final class ThreadRecordingRemote: RemoteCollection {
    let inner: ScriptedRemote
    let threads = Mutex<[String]>([])
    var displayName: String { inner.displayName }

    init(_ inner: ScriptedRemote) { self.inner = inner }

    static func currentThread() -> String { String(describing: pthread_self()) }

    private func note() { threads.withLock { $0.append(Self.currentThread()) } }

    func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
        note()
        return try await inner.listRevisions(progress: progress)
    }

    func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                       progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
        note()
        try await inner.listDocuments(batch: batch, progress: progress)
    }

    func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument] {
        note()
        return try await inner.fetch(ids, progress: progress)
    }

    func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        note()
        return try await inner.write(writes, atomic: atomic, progress: progress)
    }
}
