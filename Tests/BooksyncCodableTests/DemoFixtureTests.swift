import BooksyncCodable
import BooksyncCore
import BooksyncTestSupport
import Foundation
import Testing

/// The demo catalogue (fixtures/demo/books, every Firestore value type) read
/// as booksync reads it and decoded into an app's DTO.
@Suite struct DemoFixtureTests {
    struct BookDTO: Codable, Equatable {
        struct Printing: Codable, Equatable {
            var copies: Int
            var publisher: DocumentReference
        }
        struct Series: Codable, Equatable {
            var name: String
            var position: Int
        }
        struct Room: Codable, Equatable {
            var name: String
            var statues: Int
        }
        var id: String
        var title: String
        var author: String
        var genre: String
        var authorRef: DocumentReference?
        var awards: [String]?
        var coordinates: GeoPoint?
        var cover: Data?
        var firstPrinting: Printing?
        var inPrint: Bool?
        var isbn: String?
        var language: String?
        var lastBorrowed: Date?
        var maxCopies: Double?
        var meta: [String: String]?
        var minPrice: Double?
        var notes: String?
        var originalTitle: String?
        var pages: Int?
        var pagesPerStory: [Double]?
        var published: Date?
        var rating: Double?
        var ratingVariance: Double?
        var readingTimeHours: Double?
        var rooms: [Room]?
        var sales: Int64?
        var sequel: DocumentReference?
        var series: Series?
        var setting: GeoPoint?
        var signed: Bool?
        var tags: [String]?
        var tags2: [String]?
        var translations: Int?
        var translator: String?
        var updated: Date?
        var year: Int16?
    }

    /// A DTO that declares only what the app needs, without `id`.
    struct Summary: Codable, Equatable {
        var title: String
        var year: Int?
    }

    static let directory = Fixtures.root + "/demo/books"

    static func load(_ fileName: String) throws -> CanonicalRecord {
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + fileName))
        let id = try #require(try RecordID.fromFileName(fileName))
        switch RecordRules().load([UInt8](data), id: id) {
        case .success(let record): return record
        case .failure(let problems): throw problems
        }
    }

    static func date(_ text: String) throws -> Date {
        let micros = try Timestamp(rfc3339: text).microsecondsSinceEpoch
        return Date(timeIntervalSince1970: Double(micros) / 1e6)
    }

    @Test func duneHasReferencesBytesAndANestedMap() throws {
        let dune = try RecordDecoder().decode(BookDTO.self, from: Self.load("dune.json"), file: "books/dune.json")
        #expect(dune.id == "dune")
        #expect(dune.authorRef == DocumentReference(path: "authors/frank-herbert"))
        #expect(dune.cover == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        #expect(dune.firstPrinting == BookDTO.Printing(copies: 2200, publisher: DocumentReference(path: "publishers/chilton")))
        #expect(dune.published == (try Self.date("1965-08-01T00:00:00Z")))
        #expect(dune.sequel == DocumentReference(path: "books/dune-messiah"))
        #expect(dune.awards == ["Hugo", "Nebula"])
        #expect(dune.rating == 4.25 && dune.year == 1965 && dune.coordinates == nil && dune.updated == nil)
    }

    @Test func hyperionHasAGeoPointAndMicroseconds() throws {
        let hyperion = try RecordDecoder().decode(BookDTO.self, from: Self.load("hyperion.json"))
        #expect(hyperion.coordinates == GeoPoint(latitude: -33.8688, longitude: 151.2093))
        let updated = try #require(hyperion.updated)
        #expect(updated == (try Self.date("2024-05-01T12:00:00.123456Z")))
        let again = try RecordEncoder().encode(hyperion)
        #expect(again["updated"] == .timestamp(try Timestamp(rfc3339: "2024-05-01T12:00:00.123456Z")))
    }

    @Test func ficcionesHasInfinitiesAndIntegersReadAsDoubles() throws {
        let ficciones = try RecordDecoder().decode(BookDTO.self, from: Self.load("ficciones.json"))
        #expect(ficciones.maxCopies == .infinity && ficciones.minPrice == -.infinity)
        #expect(ficciones.pagesPerStory == [10, 12.5, 8], "10 and 8 are integers in the file, exact as Double")
    }

    /// Every demo book decodes, and the DTO encodes back to the very bytes of
    /// its file, with two differences the DTO's types decide: a null in an
    /// optional property is nil, which is left out (`lastBorrowed`), and
    /// integers read into `[Double]` come back as doubles (`pagesPerStory`).
    @Test func everyDemoBookDecodesAndEncodesBackToItsFile() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory).filter { $0.hasSuffix(".json") }.sorted()
        try #require(names.count >= 30)
        for name in names {
            let record = try Self.load(name)
            let book = try RecordDecoder().decode(BookDTO.self, from: record, file: "books/\(name)")
            #expect(book.id == record.id.rawValue)
            var expected = record.fields.filter { $0.value != .null }
            if case .array(let items)? = expected["pagesPerStory"] {
                expected["pagesPerStory"] = .array(items.map { if case .integer(let n) = $0 { .double(Double(n)) } else { $0 } })
            }
            let leading = RecordSchema.books.leadingKeys
            let bytes = CanonicalRecord(id: record.id, fields: try RecordEncoder().encode(book), leadingKeys: leading).canonicalBytes
            let expectedBytes = CanonicalRecord(id: record.id, fields: expected, leadingKeys: leading).canonicalBytes
            #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: expectedBytes, as: UTF8.self), "\(name)")
            if expected == record.fields { #expect(bytes == record.canonicalBytes, "\(name)") }
        }
    }

    @Test func aDTOWithoutIdIgnoresTheRestAndEncodesWithoutId() throws {
        let record = try Self.load("%E3%82%AE%E3%83%A3%E3%83%A9%E3%82%AF%E3%82%B7%E3%83%BC.json")
        #expect(record.id.rawValue == "ギャラクシー")
        let summary = try RecordDecoder().decode(Summary.self, from: record)
        #expect(summary == Summary(title: "銀河鉄道の夜", year: 1934))
        #expect(try RecordEncoder().encode(summary) == ["title": .string("銀河鉄道の夜"), "year": .integer(1934)])
    }

    @Test func theNullFieldDecodesAsNil() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory).filter { $0.hasSuffix(".json") }
        let withNull = try names.map(Self.load).filter { $0.fields["lastBorrowed"] == .null }
        try #require(!withNull.isEmpty, "a demo book has \"lastBorrowed\": null")
        for record in withNull {
            #expect(try RecordDecoder().decode(BookDTO.self, from: record).lastBorrowed == nil)
        }
    }
}
