import BooksyncCodable
import BooksyncCore
import Foundation
import Testing

/// Decoding and encoding errors carry the coding path of the offending value,
/// and a record's errors read as one sentence naming the file and the field.
@Suite struct ErrorPathTests {
    struct Room: Codable {
        var name: String
        var statues: Int
    }
    struct Printing: Codable {
        var copies: Int
        var publisher: DocumentReference
    }
    struct Book: Codable {
        var id: String
        var title: String
        var published: Date?
        var pages: Int8?
        var rating: Double?
        var firstPrinting: Printing?
        var rooms: [Room]?
        var shelves: [[Int]]?
    }

    static let valid: Fields = ["id": .string("dune"), "title": .string("Dune")]

    /// The error's kind as text, to compare in a table.
    static func kind(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch: "typeMismatch"
        case .valueNotFound: "valueNotFound"
        case .keyNotFound(let key, _): "keyNotFound(\(key.stringValue))"
        case .dataCorrupted: "dataCorrupted"
        @unknown default: "unknown"
        }
    }

    static let decodingCases: [(String, [String: Value?], String, String)] = [
        ("wrong type", ["published": .string("1965")], "typeMismatch",
         #"books/dune.json: published: expected a timestamp, found string "1965""#),
        ("missing key", ["firstPrinting": .map(["publisher": .reference("publishers/chilton")])], "keyNotFound(copies)",
         "books/dune.json: firstPrinting: missing required field \"copies\""),
        ("missing top-level key", ["title": nil], "keyNotFound(title)",
         "books/dune.json: missing required field \"title\""),
        ("null for a required value", ["title": .null], "valueNotFound",
         "books/dune.json: title: expected a string, found null"),
        ("integer overflow: 300 into Int8", ["pages": .integer(300)], "dataCorrupted",
         "books/dune.json: pages: integer 300 does not fit in Int8 (-128...127)"),
        ("a double is not an integer, however round", ["pages": .double(4)], "typeMismatch",
         "books/dune.json: pages: expected an integer, found double 4.0"),
        ("integer without an exact Double", ["rating": .integer(9_007_199_254_740_993)], "dataCorrupted",
         "books/dune.json: rating: integer 9007199254740993 has no exact Double value; write it as a double"),
        ("index in the path", ["rooms": .array([.map(["name": .string("a"), "statues": .integer(1)]),
                                                .map(["name": .string("b"), "statues": .string("four")])])], "typeMismatch",
         #"books/dune.json: rooms[1].statues: expected an integer, found string "four""#),
        ("nested array index in the path", ["shelves": .array([.array([.integer(1)]), .array([.integer(2), .bool(true)])])], "typeMismatch",
         "books/dune.json: shelves[1][1]: expected an integer, found boolean true"),
        ("missing key inside an array element", ["rooms": .array([.map(["name": .string("a")])])], "keyNotFound(statues)",
         "books/dune.json: rooms[0]: missing required field \"statues\""),
        ("a map where an array belongs", ["rooms": .map([:])], "typeMismatch",
         "books/dune.json: rooms: expected an array, found map of 0"),
        ("a string where a reference belongs", ["firstPrinting": .map(["copies": .integer(1), "publisher": .string("publishers/x")])],
         "typeMismatch", #"books/dune.json: firstPrinting.publisher: expected a reference, found string "publishers/x""#),
        ("a reference that is no document path", ["firstPrinting": .map(["copies": .integer(1), "publisher": .reference("publishers")])],
         "dataCorrupted", #"books/dune.json: firstPrinting.publisher: reference "publishers" is not a document path"#),
    ]

    @Test func decodingErrorsNameFileAndField() throws {
        let record = CanonicalRecord(id: try RecordID("dune"), fields: Self.valid, leadingKeys: ["id"])
        for (name, change, kind, sentence) in Self.decodingCases {
            var fields = Self.valid
            for (key, value) in change { fields[key] = value }
            let changed = CanonicalRecord(id: record.id, fields: fields, leadingKeys: ["id"])
            do {
                _ = try RecordDecoder().decode(Book.self, from: changed, file: "books/dune.json")
                Issue.record("\(name): decoded")
            } catch {
                #expect(Self.kind(error.underlying) == kind, "\(name)")
                #expect(error.description == sentence, "\(name)")
            }
        }
    }

    @Test func codingPathsAreTheStandardOnes() throws {
        let fields = Self.valid.merging(["rooms": .array([.map(["name": .string("a"), "statues": .integer(-1)]),
                                                          .map(["name": .string("b"), "statues": .double(1.5)])])]) { $1 }
        #expect {
            try RecordDecoder().decode(Book.self, from: fields)
        } throws: { error in
            guard case DecodingError.typeMismatch(let type, let context) = error else { return false }
            return type == Int.self && context.codingPath.map(\.stringValue) == ["rooms", "Index 1", "statues"]
                && context.codingPath[1].intValue == 1
        }
    }

    @Test func withoutAFileTheRecordIsNamed() throws {
        let record = CanonicalRecord(id: try RecordID("dune"), fields: ["id": .string("dune"), "title": .integer(1)], leadingKeys: ["id"])
        #expect(throws: RecordDecodingError.self) { try RecordDecoder().decode(Book.self, from: record) }
        do {
            _ = try RecordDecoder().decode(Book.self, from: record)
        } catch {
            #expect(error.description == #"record "dune": title: expected a string, found integer 1"#)
            #expect(error.fieldPath == "title")
            #expect(error.reason == "expected a string, found integer 1")
        }
    }

    /// A record file is untrusted: a value quoted in a message cannot carry
    /// terminal escapes or hide its length.
    @Test func hostileStringsAreQuotedSafely() throws {
        let hostile = "\u{1B}]0;pwned\u{7}\u{1B}[2J" + String(repeating: "x", count: 10_000)
        let record = CanonicalRecord(id: try RecordID("evil\u{1B}[31m"), fields: ["id": .string("x"), "title": .string("t"), "pages": .string(hostile)],
                            leadingKeys: ["id"])
        do {
            _ = try RecordDecoder().decode(Book.self, from: record)
            Issue.record("decoded")
        } catch {
            let text = error.description
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(text)")
            #expect(text.count < 200, "\(text.count) characters")
            #expect(text.hasPrefix(#"record "evil\u001B[31m": pages: expected an integer, found string "\u001B]0;pwned\u0007\u001B[2J"#), "\(text)")
        }
    }

    /// Encoding errors: what a record file could not hold.
    static let encodingCases: [(String, @Sendable () throws -> Fields, [String])] = [
        ("UInt64 above Int64.max", { try RecordEncoder().encode(["n": ["deep": UInt64(Int64.max) + 1]]) }, ["n", "deep"]),
        ("Int128 below Int64.min", { try RecordEncoder().encode(["n": Int128(Int64.min) - 1]) }, ["n"]),
        ("UInt128 in an array", { try RecordEncoder().encode(["n": [UInt128.max]]) }, ["n", "Index 0"]),
        ("UInt.max in an array", { try RecordEncoder().encode(["n": [UInt(1), UInt.max]]) }, ["n", "Index 1"]),
        ("UInt64.max as a single value", { try RecordEncoder().encode(["n": Single(value: .max)]) }, ["n"]),
        ("a Timestamp after 9999", { try RecordEncoder().encode(["t": Timestamp(microsecondsSinceEpoch: Timestamp.maximum.microsecondsSinceEpoch + 1)]) }, ["t"]),
        ("a geopoint out of range", { try RecordEncoder().encode(["p": GeoPoint(latitude: 91, longitude: 0)]) }, ["p"]),
        ("a NaN geopoint", { try RecordEncoder().encode(["p": GeoPoint(latitude: .nan, longitude: 0)]) }, ["p"]),
        ("an empty reference", { try RecordEncoder().encode(["r": [DocumentReference(path: "")]]) }, ["r", "Index 0"]),
        ("a collection, not a document", { try RecordEncoder().encode(["r": DocumentReference(path: "authors")]) }, ["r"]),
        ("an empty segment", { try RecordEncoder().encode(["r": DocumentReference(path: "authors//x")]) }, ["r"]),
        ("a single $ key reads back as a tag", { try RecordEncoder().encode(["m": ["$timestamp": "2024-01-01T00:00:00Z"]]) }, ["m"]),
        ("a single unknown $ key", { try RecordEncoder().encode(["m": ["$x": 1]]) }, ["m"]),
        ("a top level that is no map", { try RecordEncoder().encode([1, 2]) }, []),
        ("a single value at the top level", { try RecordEncoder().encode(Date()) }, []),
    ]

    struct Single: Encodable {
        var value: UInt64
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    @Test func encodingErrorsCarryTheCodingPath() {
        for (name, encode, path) in Self.encodingCases {
            do {
                _ = try encode()
                Issue.record("\(name): encoded")
            } catch EncodingError.invalidValue(_, let context) {
                #expect(context.codingPath.map(\.stringValue) == path, "\(name): \(context.debugDescription)")
                #expect(!context.debugDescription.isEmpty)
            } catch {
                Issue.record("\(name): \(error)")
            }
        }
    }

    @Test func twoKeysStartingWithDollarAreAnOrdinaryMap() throws {
        struct Counts: Codable, Equatable { var m: [String: Int] }
        let (decoded, _) = try RecordFiles.roundTrip(Counts(m: ["$a": 1, "$b": 2]))
        #expect(decoded == Counts(m: ["$a": 1, "$b": 2]))
    }
}
