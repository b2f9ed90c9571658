import Foundation
import Testing
import BooksyncCodable
import BooksyncCore
@_spi(Remote) import BooksyncKit
@_spi(Remote) import BooksyncStore
import BooksyncTestSupport

/// A typed store reaches subcollection records by path id
/// (`dune/reviews/r1`), with a DTO of their own, exactly as the CLI does.
@Suite struct RecordStoreSubcollectionTests {
    struct Review: Codable, Sendable, Equatable {
        var id: String
        var rating: Int
        var text: String?
    }

    static func workspace() throws -> StoreWorkspace {
        let workspace = try StoreWorkspace()
        let config = CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books"),
                                      subcollections: try Subcollections.parse(paths: ["reviews"], requirements: ["reviews:rating:integer"]))
        try FileSystem.writeAtomically(config.encoded(), to: workspace.collection.paths.config)
        return workspace
    }

    @Test func reviewsAreSavedReadAndDeletedByPathID() async throws {
        let workspace = try Self.workspace()
        let reviews = workspace.store(Review.self)
        let books = workspace.store(ShelfBook.self)
        _ = try await books.save(ShelfBook.sample())
        _ = try await reviews.save(Review(id: "r1", rating: 5, text: "great"), id: "dune/reviews/r1")
        #expect(String(decoding: workspace.bytes("dune/reviews/r1.json") ?? [], as: UTF8.self)
                == "{\n  \"id\": \"r1\",\n  \"rating\": 5,\n  \"text\": \"great\"\n}\n")
        #expect(try await reviews.get("dune/reviews/r1") == Review(id: "r1", rating: 5, text: "great"))
        // all() lists the collection's own records; reviews are not books.
        #expect(try await books.all().map(\.id) == ["dune"])
        // The subcollection's schema applies: rating is required.
        await #expect(throws: RecordStoreError.self) { _ = try await workspace.store(Untagged.self).save(Untagged(title: "t", author: "a", genre: "g"), id: "dune/reviews/r2") }
        #expect(workspace.bytes("dune/reviews/r2.json") == nil)
        #expect(try await reviews.delete("dune/reviews/r1"))
        #expect(try await reviews.get("dune/reviews/r1") == nil)
        // Unconfigured subcollections are refused, as by every command.
        await #expect(throws: RecordStoreError.self) { _ = try await reviews.get("dune/ratings/r1") }
    }

    @Test func aLinkedFolderIsNeverWrittenThrough() async throws {
        let workspace = try Self.workspace()
        let outside = try ScratchDirectory()
        try FileManager.default.createSymbolicLink(atPath: workspace.root + "/dune", withDestinationPath: outside.path)
        let reviews = workspace.store(Review.self)
        await #expect(throws: RecordStoreError.self) { _ = try await reviews.save(Review(id: "r1", rating: 1), id: "dune/reviews/r1") }
        await #expect(throws: RecordStoreError.self) { _ = try await reviews.get("dune/reviews/r1") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }
}
