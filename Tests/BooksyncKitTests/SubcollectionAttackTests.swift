import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@testable import BooksyncKit

/// Subcollection folders in a cloned collection are untrusted input (DESIGN.md
/// §6): a link planted where `dune/` or `dune/reviews/` belongs is never
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
        let reports = try await clone.collection.validate([])
        #expect(!reports.contains { $0.path.contains("/dune/") })
        _ = try await clone.collection.format([], checkOnly: false)
        #expect(try clone.snapshot() == before)
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
