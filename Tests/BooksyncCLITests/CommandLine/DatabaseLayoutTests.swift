import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCLI
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The whole-database clone's pure parts (<doc:WholeProject>): folder names,
/// the pull estimate, the count difference status expects, the workspace file.
@Suite struct DatabaseLayoutTests {
    @Test(arguments: [
        ("books", "books"), ("café", "caf%C3%A9"), ("a b", "a%20b"), ("100%", "100%25"),
        (".booksync", "%2Ebooksync"), (".git", "%2Egit"), ("..x", "%2E.x"), ("__x", "__x"),
    ])
    func rootCollectionsBecomeFolderNamesInsideTheWorkspace(collection: String, folder: String) {
        let root = DatabaseLayout.Root(collection)
        #expect(root.folder == folder && root.problem == nil)
    }

    @Test(arguments: ["bad\u{1B}[31m", "a\u{202E}b", "a:b", String(repeating: "é", count: 200)])
    func namesNoFolderCanBeAreLeftOut(collection: String) {
        let root = DatabaseLayout.Root(collection)
        #expect(root.folder == nil && root.problem != nil)
    }

    @Test func theCountDifferenceIsZeroWhenEveryPathIsSynced() {
        let tree = DiscoveredCollection(path: "books", documents: 10, subcollections: ["reviews": 4, "notes/reviews": 2, "reviews/likes": 3, "a:b": 5])
        #expect(DatabaseLayout.countDifference(tree, paths: ["reviews", "notes/reviews", "reviews/likes"]) == 5)  // a:b cannot be synced
        // notes/reviews unsynced: its documents are still counted by the reviews group.
        #expect(DatabaseLayout.countDifference(tree, paths: ["reviews", "reviews/likes"]) == 5)
        #expect(DatabaseLayout.countDifference(tree, paths: []) == 14)
        // A subcollection named like the collection: its group's range takes in the top-level documents too.
        let same = DiscoveredCollection(path: "books", documents: 10, subcollections: ["x/books": 1])
        #expect(DatabaseLayout.countDifference(same, paths: ["x/books"]) == -10)
        #expect(DatabaseLayout.pullReads(tree, paths: ["reviews", "notes/reviews", "reviews/likes"]) == (reads: 10 + 6 + 3, queries: 3))
        #expect(DatabaseLayout.pullReads(DiscoveredCollection(path: "e"), paths: []) == (reads: 1, queries: 1))
    }

    @Test func theWorkspaceFileRoundTripsAndRefusesStrangers() throws {
        let scratch = try ScratchDirectory()
        #expect(try DatabaseLayout.readMarker(at: scratch.path) == nil)
        let marker = DatabaseLayout.Marker(project: "p", database: "(default)", baseline: ["books": 5, "café": 0])
        try DatabaseLayout.writeMarker(marker, at: scratch.path)
        #expect(try DatabaseLayout.readMarker(at: scratch.path) == DatabaseLayout.Marker(project: "p", database: "(default)", baseline: ["books": 5]))
        for text in [#"{"version": 2}"#, #"{"version": 1, "remote": {"type": "firestore", "project": "../x", "database": "(default)"}}"#, "[", String(repeating: " ", count: 70_000)] {
            try text.write(toFile: scratch.path + "/" + DatabaseLayout.markerName, atomically: true, encoding: .utf8)
            #expect(throws: BooksyncError.self) { try DatabaseLayout.readMarker(at: scratch.path) }
        }
    }
}
