import BooksyncCodable
import BooksyncCore
import Foundation
import Testing

@Suite struct RecordCodableSmokeTests {
    struct Book: Codable, Equatable {
        var id: String
        var title: String
        var published: Date
        var cover: Data?
        var coordinates: GeoPoint?
        var authorRef: DocumentReference
        var tags: [String]
    }

    @Test func roundTrip() throws {
        let book = Book(id: "dune", title: "Dune", published: Date(timeIntervalSince1970: -139_449_600), cover: Data([1, 2, 3]),
                        coordinates: GeoPoint(latitude: 1, longitude: 2), authorRef: DocumentReference(path: "authors/frank-herbert"),
                        tags: ["a", "b"])
        let fields = try RecordEncoder().encode(book)
        #expect(fields["published"] == .timestamp(try Timestamp(rfc3339: "1965-08-01T00:00:00Z")), "\(String(describing: fields["published"]))")
        #expect(try RecordDecoder().decode(Book.self, from: fields) == book)
    }
}
