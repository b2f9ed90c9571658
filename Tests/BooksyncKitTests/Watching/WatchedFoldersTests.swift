import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The folders a watch watches, in a cloned (untrusted) collection: the
/// subcollection folders it configures and nothing else: no link followed,
/// no folder outside, no `.git` or `.booksync`.
@Suite struct WatchedFoldersTests {
    static let subcollections = Subcollections(entries: [.init(path: "reviews"), .init(path: "reviews/likes")])

    static func makeFolders(_ root: String, _ relative: [String]) throws {
        for folder in relative {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
    }

    @Test func onlyTheConfiguredSubcollectionFoldersAreWatched() throws {
        let scratch = try ScratchDirectory()
        let root = scratch.path
        try Self.makeFolders(root, ["dune/reviews/r1/likes", "dune/notes", "emma/reviews", ".git/reviews", ".booksync/base", "x/y/reviews"])
        let listed = WatchedFolders.list(root: root, subcollections: Self.subcollections)
        // dune/notes and x/y are no configured subcollection: no record can be in them.
        #expect(listed.sorted() == ["", "dune", "dune/reviews", "dune/reviews/r1", "dune/reviews/r1/likes", "emma", "emma/reviews", "x"])
        #expect(WatchedFolders.list(root: root, subcollections: .none) == [""], "without subcollections only the collection folder")
    }

    /// A clone can hold links where folders belong: to a folder outside the
    /// collection (`/etc`, someone's home), or looping back. None is listed,
    /// so none is watched, and nothing below one is visited.
    @Test func linkedFoldersAreNeverWatched() throws {
        let scratch = try ScratchDirectory()
        let root = scratch.path + "/books"
        let outside = scratch.path + "/outside"
        try Self.makeFolders(scratch.path, ["books/emma/reviews", "outside/reviews/r1/likes"])
        try FileManager.default.createSymbolicLink(atPath: root + "/dune", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: root + "/emma/reviews/r1", withDestinationPath: outside + "/reviews/r1")
        try FileManager.default.createSymbolicLink(atPath: root + "/loop", withDestinationPath: root)
        let listed = WatchedFolders.list(root: root, subcollections: Self.subcollections)
        #expect(listed.sorted() == ["", "emma", "emma/reviews"])
        #if os(Linux)
        // And the watcher itself refuses a linked folder it is handed.
        #expect(throws: InotifyWatcher.StartError.self) {
            _ = try InotifyWatcher(root: root, folders: ["", "dune"], instance: 1)
        }
        #endif
    }
}
