import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Subcollection folders in a cloned collection are untrusted input (<doc:Safety>): a link planted where `dune/` or `dune/reviews/` belongs is never
/// followed, by a scan, a pull writing reviews, `fmt`, `validate` or
/// `resolve`. Each test plants the link, runs the command and checks that
/// the directory outside is byte for byte what it was.
@Suite(.hangGuard) struct SubcollectionAttackTests {
    struct Clone {
        let scratch: ScratchDirectory
        let collection: CollectionDirectory
        var root: String { collection.paths.root }
        var outside: String { scratch.path + "/outside" }

        init() throws {
            scratch = try ScratchDirectory()
            collection = try SubcollectionLocalTests.collection(scratch, subcollections: ["reviews"])
            try SubcollectionLocalTests.write(scratch, "outside/reviews/r1.json", #"{"id": "r1", "rating": 1, "secret": "outside"}"#)
            try SubcollectionLocalTests.write(scratch, "outside/r1.json", #"{"id": "r1", "rating": 1, "secret": "outside"}"#)
        }

        func snapshot() throws -> [String: String] {
            var files: [String: String] = [:]
            for relative in try FileManager.default.subpathsOfDirectory(atPath: outside) {
                files[relative] = (try? String(contentsOfFile: outside + "/" + relative, encoding: .utf8)) ?? "<dir>"
            }
            return files
        }

        /// Replaces `relative` (a folder) in the collection by a link to `target`.
        func plantLink(_ relative: String, to target: String) throws {
            try? FileManager.default.removeItem(atPath: root + "/" + relative)
            try FileManager.default.createSymbolicLink(atPath: root + "/" + relative, withDestinationPath: target)
        }

        func review(_ id: String) throws -> RemoteDocument {
            let recordID = try collection.rules.recordID(id)
            let record = try collection.rules.load(Array(#"{"id": "\#(recordID.documentID)", "rating": 3, "from": "remote"}"#.utf8), id: recordID).get()
            return RemoteDocument(id: recordID, revision: "r1", content: .record(record))
        }
    }

    /// (link in the collection, its target under outside/)
    static let links: [(String, String)] = [("dune", ""), ("dune/reviews", "/reviews")]

    @Test(arguments: links)
    func scansNeverEnterALinkedFolder(link: String, target: String) async throws {
        let clone = try Clone()
        let before = try clone.snapshot()
        try clone.plantLink(link, to: clone.outside + target)
        let status = try await clone.collection.status(remote: nil)
        #expect(!status.records.contains { $0.id.rawValue.hasPrefix("dune/") })
        if link == "dune/reviews" {
            // Where a configured subcollection folder belongs, the link is reported.
            #expect(status.unusableFiles.map(\.fileName) == ["dune/reviews"])
            #expect(status.unusableFiles.first?.message.contains("symbolic link") == true)
        }
        // validate and fmt report that link the same way, and read nothing behind either.
        let expected = link == "dune/reviews" ? [clone.root + "/dune/reviews"] : []
        let reports = try await clone.collection.validate([]).filter { $0.path == clone.root + "/dune" || $0.path.hasPrefix(clone.root + "/dune/") }
        #expect(reports.map(\.path) == expected)
        #expect(reports.allSatisfy { $0.diagnostics == [RecordDiagnostic(message: FileSystemError.folderRefusal(.symbolicLink))] })
        let formatted = try await clone.collection.format([], checkOnly: false).filter { $0.path == clone.root + "/dune" || $0.path.hasPrefix(clone.root + "/dune/") }
        #expect(formatted.map(\.path) == expected)
        #expect(formatted.allSatisfy { $0.outcome == .failed(RecordDiagnostic(message: FileSystemError.folderRefusal(.symbolicLink))) })
        #expect(try clone.snapshot() == before)
    }

    /// A document id ending in `.json` has a folder whose name does not (`cfg%2Ejson/`),
    /// so its reviews are never taken for the record file `cfg.json` of the book `cfg`:
    /// both pull, stay clean, and push sends nothing (it once deleted the reviews).
    @Test func aDocumentNamedLikeARecordFileKeepsItsReviews() async throws {
        let clone = try Clone()
        let book = try clone.collection.rules.load(Array(SubcollectionLocalTests.book.replacingOccurrences(of: "\"dune\"", with: "\"cfg\"").utf8),
                                                   id: try RecordID("cfg")).get()
        let remote = ScriptedRemote(documents: [
            RemoteDocument(id: try RecordID("cfg"), revision: "r1", content: .record(book)),
            try clone.review("cfg.json/reviews/r1"), try clone.review("cfg/reviews/r.json"),
        ])
        let pulled = try await clone.collection.pull(remote: remote)
        #expect(!pulled.needsAttention, "\(pulled.events)")
        for file in ["cfg.json", "cfg%2Ejson/reviews/r1.json", "cfg/reviews/r.json.json"] {
            #expect(FileManager.default.fileExists(atPath: clone.root + "/" + file), "\(file)")
        }
        let status = try await clone.collection.status(remote: remote)
        #expect(!status.records.contains { $0.id.rawValue.hasPrefix("cfg") }, "\(status.records)")
        #expect(status.unusableFiles.isEmpty)
        let pushed = try await clone.collection.push(remote: remote)
        #expect(!remote.chunks.withLock { $0.joined() }.contains { $0.hasPrefix("cfg") }, "\(pushed.events)")
    }

    /// A path id whose segments each fit a file name but whose flat state-file
    /// name would not (over 255 bytes) keeps its conflict under a hashed name,
    /// so pull stores the conflict instead of failing as a whole; two such ids
    /// keep theirs apart.
    @Test func aLongPathIDKeepsItsConflictUnderAHashedName() throws {
        let clone = try Clone()
        let store = ConflictStore(paths: clone.collection.paths)
        var stored: [RecordID: String] = [:]
        for letter in ["p", "q"] {
            let id = try clone.collection.rules.recordID(String(repeating: letter, count: 200) + "/reviews/" + String(repeating: "r", count: 200))
            let name = clone.collection.paths.stateFileName(id)
            #expect(name.utf8.count <= 255 && name.hasPrefix("%sha256-"), "\(name)")
            let record = try clone.collection.rules.load(Array(#"{"id": "\#(id.documentID)", "rating": 2, "by": "\#(letter)"}"#.utf8), id: id).get()
            try store.save(id, record: record, revision: "2024-01-01T00:00:00Z", baseRevision: nil)
            stored[id] = letter
        }
        for (id, letter) in stored {
            let side = try #require(store.load(id, rules: clone.collection.rules))
            #expect(side.record?.fields["by"] == .string(letter))
            #expect(side.revision == "2024-01-01T00:00:00Z")
        }
        // Short ids keep their readable flat names.
        #expect(clone.collection.paths.stateFileName(try clone.collection.rules.recordID("dune/reviews/r1")) == "dune%2Freviews%2Fr1.json")
    }

    /// A directory synced before folder names escaped a final `.json`
    /// (`cfg.json/reviews/r1.json`, now `cfg%2Ejson/reviews/r1.json`): its
    /// records are invalid with the `mv` that fixes it, never deleted, and
    /// that `mv` works pasted into a shell, for an id starting with `-` too.
    @Test(arguments: ["cfg", "-cfg"])
    func anEarlierLayoutsFolderIsNamedNotTakenForDeleted(stem: String) async throws {
        let clone = try Clone()
        let id = stem + ".json/reviews/r1"
        let remote = ScriptedRemote(documents: [try clone.review(id)])
        _ = try await clone.collection.pull(remote: remote)
        try FileManager.default.moveItem(atPath: clone.root + "/\(stem)%2Ejson", toPath: clone.root + "/\(stem).json")
        let status = try await clone.collection.status(remote: nil)
        let r1 = try #require(status.records.first { $0.id.rawValue == id })
        let message = clone.root + "/\(stem)%2Ejson: is missing, and \(stem).json/ holds what an earlier booksync kept here; "
            + "rename that folder: mv -- '\(stem).json' '\(stem)%2Ejson'"
        #expect(r1.state == .invalidLocal([RecordDiagnostic(message: message)]))
        _ = try await clone.collection.push(remote: remote)
        #expect(!remote.chunks.withLock { $0.joined() }.contains(id))
        // The advice as printed, word for word, in the collection directory.
        guard case .invalidLocal(let diagnostics) = r1.state, let printed = diagnostics.first?.message,
              let advice = printed.range(of: "rename that folder: ") else {
            Issue.record("no mv in \(r1.state)")
            return
        }
        let command = String(printed[advice.upperBound...])
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", command]
        shell.currentDirectoryURL = URL(fileURLWithPath: clone.root)
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0, "\(command)")
        #expect(try await clone.collection.status(remote: nil).records.first { $0.id.rawValue == id } == nil)
    }

    /// What stands where a folder belongs, in place of `dune/` or `dune/reviews/`.
    enum Planted: String, CaseIterable, Sendable {
        case link, file, fifo
    }

    /// Records already synced below a folder replaced by a link, a file or a
    /// FIFO were not read: each is invalid, named with what blocked it, and
    /// never taken for deleted, so push sends nothing for them (a deletion
    /// would delete documents nobody changed).
    @Test(arguments: [("dune", Planted.link), ("dune", .file), ("dune", .fifo), ("dune/reviews", .link), ("dune/reviews", .file), ("dune/reviews", .fifo)])
    func syncedRecordsBelowABlockedFolderAreInvalidNeverDeleted(folder: String, planted: Planted) async throws {
        let clone = try Clone()
        try SubcollectionLocalTests.write(clone.scratch, "books/dune/reviews/r1.json", #"{"id": "r1", "rating": 3, "from": "remote"}"#)
        let remote = ScriptedRemote(documents: [try clone.review("dune/reviews/r1")])
        _ = try await clone.collection.pull(remote: remote)
        let id = try clone.collection.rules.recordID("dune/reviews/r1")
        #expect(try clone.collection.manifestFile.load().entries[id] != nil)
        #expect(try await clone.collection.status(remote: nil).records.first { $0.id == id } == nil)  // clean: not listed
        let before = try clone.snapshot()
        try FileManager.default.removeItem(atPath: clone.root + "/" + folder)
        switch planted {
        case .link: try clone.plantLink(folder, to: clone.outside + (folder == "dune" ? "" : "/reviews"))
        case .file: try clone.scratch.write("books/" + folder, "not a folder")
        case .fifo: #expect(mkfifo(clone.root + "/" + folder, 0o644) == 0)
        }
        let kind: FileKind = switch planted {
        case .link: .symbolicLink
        case .file: .regular
        case .fifo: .fifo
        }
        let status = try await clone.collection.status(remote: nil)
        let r1 = try #require(status.records.first { $0.id.rawValue == "dune/reviews/r1" })
        #expect(r1.state == .invalidLocal([RecordDiagnostic(message: clone.root + "/" + folder + ": " + FileSystemError.folderRefusal(kind))]))
        // diff sees the same state as status.
        let diffed = try await clone.collection.diff([], remote: nil).records.first { $0.id == id }
        #expect(diffed?.state == r1.state)
        let pushed = try await clone.collection.push(remote: remote)
        #expect(!remote.chunks.withLock { $0.joined() }.contains("dune/reviews/r1"))
        #expect(pushed.needsAttention)
        #expect(try clone.snapshot() == before)
    }

    /// A file argument whose folder is a link inside the collection
    /// (`dune/reviews` → `ghost/reviews`) is refused by every command that
    /// takes files: followed, `resolve dune/reviews/r1.json` would settle
    /// ghost's review.
    @Test func fileArgumentsNeverGoThroughALinkInsideTheCollection() async throws {
        let clone = try Clone()
        try SubcollectionLocalTests.write(clone.scratch, "books/ghost/reviews/r1.json", #"{"id": "r1", "rating": 2}"#)
        try clone.plantLink("dune/reviews", to: clone.root + "/ghost/reviews")
        let argument = clone.root + "/dune/reviews/r1.json"
        #expect(throws: BooksyncError.self) { try clone.collection.recordFiles.recordIDs([argument]) }
        await #expect(throws: BooksyncError.self) { _ = try await clone.collection.validate([argument]) }
        await #expect(throws: BooksyncError.self) { _ = try await clone.collection.format([argument], checkOnly: false) }
        // Named by its own folder, ghost's review is fine.
        #expect(try clone.collection.recordFiles.recordIDs([clone.root + "/ghost/reviews/r1.json"]).map(\.rawValue) == ["ghost/reviews/r1"])
    }

    @Test(arguments: links)
    func pullRefusesToWriteThroughALinkedFolderAndNamesIt(link: String, target: String) async throws {
        let clone = try Clone()
        try FileManager.default.removeItem(atPath: clone.outside + "/reviews/r1.json")
        try FileManager.default.removeItem(atPath: clone.outside + "/r1.json")
        let before = try clone.snapshot()
        try clone.plantLink(link, to: clone.outside + target)
        let remote = ScriptedRemote(documents: [try clone.review("dune/reviews/r1"), try clone.review("emma/reviews/r1")])
        // The record behind the link is refused, named with the link; the rest of the pull goes on.
        let report = try await clone.collection.pull(remote: remote)
        let refused = try #require(report.events.first { $0.id.rawValue == "dune/reviews/r1" })
        guard case .invalidLocal(let diagnostics) = refused.kind else {
            Issue.record("expected the record to be refused, got \(refused.kind)")
            return
        }
        #expect(diagnostics.map(\.message) == [clone.root + "/" + link + ": " + FileSystemError.folderRefusal(.symbolicLink)])
        #expect(report.needsAttention)
        #expect(FileManager.default.fileExists(atPath: clone.root + "/emma/reviews/r1.json"))
        #expect(try clone.snapshot() == before)
        // Nothing of it reached the base: the next pull refuses it again.
        #expect(try await clone.collection.pull(remote: remote).events.contains(refused))
    }

    @Test(arguments: links)
    func namedFilesBehindALinkAreRefused(link: String, target: String) async throws {
        let clone = try Clone()
        let before = try clone.snapshot()
        try clone.plantLink(link, to: clone.outside + target)
        let path = clone.root + "/dune/reviews/r1.json"
        await #expect(throws: BooksyncError.self) { _ = try await clone.collection.format([path], checkOnly: false) }
        await #expect(throws: BooksyncError.self) { _ = try await clone.collection.validate([path]) }
        // By id, the link is reported and nothing behind it is read.
        let id = try clone.collection.rules.recordID("dune/reviews/r1")
        #expect(throws: FileSystemError.self) { _ = try clone.collection.paths.recordFile(id) }
        #expect(throws: FileSystemError.self) { _ = try clone.collection.paths.recordFileCreatingFolders(id) }
        #expect(try clone.snapshot() == before)
    }

    @Test func aLinkedReviewFileIsInvalidLikeEveryLinkedRecord() async throws {
        let clone = try Clone()
        try clone.plantLink("dune/reviews/r1.json", to: clone.outside + "/r1.json")
        let status = try await clone.collection.status(remote: nil)
        let r1 = try #require(status.records.first { $0.id.rawValue == "dune/reviews/r1" })
        #expect(r1.state == .invalidLocal([RecordDiagnostic(message: FileSystemError.refusal(.symbolicLink))]))
    }

    @Test func aFileWhereAFolderBelongsIsRefusedForWrites() async throws {
        let clone = try Clone()
        try FileManager.default.removeItem(atPath: clone.root + "/dune")
        try clone.scratch.write("books/dune", "not a folder")
        let remote = ScriptedRemote(documents: [try clone.review("dune/reviews/r1")])
        let report = try await clone.collection.pull(remote: remote)
        #expect(report.events.map(\.kind) == [.invalidLocal([RecordDiagnostic(message: clone.root + "/dune: " + FileSystemError.folderRefusal(.regular))])])
        #expect(try clone.scratch.read("books/dune") == "not a folder")
    }
}
