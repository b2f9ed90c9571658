import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// A pull killed between writing files and saving the manifest: what its
/// journal (`PullJournal`) lets the next command know, and what it must not.
@Suite struct PullJournalTests {
    /// The state a pull killed mid-apply leaves: b0000 written at r2 ("New"),
    /// b0001 removed (deleted remotely), b0002 journaled but never written,
    /// and the manifest still at r1 for all three.
    static func killedPull(in scratch: ScratchDirectory) async throws -> (CollectionDirectory, [RecordID: RemoteDocument]) {
        let (collection, documents) = try await PullPipelineTests.synced(records: 3, in: scratch)
        let newer = try PullPipelineTests.document(collection, "b0000", #"{"id": "b0000", "title": "New", "author": "A", "genre": "g"}"#, revision: "r2")
        let unwritten = try PullPipelineTests.document(collection, "b0002", #"{"id": "b0002", "title": "Later", "author": "A", "genre": "g"}"#, revision: "r2")
        guard case .record(let record) = newer.content, case .record(let later) = unwritten.content else { throw CancellationError() }
        try PullJournal(paths: collection.paths).append([
            PullJournal.Entry(fileHash: record.hash, change: BaseState.copy(record, revision: "r2")),
            PullJournal.Entry(fileHash: nil, change: .forgotten(try RecordID("b0001"))),
            PullJournal.Entry(fileHash: later.hash, change: BaseState.copy(later, revision: "r2")),
        ])
        try Data(record.canonicalBytes).write(to: URL(fileURLWithPath: collection.paths.root + "/b0000.json"))
        try FileManager.default.removeItem(atPath: collection.paths.root + "/b0001.json")
        return (collection, documents)
    }

    /// A pull (a clone) killed before it put a download in place leaves the
    /// download under a swap name. The journal says it is booksync's own
    /// bytes: removed, not kept in recovered/ for the user to check (a
    /// resumed clone said to check hundreds of them). A file a pull swapped
    /// out of place is still kept.
    @Test func aKilledPullsOwnDownloadIsRemovedNotRecovered() async throws {
        let scratch = try ScratchDirectory()
        let (collection, _) = try await Self.killedPull(in: scratch)
        let unwritten = try PullPipelineTests.document(collection, "b0002", #"{"id": "b0002", "title": "Later", "author": "A", "genre": "g"}"#, revision: "r2")
        guard case .record(let later) = unwritten.content else { throw CancellationError() }
        let dead = "999999"  // beyond pid_max on Linux: never a live process
        let download = FileSystem.swapMarker + dead + "-1", swappedOut = FileSystem.swapMarker + dead + "-2"
        try Data(later.canonicalBytes).write(to: URL(fileURLWithPath: collection.paths.root + "/" + download))
        try scratch.write(swappedOut, "EDITOR SAVE")
        try await collection.lock().release()
        #expect(!FileSystem.exists(collection.paths.root + "/" + download))
        #expect(!FileSystem.exists(collection.paths.recovered + "/" + download), "booksync's own download is nothing to recover")
        #expect(try scratch.read(".booksync/recovered/" + swappedOut) == "EDITOR SAVE")
    }

    /// The app sets b0000 back to its earlier value after the kill: the file
    /// the killed pull wrote is the remote's r2, not an edit, so nothing is
    /// pushed over the app's write and the next pull brings the app's value.
    @Test func aFileTheKilledPullWroteIsNotPushedOverTheAppsLaterWrite() async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.killedPull(in: scratch)
        let b0000 = try RecordID("b0000"), b0001 = try RecordID("b0001"), b0002 = try RecordID("b0002")
        documents[b0000] = try PullPipelineTests.document(collection, "b0000", #"{"id": "b0000", "title": "T0", "author": "A", "genre": "g"}"#, revision: "r3")
        documents[b0001] = nil
        let remote = ScriptedRemote(documents: Array(documents.values))

        // A reader without the lock already sees the journal's base.
        let status = try await collection.status(remote: remote)
        #expect(status.records.contains(RecordStatus(id: b0000, state: .remoteChange(.modified))))
        #expect(!status.records.contains { $0.id == b0001 })
        #expect(!status.records.contains { $0.id == b0002 })

        let pushed = try await collection.push(remote: remote)
        #expect(remote.chunks.withLock { $0 }.isEmpty, "pushed \(pushed.events)")
        #expect(!FileSystem.exists(collection.paths.pullJournal))
        let manifest = try collection.manifestFile.load()
        #expect(manifest.entries[b0000]?.revision == "r2")
        #expect(manifest.entries[b0001] == nil)
        // Journaled but never written: the old base stays.
        #expect(manifest.entries[b0002]?.revision == "r1")

        let pulled = try await collection.pull(remote: remote)
        #expect(pulled.events == [SyncEvent(id: b0000, kind: .pulled(.write))])
        #expect(try PullPipelineTests.localFields(collection, "b0000")?["title"] == .string("T0"))
    }

    /// The app edits b0000 after the kill: a remote change to pull, not a
    /// conflict on a file nobody touched; a file edited after the kill is
    /// still an edit.
    @Test func anUntouchedFileIsNoConflictAndAnEditedOneStaysAnEdit() async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.killedPull(in: scratch)
        let b0000 = try RecordID("b0000"), b0002 = try RecordID("b0002")
        documents[b0000] = try PullPipelineTests.document(collection, "b0000", #"{"id": "b0000", "title": "App", "author": "A", "genre": "g"}"#, revision: "r3")
        documents[try RecordID("b0001")] = nil
        try scratch.write("b0002.json", #"{"id": "b0002", "title": "Mine", "author": "A", "genre": "g"}"#)
        let remote = ScriptedRemote(documents: Array(documents.values))

        let report = try await collection.pull(remote: remote)
        #expect(report.events == [SyncEvent(id: b0000, kind: .pulled(.write))])
        #expect(try PullPipelineTests.localFields(collection, "b0000")?["title"] == .string("App"))
        let status = try await collection.status(remote: remote)
        #expect(status.records == [RecordStatus(id: b0002, state: .localChange(.modified))])
    }

    /// A journal is cloned text like any state file: lines that are not
    /// entries, copies that do not match their hash, and files that are links
    /// are never taken as the remote's.
    @Test func plantedOrDamagedEntriesAreIgnored() async throws {
        let scratch = try ScratchDirectory()
        let (collection, _) = try await PullPipelineTests.synced(records: 2, in: scratch)
        let rules = collection.rules
        let target = collection.paths.root + "/b0000.json"
        let bytes = try FileSystem.readFile(target)
        let hash = SHA256.contentHash(bytes).text
        let lines = [
            "garbage",
            "W\t\(hash)\tr9",
            "W\t\(hash)\tr9\tb0000\tsha256:00\t{\"id\":\"b0000\"}",
            "D\t-\t-\t../../etc/passwd",
            "X\t-\t-\tb0000",
        ]
        for line in lines {
            let entry = Array(line.utf8).withUnsafeBufferPointer { PullJournal.entry($0, rules: rules) }
            #expect(entry == nil, "\(line)")
        }
        // A valid entry whose file is a link to the planned bytes elsewhere.
        try FileManager.default.moveItem(atPath: target, toPath: scratch.path + "/elsewhere")
        try FileManager.default.createSymbolicLink(atPath: target, withDestinationPath: scratch.path + "/elsewhere")
        let record = try rules.load(bytes, id: try RecordID("b0000")).get()
        let entry = PullJournal.Entry(fileHash: record.hash, change: BaseState.copy(record, revision: "r9"))
        #expect(!PullJournal.fileHolds(entry, paths: collection.paths, rules: rules))
        let line = try #require(PullJournal.line(entry))
        let parsed = Array(line.dropLast()).withUnsafeBufferPointer { PullJournal.entry($0, rules: rules) }
        #expect(parsed?.fileHash == record.hash && parsed?.change.id == record.id)
    }
}
