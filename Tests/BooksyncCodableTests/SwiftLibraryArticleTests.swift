import BooksyncCodable
import BooksyncCore
import Foundation
import Testing

/// The <doc:SwiftLibrary> example, run: a DTO to its record file and back, and
/// the error a hand-edited file gives.
@Suite struct SwiftLibraryArticleTests {
    struct BookDTO: Codable, Equatable {
        var id: String
        var title: String
        var author: String
        var genre: String
        var published: Date?
        var authorRef: DocumentReference?
        var tags: [String] = []
    }

    @Test func dtoRoundTrip() throws {
        let dune = BookDTO(id: "dune", title: "Dune", author: "Frank Herbert", genre: "science fiction",
                           published: Date(timeIntervalSince1970: -139_449_600),
                           authorRef: DocumentReference(path: "authors/frank-herbert"), tags: ["desert"])
        let fields = try RecordEncoder().encode(dune)
        let record = CanonicalRecord(id: try RecordID(dune.id), fields: fields, leadingKeys: RecordSchema.books.leadingKeys)
        #expect(String(decoding: record.canonicalBytes, as: UTF8.self) == """
            {
              "id": "dune",
              "title": "Dune",
              "author": "Frank Herbert",
              "genre": "science fiction",
              "authorRef": {"$reference": "authors/frank-herbert"},
              "published": {"$timestamp": "1965-08-01T00:00:00.000000Z"},
              "tags": [
                "desert"
              ]
            }

            """)
        #expect(try RecordDecoder().decode(BookDTO.self, from: record, file: "books/dune.json") == dune)

        let edited = CanonicalRecord(id: record.id, fields: fields.merging(["published": .string("1965")]) { $1 }, leadingKeys: ["id"])
        #expect(throws: RecordDecodingError.self) { try RecordDecoder().decode(BookDTO.self, from: edited, file: "books/dune.json") }
        do {
            _ = try RecordDecoder().decode(BookDTO.self, from: edited, file: "books/dune.json")
        } catch {
            #expect("\(error)" == #"books/dune.json: published: expected a timestamp, found string "1965""#)
        }
    }
}
