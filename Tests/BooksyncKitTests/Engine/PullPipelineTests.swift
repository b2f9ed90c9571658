import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Pull's whole pipeline (snapshot → classify → plan → guard → apply → base)
/// in-process, through an in-memory remote: which bodies are read, what is
/// written, what the base holds after a refusal or a failure, and that a file
/// edited while pull works is never overwritten.
@Suite struct PullPipelineTests {
    static let fields = #""title": "T", "author": "A", "genre": "g""#

    /// A collection of `records` records (b0000…), pushed, so the base holds
    /// them at revision r1, and a remote holding the same documents.
    static func synced(records: Int, in scratch: ScratchDirectory) async throws -> (CollectionDirectory, [RecordID: RemoteDocument]) {
        let collection = try PushPipelineTests.collection(records: records, in: scratch)
        _ = try await collection.push(remote: ScriptedRemote())
        var documents: [RecordID: RemoteDocument] = [:]
        for i in 0..<records {
            let name = String(format: "b%04d", i)
            documents[try RecordID(name)] = try document(collection, name, #"{"id": "\#(name)", "title": "T\#(i)", "author": "A", "genre": "g"}"#, revision: "r1")
        }
        return (collection, documents)
    }

    static func document(_ collection: CollectionDirectory, _ name: String, _ json: String, revision: String) throws -> RemoteDocument {
        let id = try RecordID(name)
        return RemoteDocument(id: id, revision: revision, content: .record(try collection.rules.load(Array(json.utf8), id: id).get()))
    }

    static func localFields(_ collection: CollectionDirectory, _ name: String) throws -> Fields? {
        guard let bytes = FileManager.default.contents(atPath: collection.paths.root + "/" + name + ".json") else { return nil }
        return try collection.rules.parse(Array(bytes)).get()
    }

    @Test func remoteChangesAreWrittenMergedAndDeletedReadingOnlyChangedBodies() async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.synced(records: 6, in: scratch)
        documents[try RecordID("b0000")] = try Self.document(collection, "b0000", #"{"id": "b0000", "title": "New", "author": "A", "genre": "g"}"#, revision: "r2")
        documents[try RecordID("b0001")] = nil
        documents[try RecordID("b0002")] = try Self.document(collection, "b0002", #"{"id": "b0002", "title": "T2", "author": "A", "genre": "remote"}"#, revision: "r2")
        documents[try RecordID("b0009")] = try Self.document(collection, "b0009", #"{"id": "b0009", "title": "Added", "author": "A", "genre": "g"}"#, revision: "r2")
        try scratch.write("b0002.json", #"{"id": "b0002", "title": "T2", "author": "local", "genre": "g"}"#)
        let remote = ScriptedRemote(documents: Array(documents.values))

        let report = try await collection.pull(remote: remote)

        #expect(report.command == .pull)
        let merged = try #require(try Self.localFields(collection, "b0002"))
        #expect(report.events == [
            SyncEvent(id: try RecordID("b0000"), kind: .pulled(.write)),
            SyncEvent(id: try RecordID("b0001"), kind: .pulled(.delete)),
            SyncEvent(id: try RecordID("b0002"), kind: .pulled(.merge(merged))),
            SyncEvent(id: try RecordID("b0009"), kind: .pulled(.write)),
        ])
        #expect(merged["author"] == .string("local") && merged["genre"] == .string("remote"))
        #expect(try Self.localFields(collection, "b0000")?["title"] == .string("New"))
        #expect(try Self.localFields(collection, "b0001") == nil)
        #expect(try Self.localFields(collection, "b0009")?["title"] == .string("Added"))
        // Unchanged documents' bodies are never read: each is a billed read.
        // The one changed on both sides is read to plan (to merge it); those
        // changed remotely only with the chunk that writes them.
        #expect(remote.fetches.withLock { $0 } == [[try RecordID("b0002")], [try RecordID("b0000"), try RecordID("b0009")]])
        let manifest = try collection.manifestFile.load()
        #expect(manifest.entries.count == 6)
        #expect(manifest.entries[try RecordID("b0002")]?.revision == "r2")
        #expect(manifest.entries[try RecordID("b0003")]?.revision == "r1")
        // The merge is a local change for push; nothing else is left to pull.
        let status = try await collection.status(remote: remote)
        #expect(status.records == [RecordStatus(id: try RecordID("b0002"), state: .localChange(.modified))])
    }

    /// A document listed with a new revision but deleted before its body is
    /// fetched counts as deleted remotely in status and diff alike.
    /// (Before the renovation `diff` alone kept it as "modified remotely" with
    /// unknown content: it had its own copy of the snapshot step.) Pull plans
    /// the write of a record changed remotely only from the listing and
    /// fetches its body with its chunk: a document gone by then is reported
    /// (changed during the sync) and left, not deleted behind the mass-delete
    /// guard's back; the next pull lists it absent and deletes it.
    @Test func aDocumentDeletedBetweenListingAndFetchIsDeletedOrLeftForTheNextPull() async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.synced(records: 3, in: scratch)
        let gone = try RecordID("b0001")
        documents[gone] = try Self.document(collection, "b0001", #"{"id": "b0001", "title": "Edited", "author": "A", "genre": "g"}"#, revision: "r2")
        func remote() -> ScriptedRemote { ScriptedRemote(documents: Array(documents.values), vanishing: [gone]) }

        let status = try await collection.status(remote: remote())
        #expect(status.records == [RecordStatus(id: gone, state: .remoteChange(.deleted))])
        let diff = try await collection.diff([gone], remote: remote())
        #expect(diff.records.map(\.state) == [.remoteChange(.deleted)])
        #expect(diff.records.first?.inRemote == false)
        let report = try await collection.pull(remote: remote())
        #expect(report.events == [SyncEvent(id: gone, kind: .changedDuringSync)])
        #expect(try Self.localFields(collection, "b0001")?["title"] == .string("T1"))
        #expect(try collection.manifestFile.load().entries[gone]?.revision == "r1")
        documents[gone] = nil
        let again = try await collection.pull(remote: ScriptedRemote(documents: Array(documents.values)))
        #expect(again.events == [SyncEvent(id: gone, kind: .pulled(.delete))])
        #expect(try Self.localFields(collection, "b0001") == nil)
    }

    /// A pull of many remote changes reads each body once, a chunk at a time
    /// right before writing it, never all of them before planning: it holds
    /// one chunk of bodies whatever the number of changes.
    @Test func remoteOnlyChangesAreFetchedChunkByChunk() async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.synced(records: 1_200, in: scratch)
        for i in 0..<1_200 {
            let name = String(format: "b%04d", i)
            documents[try RecordID(name)] = try Self.document(collection, name, #"{"id": "\#(name)", "title": "New\#(i)", "author": "A", "genre": "g"}"#, revision: "r2")
        }
        let remote = ScriptedRemote(documents: Array(documents.values))
        let report = try await collection.pull(remote: remote)
        #expect(report.events.count == 1_200 && report.events.allSatisfy { $0.kind == .pulled(.write) })
        let fetches = remote.fetches.withLock { $0 }
        #expect(fetches.map(\.count) == [500, 500, 200])
        #expect(Set(fetches.joined()).count == 1_200, "no body is read twice")
        #expect(try Self.localFields(collection, "b1199")?["title"] == .string("New1199"))
        #expect(try collection.manifestFile.load().entries.values.allSatisfy { $0.revision == "r2" })
    }

    /// A body fetched with its chunk that cannot be a record is reported as
    /// invalid, as if it had been read before planning: the file and the base
    /// stay; a dry run reports the same.
    @Test(arguments: [false, true])
    func aRemoteOnlyChangeThatIsInvalidIsReportedNotPulled(dryRun: Bool) async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.synced(records: 2, in: scratch)
        let id = try RecordID("b0001")
        let problem = RecordDiagnostic(message: "not a record")
        documents[id] = RemoteDocument(id: id, revision: "r2", content: .invalid([problem]))
        var options = SyncOptions()
        options.dryRun = dryRun
        let report = try await collection.pull(remote: ScriptedRemote(documents: Array(documents.values)), options: options)
        #expect(report.events == [SyncEvent(id: id, kind: .invalidRemote([problem]))])
        #expect(try Self.localFields(collection, "b0001")?["title"] == .string("T1"))
        #expect(try collection.manifestFile.load().entries[id]?.revision == "r1")
    }

    /// --ours / --theirs take their side for the conflicting field only; the
    /// one-sided changes of both sides are kept.
    @Test(arguments: [ConflictChoice.ours, .theirs])
    func aChoiceSettlesOnlyTheConflictingFields(choice: ConflictChoice) async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.synced(records: 2, in: scratch)
        documents[try RecordID("b0000")] = try Self.document(collection, "b0000", #"{"id": "b0000", "title": "Theirs", "author": "A", "genre": "remote"}"#, revision: "r2")
        try scratch.write("b0000.json", #"{"id": "b0000", "title": "Ours", "author": "local", "genre": "g"}"#)
        var options = SyncOptions()
        options.conflictChoice = choice
        let report = try await collection.pull(remote: ScriptedRemote(documents: Array(documents.values)), options: options)
        let fields = try #require(try Self.localFields(collection, "b0000"))
        #expect(report.events == [SyncEvent(id: try RecordID("b0000"), kind: .pulled(.merge(fields)))])
        #expect(fields["title"] == .string(choice == .ours ? "Ours" : "Theirs"))
        #expect(fields["author"] == .string("local") && fields["genre"] == .string("remote"))
        #expect(try collection.manifestFile.load().entries[try RecordID("b0000")]?.revision == "r2")
    }

    /// A file saved while pull works (here: while it fetches the bodies, after
    /// the scan) is left as saved, for a record pull would merge as for one it
    /// would overwrite, and the base is not moved on for it.
    @Test(arguments: [true, false])
    func anEditWhilePullingIsNeverOverwritten(editedBefore: Bool) async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.synced(records: 2, in: scratch)
        documents[try RecordID("b0000")] = try Self.document(collection, "b0000", #"{"id": "b0000", "title": "T0", "author": "A", "genre": "remote"}"#, revision: "r2")
        if editedBefore { try scratch.write("b0000.json", #"{"id": "b0000", "title": "T0", "author": "local", "genre": "g"}"#) }
        let path = scratch.path + "/b0000.json"
        let edit = #"{"id": "b0000", "title": "Saved meanwhile", "author": "A", "genre": "g"}"#
        let remote = ScriptedRemote(documents: Array(documents.values), duringFetch: {
            _ = FileManager.default.createFile(atPath: path, contents: Data(edit.utf8))
        })
        let report = try await collection.pull(remote: remote)
        #expect(report.events == [SyncEvent(id: try RecordID("b0000"), kind: .changedDuringSync)])
        #expect(try scratch.read("b0000.json") == edit)
        #expect(try collection.manifestFile.load().entries[try RecordID("b0000")]?.revision == "r1")
    }

    @Test func aMassDeleteIsRefusedBeforeAnythingIsWritten() async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.synced(records: 10, in: scratch)
        for i in 0..<6 { documents[try RecordID(String(format: "b%04d", i))] = nil }
        documents[try RecordID("b0009")] = try Self.document(collection, "b0009", #"{"id": "b0009", "title": "New", "author": "A", "genre": "g"}"#, revision: "r2")
        let remote = ScriptedRemote(documents: Array(documents.values))
        await #expect(throws: BooksyncError.massDelete(command: "pull", deletes: 6, baseCount: 10, maximumPercent: 50)) {
            try await collection.pull(remote: remote)
        }
        #expect(try Self.localFields(collection, "b0000") != nil)
        #expect(try Self.localFields(collection, "b0009")?["title"] == .string("T9"), "nothing is written before the guard")
        #expect(try collection.manifestFile.load().entries.count == 10)

        var forced = SyncOptions()
        forced.force = true
        let report = try await collection.pull(remote: remote, options: forced)
        #expect(report.events.filter { $0.kind == .pulled(.delete) }.count == 6)
        #expect(try collection.manifestFile.load().entries.count == 4)
    }

    @Test func aDryRunPlansButWritesNothing() async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.synced(records: 2, in: scratch)
        documents[try RecordID("b0000")] = try Self.document(collection, "b0000", #"{"id": "b0000", "title": "New", "author": "A", "genre": "g"}"#, revision: "r2")
        let manifest = try Data(contentsOf: URL(fileURLWithPath: collection.paths.manifest))
        var options = SyncOptions()
        options.dryRun = true
        let report = try await collection.pull(remote: ScriptedRemote(documents: Array(documents.values)), options: options)
        #expect(report.dryRun)
        #expect(report.events == [SyncEvent(id: try RecordID("b0000"), kind: .pulled(.write))])
        #expect(try Self.localFields(collection, "b0000")?["title"] == .string("T0"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: collection.paths.manifest)) == manifest)
    }

    /// A first pull writes each answer as it arrives; when the listing fails
    /// part-way, what was written is in the base and the next pull goes on.
    @Test func aFirstPullThatFailsKeepsWhatItWrote() async throws {
        let scratch = try ScratchDirectory()
        let source = try await Self.synced(records: 250, in: ScratchDirectory()).1
        let collection = try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
        let failing = ScriptedRemote(documents: Array(source.values), listingBatch: 100, failListingAfter: 2)
        await #expect(throws: BooksyncError.remote(ScriptedRemote.listingFailure)) {
            try await collection.pull(remote: failing)
        }
        #expect(try collection.manifestFile.load().entries.count == 200)
        #expect(try Self.localFields(collection, "b0199") != nil)
        #expect(try Self.localFields(collection, "b0200") == nil)

        let report = try await collection.pull(remote: ScriptedRemote(documents: Array(source.values)))
        #expect(report.events.count == 50)
        #expect(report.events.allSatisfy { $0.kind == .pulled(.write) })
        #expect(try collection.manifestFile.load().entries.count == 250)
    }

    /// The names two steps could share as one file (case, not Unicode form),
    /// among many that differ, across chunks, and none when all differ.
    @Test(arguments: [1, 7, 500])
    func collidingNamesAreTheRepeatedOnesOnly(chunkSize: Int) throws {
        var plan = PullPlan(chunkSize: chunkSize)
        let distinctNames = (0..<200).map { String(format: "b%04d", $0) }
        // Apart from each other, so that only the sorted hashes bring them together.
        let names = ["Dune"] + distinctNames[..<100] + ["emma"] + distinctNames[100...] + ["Emma", "x", "DUNE", "dune"]
        for name in names { plan.add(.step(PullStep(id: try RecordID(name), action: .write))) }
        plan.finish()
        #expect(PullFileSteps.collidingNames(in: plan) == ["dune.json", "emma.json"])
        var distinct = PullPlan(chunkSize: chunkSize)
        for name in distinctNames { distinct.add(.step(PullStep(id: try RecordID(name), action: .write))) }
        distinct.finish()
        #expect(PullFileSteps.collidingNames(in: distinct).isEmpty)
    }
}
