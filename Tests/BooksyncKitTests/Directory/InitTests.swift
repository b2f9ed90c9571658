import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

@Suite struct InitTests {
    @Test func createsStateFilesAndRefusesTwice() throws {
        let scratch = try ScratchDirectory()
        let config = CollectionConfig(remote: FirestoreTarget(project: "demo", collectionPath: "users/u1/books"))
        let collection = try CollectionDirectory.initialize(at: scratch.path, config: config)
        #expect(collection.config == config)
        for file in [".booksync/config.json", ".booksync/manifest.json", ".booksync/.gitignore"] {
            #expect(FileManager.default.fileExists(atPath: scratch.path + "/" + file), "\(file)")
        }
        #expect(try scratch.read(".booksync/.gitignore").contains("/index"))
        #expect(throws: BooksyncError.alreadyInitialized(scratch.path)) { try CollectionDirectory.initialize(at: scratch.path, config: config) }
    }

    @Test func rejectsADocumentPathAsCollection() throws {
        let scratch = try ScratchDirectory()
        let config = CollectionConfig(remote: FirestoreTarget(project: "demo", collectionPath: "users/u1"))
        #expect(throws: BooksyncError.self) { try CollectionDirectory.initialize(at: scratch.path, config: config) }
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/.booksync"))
    }
}
