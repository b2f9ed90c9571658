import BooksyncCodable
import BooksyncCore
import Foundation
import Testing

/// Every supported Swift type through encoder → canonical file → loader →
/// decoder, with the record value each becomes and byte-identical files on a
/// second encoding.
@Suite struct RoundTripTests {
    struct Box<V: Codable>: Codable {
        var value: V
    }

    /// One row: a value, the record value it must become (nil: no field at
    /// all), and a check that the decoded value is the same.
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let run: @Sendable () throws -> Void
        var testDescription: String { name }
    }

    static func row<V: Codable & Equatable & Sendable>(_ name: String, _ value: V, _ expected: Value?) -> Row {
        Row(name: name) {
            let fields = try RecordEncoder().encode(Box(value: value))
            #expect(fields["value"] == expected, "\(name): \(String(describing: fields["value"]))")
            let (decoded, file) = try RecordFiles.roundTrip(Box(value: value))
            // NaN is not equal to itself: compare what the two encode to.
            if let expected, case .double(let d) = expected, d.isNaN {
                #expect(try RecordEncoder().encode(decoded) == fields, "\(name)")
            } else {
                #expect(decoded.value == value, "\(name)\n\(String(decoding: file, as: UTF8.self))")
            }
        }
    }

    enum Genre: String, Codable, Sendable { case fantasy, scienceFiction = "science fiction" }
    struct Printing: Codable, Equatable, Sendable {
        var copies: Int
        var publisher: DocumentReference
    }

    static func date(_ text: String) -> Date {
        let micros = try! Timestamp(rfc3339: text).microsecondsSinceEpoch
        return Date(timeIntervalSince1970: Double(micros) / 1e6)
    }

    static let rows: [Row] = [
        row("String", "Dune", .string("Dune")),
        row("empty String", "", .string("")),
        row("String with quotes, controls and CJK", "銀河 \"q\" \u{0}\u{1B}\n", .string("銀河 \"q\" \u{0}\u{1B}\n")),
        row("Bool", true, .bool(true)),
        row("Int", 42, .integer(42)),
        row("Int.min", Int.min, .integer(Int64.min)),
        row("Int8.min", Int8.min, .integer(-128)),
        row("Int16.max", Int16.max, .integer(32767)),
        row("Int32.min", Int32.min, .integer(-2_147_483_648)),
        row("Int64.max", Int64.max, .integer(.max)),
        row("UInt", UInt(7), .integer(7)),
        row("UInt8.max", UInt8.max, .integer(255)),
        row("UInt16.max", UInt16.max, .integer(65535)),
        row("UInt32.max", UInt32.max, .integer(4_294_967_295)),
        row("UInt64 at Int64.max", UInt64(Int64.max), .integer(.max)),
        row("Int128 at Int64.min", Int128(Int64.min), .integer(.min)),
        row("UInt128", UInt128(12), .integer(12)),
        row("Double", 4.25, .double(4.25)),
        row("Double without fraction stays a double", 4.0, .double(4)),
        row("Double NaN", Double.nan, .double(.nan)),
        row("Double infinity", Double.infinity, .double(.infinity)),
        row("Double -infinity", -Double.infinity, .double(-.infinity)),
        row("Double 1e300", 1e300, .double(1e300)),
        row("Double subnormal", Double.leastNonzeroMagnitude, .double(.leastNonzeroMagnitude)),
        row("Float", Float(1.5), .double(1.5)),
        row("Float 0.1 (widened exactly)", Float(0.1), .double(Double(Float(0.1)))),
        row("Float NaN", Float.nan, .double(.nan)),
        row("Float -infinity", -Float.infinity, .double(-.infinity)),
        row("Float max", Float.greatestFiniteMagnitude, .double(Double(Float.greatestFiniteMagnitude))),
        row("Date", date("1965-08-01T00:00:00Z"), .timestamp(try! Timestamp(rfc3339: "1965-08-01T00:00:00Z"))),
        row("Date with microseconds", date("2024-05-01T12:00:00.123456Z"), .timestamp(try! Timestamp(rfc3339: "2024-05-01T12:00:00.123456Z"))),
        row("Date before 1970", date("1901-12-13T20:45:52.000001Z"), .timestamp(try! Timestamp(rfc3339: "1901-12-13T20:45:52.000001Z"))),
        row("Timestamp, exact in year 9999", Timestamp.maximum, .timestamp(.maximum)),
        row("Timestamp at year 1", Timestamp.minimum, .timestamp(.minimum)),
        row("Data", Data([0x89, 0x50, 0x4E, 0x47, 0, 0xFF]), .bytes([0x89, 0x50, 0x4E, 0x47, 0, 0xFF])),
        row("empty Data", Data(), .bytes([])),
        row("GeoPoint", GeoPoint(latitude: -33.8688, longitude: 151.2093), .geoPoint(latitude: -33.8688, longitude: 151.2093)),
        row("GeoPoint at the poles' edge", GeoPoint(latitude: 90, longitude: -180), .geoPoint(latitude: 90, longitude: -180)),
        row("DocumentReference", DocumentReference(path: "authors/frank-herbert"), .reference("authors/frank-herbert")),
        row("DocumentReference nested", DocumentReference(path: "authors/x/letters/y"), .reference("authors/x/letters/y")),
        row("URL", URL(string: "https://example.com/a?b=c")!, .string("https://example.com/a?b=c")),
        row("[String]", ["a", "b"], .array([.string("a"), .string("b")])),
        row("empty array", [Int](), .array([])),
        row("[Int?] keeps nil as null", [1, nil, 3] as [Int?], .array([.integer(1), .null, .integer(3)])),
        row("[Date]", [date("2020-01-01T00:00:00Z")], .array([.timestamp(try! Timestamp(rfc3339: "2020-01-01T00:00:00Z"))])),
        row("[String: Int]", ["b": 2, "a": 1], .map(["a": .integer(1), "b": .integer(2)])),
        row("[Int: String] keys as decimal text", [1: "one", -2: "minus two"], .map(["1": .string("one"), "-2": .string("minus two")])),
        row("empty [String: Int]", [String: Int](), .map([:])),
        row("[String: [GeoPoint]]", ["stops": [GeoPoint(latitude: 1, longitude: 2)]], .map(["stops": .array([.geoPoint(latitude: 1, longitude: 2)])])),
        row("nested struct", Printing(copies: 2200, publisher: DocumentReference(path: "publishers/chilton")),
            .map(["copies": .integer(2200), "publisher": .reference("publishers/chilton")])),
        row("[struct]", [Printing(copies: 1, publisher: DocumentReference(path: "p/q"))],
            .array([.map(["copies": .integer(1), "publisher": .reference("p/q")])])),
        row("String enum", Genre.scienceFiction, .string("science fiction")),
        row("Optional present", Int?.some(5), .integer(5)),
        // A generic property is not declared optional, so the synthesized code
        // calls encode, not encodeIfPresent: nil is written as null (as JSONEncoder does).
        row("Optional nil through a generic property is null", Int?.none, .null),
    ]

    struct Optionals: Codable, Equatable {
        var count: Int?
        var published: Date?
        var coordinates: GeoPoint?
        var printing: Printing?
    }

    /// A property declared optional is left out when nil (`encodeIfPresent`);
    /// absent and null both decode as nil.
    @Test func nilOptionalPropertiesAreLeftOut() throws {
        let empty = Optionals()
        #expect(try RecordEncoder().encode(empty) == [:])
        let (decoded, _) = try RecordFiles.roundTrip(empty)
        #expect(decoded == empty)
        let nulls: Fields = ["count": .null, "published": .null, "coordinates": .null, "printing": .null]
        #expect(try RecordDecoder().decode(Optionals.self, from: nulls) == empty)
        let full = Optionals(count: 1, published: Self.date("2001-01-01T00:00:00Z"), coordinates: GeoPoint(latitude: 0, longitude: 0),
                             printing: Printing(copies: 1, publisher: DocumentReference(path: "a/b")))
        #expect(try RecordFiles.roundTrip(full).decoded == full)
    }

    /// An explicit `encodeNil` writes null; `decodeNil` is true for null only.
    @Test func explicitNullIsWrittenAndRead() throws {
        struct Explicit: Codable, Equatable {
            var note: String?
            enum CodingKeys: String, CodingKey { case note }
            init(note: String?) { self.note = note }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                note = try container.decodeNil(forKey: .note) ? nil : container.decode(String.self, forKey: .note)
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                if let note { try container.encode(note, forKey: .note) } else { try container.encodeNil(forKey: .note) }
            }
        }
        #expect(try RecordEncoder().encode(Explicit(note: nil)) == ["note": .null])
        let (decoded, file) = try RecordFiles.roundTrip(Explicit(note: nil))
        #expect(decoded == Explicit(note: nil))
        #expect(String(decoding: file, as: UTF8.self).contains("\"note\": null"))
        #expect(try RecordDecoder().decode(Explicit.self, from: ["note": .string("x")]) == Explicit(note: "x"))
    }

    @Test(arguments: rows)
    func roundTrip(_ row: Row) throws {
        try row.run()
    }

    /// The canonical file of a DTO with every type, as a user sees it.
    @Test func fileOfEveryType() throws {
        struct Everything: Codable, Equatable {
            var id: String
            var title: String
            var published: Date
            var cover: Data
            var coordinates: GeoPoint
            var authorRef: DocumentReference
            var pages: Int
            var rating: Double
            var maxCopies: Double
            var inPrint: Bool
            var printing: Printing
            var tags: [String]
            var notes: String?
        }
        let value = Everything(id: "dune", title: "Dune", published: Self.date("1965-08-01T00:00:00.000001Z"), cover: Data([0x89, 0x50]),
                               coordinates: GeoPoint(latitude: 1.5, longitude: -2), authorRef: DocumentReference(path: "authors/frank-herbert"),
                               pages: 412, rating: 4.25, maxCopies: .infinity, inPrint: true,
                               printing: Printing(copies: 2200, publisher: DocumentReference(path: "publishers/chilton")), tags: ["desert"], notes: nil)
        let (decoded, file) = try RecordFiles.roundTrip(value, id: "dune")
        #expect(decoded == value)
        #expect(String(decoding: file, as: UTF8.self) == """
            {
              "id": "dune",
              "authorRef": {"$reference": "authors/frank-herbert"},
              "coordinates": {"$geopoint": {"latitude": 1.5, "longitude": -2.0}},
              "cover": {"$bytes": "iVA="},
              "inPrint": true,
              "maxCopies": {"$double": "Infinity"},
              "pages": 412,
              "printing": {
                "copies": 2200,
                "publisher": {"$reference": "publishers/chilton"}
              },
              "published": {"$timestamp": "1965-08-01T00:00:00.000001Z"},
              "rating": 4.25,
              "tags": [
                "desert"
              ],
              "title": "Dune"
            }

            """)
    }
}
