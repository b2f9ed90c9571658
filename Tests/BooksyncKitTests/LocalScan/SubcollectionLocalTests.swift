import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Subcollection records on disk (<doc:CollectionFormat>): `dune/reviews/r1.json` is
/// the record `dune/reviews/r1` when `reviews` is configured, found by every
/// local command, with the subcollection's own schema; nothing changes for a
/// collection that did not opt in.
@Suite(.hangGuard) struct SubcollectionLocalTests {
    static let book = #"{"id": "dune", "title": "Dune", "author": "FH", "genre": "sf"}"#

    /// A collection `books` with `subcollections` (reviews need an integer rating) and a few files.
    static func collection(_ scratch: ScratchDirectory, subcollections: [String] = ["reviews", "reviews/likes"]) throws -> CollectionDirectory {
        try FileManager.default.createDirectory(atPath: scratch.path + "/books", withIntermediateDirectories: true)
        let configured = try Subcollections.parse(paths: subcollections, requirements: subcollections.contains("reviews") ? ["reviews:rating:integer"] : [])
        let collection = try CollectionDirectory.initialize(
            at: scratch.path + "/books", config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books"), subcollections: configured))
        try scratch.write("books/dune.json", book)
        try write(scratch, "books/dune/reviews/r1.json", #"{"id": "r1", "rating": 5}"#)
        try write(scratch, "books/dune/reviews/r1/likes/l1.json", #"{"id": "l1"}"#)
        try write(scratch, "books/orphan/reviews/r9.json", #"{"id": "r9", "rating": 1}"#)  // no orphan.json: fine
        try write(scratch, "books/dune/ratings/x.json", #"{"id": "x"}"#)  // not configured: ignored
        try write(scratch, "books/dune/reviews/r1/other/o.json", #"{"id": "o"}"#)  // not configured: ignored
        try write(scratch, "books/notes/todo.json", #"{"id": "todo"}"#)  // a folder without subcollections: ignored
        return collection
    }

    static func write(_ scratch: ScratchDirectory, _ relative: String, _ text: String) throws {
        let directory = (scratch.path + "/" + relative as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try scratch.write(relative, text)
    }

    @Test func statusFindsConfiguredSubcollectionRecordsOnly() async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch)
        let status = try await collection.status(remote: nil)
        #expect(status.records.map(\.id.rawValue) == ["dune", "dune/reviews/r1", "dune/reviews/r1/likes/l1", "orphan/reviews/r9"])
        #expect(status.records.allSatisfy { $0.state == .localChange(.added) })
        #expect(status.unusableFiles.isEmpty)
    }

    @Test func withoutTheOptInFoldersStayIgnored() async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch, subcollections: [])
        let status = try await collection.status(remote: nil)
        #expect(status.records.map(\.id.rawValue) == ["dune"])
        #expect(status.unusableFiles.isEmpty)
        #expect(throws: BooksyncError.self) { try collection.recordFiles.recordIDs(["dune/reviews/r1"]) }
    }

    @Test func eachSubcollectionHasItsOwnSchemaAndIDRule() async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch)
        try scratch.write("books/dune/reviews/r2.json", #"{"id": "dune/reviews/r2", "title": "no rating"}"#)
        try scratch.write("books/dune/reviews/bad%zz.json", "{}")
        let status = try await collection.status(remote: nil)
        let r2 = try #require(status.records.first { $0.id.rawValue == "dune/reviews/r2" })
        #expect(r2.state == .invalidLocal([
            RecordDiagnostic(message: "field 'id' is \"dune/reviews/r2\" but the file name says \"r2\"; rename the file or fix the field"),
            RecordDiagnostic(message: "missing required field 'rating' (integer)"),
        ]))
        #expect(status.unusableFiles.map(\.fileName) == ["dune/reviews/bad%zz.json"])
        let reports = try await collection.validate([])
        #expect(reports.map { String($0.path.dropFirst(collection.paths.root.count + 1)) } == [
            "dune.json", "dune/reviews/bad%zz.json", "dune/reviews/r1.json", "dune/reviews/r1/likes/l1.json", "dune/reviews/r2.json", "orphan/reviews/r9.json",
        ])
        #expect(reports.filter { !$0.diagnostics.isEmpty }.count == 2)
    }

    @Test func fmtWritesTheSubcollectionsCanonicalOrder() async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch)
        try scratch.write("books/dune/reviews/r1.json", #"{"zeta": 1, "rating": 5, "id": "r1"}"#)
        let reports = try await collection.format([scratch.path + "/books/dune/reviews/r1.json"], checkOnly: false)
        #expect(reports.map(\.outcome) == [.reformatted])
        #expect(try scratch.read("books/dune/reviews/r1.json") == "{\n  \"id\": \"r1\",\n  \"rating\": 5,\n  \"zeta\": 1\n}\n")
        // Paths outside the collection, or into unconfigured folders, are refused.
        await #expect(throws: BooksyncError.self) { _ = try await collection.format([scratch.path + "/books/dune/ratings/x.json"], checkOnly: false) }
    }

    @Test func theStatCacheCoversSubcollectionFiles() async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch)
        _ = try await collection.push(remote: ScriptedRemote())
        try await Task.sleep(for: .milliseconds(250))  // past the racy window of the files just written
        _ = try await collection.status(remote: nil)
        let clean = try await collection.status(remote: nil)
        #expect(clean.isClean)
        #expect(clean.filesRead == 0)
        #expect(clean.recordCount == 4)
        // A review added or changed where the collection directory itself did not change is still seen.
        try scratch.write("books/dune/reviews/r2.json", #"{"id": "r2", "rating": 3}"#)
        try scratch.write("books/orphan/reviews/r9.json", #"{"id": "r9", "rating": 2}"#)
        let changed = try await collection.status(remote: nil)
        #expect(changed.records.map(\.id.rawValue) == ["dune/reviews/r2", "orphan/reviews/r9"])
        #expect(changed.records.map(\.state) == [.localChange(.added), .localChange(.modified)])
        try FileManager.default.removeItem(atPath: scratch.path + "/books/dune/reviews/r1/likes/l1.json")
        #expect(try await collection.status(remote: nil).records.map(\.id.rawValue) == ["dune/reviews/r1/likes/l1", "dune/reviews/r2", "orphan/reviews/r9"])
    }

    @Test func commandLineNamesTakePathIDsAndFiles() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch)
        let ids = try collection.recordFiles.recordIDs(["dune/reviews/r1", scratch.path + "/books/dune/reviews/r1/likes/l1.json", "dune"])
        #expect(ids.map(\.rawValue) == ["dune/reviews/r1", "dune/reviews/r1/likes/l1", "dune"])
        #expect(throws: BooksyncError.self) { try collection.recordFiles.recordIDs(["dune/ratings/x"]) }
        #expect(throws: BooksyncError.self) { try collection.recordFiles.recordIDs(["../reviews/x"]) }
    }

    /// A collection that stops syncing a subcollection (config.json edited)
    /// forgets those records' base instead of refusing every command: their
    /// files and documents are simply no longer compared, and nothing is sent.
    @Test(arguments: [[String](), ["other"]])
    func droppingASubcollectionFromTheConfigForgetsItsBase(keeping: [String]) async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch, subcollections: ["reviews"])
        let id = try collection.rules.recordID("dune/reviews/r1")
        let review = RemoteDocument(id: id, revision: "r1", content: .record(try collection.rules.load(Array(#"{"id": "r1", "rating": 5}"#.utf8), id: id).get()))
        let remote = ScriptedRemote(documents: [review])
        _ = try await collection.pull(remote: remote)
        #expect(try collection.manifestFile.load().entries[id] != nil)
        let config = CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books"),
                                      subcollections: try Subcollections.parse(paths: keeping, requirements: []))
        try FileSystem.writeAtomically(config.encoded(), to: collection.paths.config)
        let narrowed = try CollectionDirectory.open(searchingFrom: collection.paths.root)
        // The strict decoder (the merge driver's) still refuses such a manifest.
        #expect(throws: StateFileError.self) { try Manifest.decode(FileSystem.readFile(collection.paths.manifest), subcollections: narrowed.rules.subcollections) }
        #expect(try narrowed.manifestFile.load().entries.keys.allSatisfy(\.isTopLevel))
        let status = try await narrowed.status(remote: nil)
        #expect(!status.records.contains { !$0.id.isTopLevel })
        _ = try await narrowed.push(remote: remote)
        #expect(!remote.chunks.withLock { $0.joined() }.contains { $0.contains("/") })
    }

    /// A record synced under an older booksync whose path is now too long
    /// (over `RecordID.maximumPathBytes`) stops no command: the base forgets
    /// it, its file is reported, and nothing is sent or deleted for it.
    @Test func aSyncedPathThatIsNowTooLongIsForgottenAndReported() async throws {
        let scratch = try ScratchDirectory()
        let c = String(repeating: "c", count: 250)
        let collection = try Self.collection(scratch, subcollections: [c, c + "/" + c])
        let d = String(repeating: "d", count: 250)
        let long = [d, c, d, c, d].joined(separator: "/")
        try Self.write(scratch, "books/" + long + ".json", #"{"id": "\#(d)"}"#)
        var manifest = try collection.manifestFile.load()
        manifest.entries[RecordID(validated: long)] = BaseEntry(hash: ContentHash(text: "sha256:" + String(repeating: "a", count: 64)), revision: "2024-01-01T00:00:00Z")
        try FileSystem.writeAtomically(manifest.encoded(), to: collection.paths.manifest)
        #expect(try collection.manifestFile.load().entries[RecordID(validated: long)] == nil)
        let status = try await collection.status(remote: nil)
        #expect(status.unusableFiles.map(\.fileName) == [long + ".json"])
        #expect(!status.records.contains { $0.id.rawValue == long })
        let remote = ScriptedRemote()
        _ = try await collection.push(remote: remote)
        #expect(!remote.chunks.withLock { $0.joined() }.contains(long))
    }

    /// A pull or push killed while writing a review leaves its temporary file
    /// in the review's folder; the next writing command removes it (a swapped-out
    /// copy, which may hold an editor's save, goes to `.booksync/recovered/`).
    /// Found by the crash trials, which once saw one left behind.
    @Test func temporariesAKilledCommandLeftInAReviewFolderAreCleanedUp() async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch, subcollections: ["reviews"])
        let dead = "99999999"  // above any pid_max: no such process
        try scratch.write("books/dune/reviews/\(FileSystem.temporaryMarker)\(dead)-1", "half a record")
        try scratch.write("books/dune/reviews/\(FileSystem.swapMarker)\(dead)-2", #"{"id": "r1", "rating": 4, "saved": "by an editor"}"#)
        try scratch.write("books/dune/reviews/\(FileSystem.temporaryMarker)\(getpid())-3", "ours, in flight")
        var dryRun = SyncOptions()
        dryRun.dryRun = true
        _ = try await collection.pull(remote: ScriptedRemote(), options: dryRun)
        #expect(FileManager.default.fileExists(atPath: collection.paths.root + "/dune/reviews/\(FileSystem.temporaryMarker)\(dead)-1"))  // a dry run writes nothing
        _ = try await collection.pull(remote: ScriptedRemote())
        let left = try FileManager.default.contentsOfDirectory(atPath: collection.paths.root + "/dune/reviews").sorted()
        #expect(left == ["\(FileSystem.temporaryMarker)\(getpid())-3", "r1", "r1.json"])
        #expect(try String(contentsOfFile: collection.paths.recovered + "/\(FileSystem.swapMarker)\(dead)-2", encoding: .utf8).contains("by an editor"))
    }

    @Test func pullWritesSubcollectionRecordsIntoNewFolders() async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch)
        let id = try collection.rules.recordID("neuromancer/reviews/r1")
        let record = try collection.rules.load(Array(#"{"id": "r1", "rating": 4}"#.utf8), id: id).get()
        let report = try await collection.pull(remote: ScriptedRemote(documents: [RemoteDocument(id: id, revision: "r1", content: .record(record))]))
        #expect(report.events.contains(SyncEvent(id: id, kind: .pulled(.write))))
        #expect(try scratch.read("books/neuromancer/reviews/r1.json") == "{\n  \"id\": \"r1\",\n  \"rating\": 4\n}\n")
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/books/neuromancer.json"))
    }

    @Test func theMassDeleteGuardCountsSubcollectionRecords() async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch)
        for r in 2...4 { try scratch.write("books/dune/reviews/r\(r).json", #"{"id": "r\#(r)", "rating": 1}"#) }
        _ = try await collection.push(remote: ScriptedRemote())
        // Six of the seven synced records are in dune/reviews/ and orphan/: removing them deletes 86%.
        try FileManager.default.removeItem(atPath: scratch.path + "/books/dune/reviews")
        try FileManager.default.removeItem(atPath: scratch.path + "/books/orphan")
        do {
            _ = try await collection.push(remote: ScriptedRemote())
            Issue.record("the guard must refuse deleting 6 of 7 records")
        } catch {
            guard case .massDelete = error else { throw error }
        }
        var options = SyncOptions()
        options.force = true
        let report = try await collection.push(remote: ScriptedRemote(), options: options)
        #expect(report.events.map(\.id.rawValue) == ["dune/reviews/r1", "dune/reviews/r1/likes/l1", "dune/reviews/r2", "dune/reviews/r3", "dune/reviews/r4",
                                                     "orphan/reviews/r9"])
        #expect(report.events.allSatisfy { if case .pushed(.delete) = $0.kind { true } else { false } })
    }
}
