import Foundation
import BooksyncCodable
import BooksyncCore
@_spi(Remote) import BooksyncKit
@_spi(Remote) import BooksyncStore
import BooksyncTestSupport

/// A DTO with every kind of value a record holds.
struct ShelfBook: Codable, Sendable, Equatable {
    var id: String
    var title: String
    var author: String
    var genre: String
    var published: Date?
    var cover: Data?
    var setting: GeoPoint?
    var authorRef: DocumentReference?
    var printing: Printing?
    var tags: [String]?
    var pages: Int?
    var rating: Double?

    struct Printing: Codable, Sendable, Equatable {
        var copies: Int
        var publisher: DocumentReference?
    }

    static func sample(_ id: String = "dune", title: String = "Dune") -> ShelfBook {
        ShelfBook(id: id, title: title, author: "Frank Herbert", genre: "science fiction",
                  published: Date(timeIntervalSince1970: -139_449_600),  // 1965-08-01
                  cover: Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF]),
                  setting: GeoPoint(latitude: 24.5, longitude: -3.25),
                  authorRef: DocumentReference(path: "authors/frank-herbert"),
                  printing: Printing(copies: 2200, publisher: DocumentReference(path: "publishers/chilton")),
                  tags: ["desert", "ecology"], pages: 412, rating: 4.25)
    }
}

/// A DTO without an id property: saved with `save(_:id:)`.
struct Untagged: Codable, Sendable, Equatable {
    var title: String
    var author: String
    var genre: String
}

/// A collection directory in a scratch directory, and a store over it whose
/// remote is the in-memory `ScriptedRemote`.
struct StoreWorkspace {
    let scratch: ScratchDirectory
    let collection: CollectionDirectory
    let remote: ScriptedRemote

    init(remote: ScriptedRemote = ScriptedRemote()) throws {
        scratch = try ScratchDirectory()
        collection = try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
        self.remote = remote
    }

    func store<DTO>(_ type: DTO.Type = ShelfBook.self) -> RecordStore<DTO> {
        let remote = self.remote
        return RecordStore<DTO>(directory: scratch.path) { _ in remote }
    }

    var root: String { collection.paths.root }

    func bytes(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: root + "/" + name).map(Array.init)
    }

    func write(_ name: String, _ text: String) throws {
        try scratch.write(name, text)
    }

    /// A remote document holding `json` at `revision`.
    func document(_ id: String, _ json: String, revision: String) throws -> RemoteDocument {
        let recordID = try RecordID(id)
        return RemoteDocument(id: recordID, revision: revision, content: .record(try collection.rules.load(Array(json.utf8), id: recordID).get()))
    }
}
