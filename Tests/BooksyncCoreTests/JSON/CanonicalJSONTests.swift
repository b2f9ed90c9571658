import Testing
@testable import BooksyncCore

/// The canonical writer on values that trip up JSON writers.
@Suite struct CanonicalJSONTests {
    static let inlineCases: [(Value, String)] = [
        (.string("plain"), #""plain""#),
        (.string("quote \" backslash \\ slash /"), #""quote \" backslash \\ slash /""#),
        (.string("tab\tnewline\ncr\rbs\u{08}ff\u{0C}"), #""tab\tnewline\ncr\rbs\bff\f""#),
        (.string("nul\u{00}unit\u{1F}del\u{7F}"), "\"nul\\u0000unit\\u001fdel\u{7F}\""),
        (.string("unicode é 漢字 🚀 \u{2028}"), "\"unicode é 漢字 🚀 \u{2028}\""),
        (.string("e\u{301} vs é"), "\"e\u{301} vs é\""),
        (.integer(0), "0"),
        (.integer(-1), "-1"),
        (.integer(Int64.max), "9223372036854775807"),
        (.integer(Int64.min), "-9223372036854775808"),
        (.double(0.0), "0.0"),
        (.double(-0.0), "0.0"),  // Firestore keeps no negative zero: a spelling of 0.0
        (.double(1.0), "1.0"),
        (.double(0.1), "0.1"),
        (.double(-2.5), "-2.5"),
        (.double(1e300), "1e300"),
        (.double(1e-7), "1e-7"),
        (.double(1.7976931348623157e308), "1.7976931348623157e308"),
        (.double(.leastNonzeroMagnitude), "5e-324"),
        (.double(123456789.0), "123456789.0"),
        (.double(1e16), "1e16"),
        (.double(.nan), #"{"$double": "NaN"}"#),
        (.double(.infinity), #"{"$double": "Infinity"}"#),
        (.double(-.infinity), #"{"$double": "-Infinity"}"#),
        (.bool(true), "true"),
        (.null, "null"),
        (.timestamp(Timestamp(microsecondsSinceEpoch: 1_714_564_800_123_456)), #"{"$timestamp": "2024-05-01T12:00:00.123456Z"}"#),
        (.timestamp(Timestamp(microsecondsSinceEpoch: -1)), #"{"$timestamp": "1969-12-31T23:59:59.999999Z"}"#),
        (.bytes([0, 1, 2, 253, 254, 255]), #"{"$bytes": "AAEC/f7/"}"#),
        (.bytes([]), #"{"$bytes": ""}"#),
        (.reference("authors/frank-herbert"), #"{"$reference": "authors/frank-herbert"}"#),
        (.geoPoint(latitude: 10.5, longitude: -3.25), #"{"$geopoint": {"latitude": 10.5, "longitude": -3.25}}"#),
        (.array([]), "[]"),
        (.map([:]), "{}"),
    ]

    @Test(arguments: inlineCases)
    func inlineValue(value: Value, expected: String) {
        #expect(CanonicalJSON.encodeInline(value) == expected)
    }

    @Test(arguments: inlineCases)
    func valueRoundTripsThroughParser(value: Value, expected: String) throws {
        let bytes = CanonicalJSON.encode(["v": value])
        let parsed = try JSONParser.parseObject(bytes)
        #expect(parsed["v"] == value)
        #expect(CanonicalJSON.encode(parsed) == bytes)
    }

    @Test func recordLayout() {
        let fields: Fields = [
            "zeta": .integer(1),
            "genre": .string("sf"),
            "Alpha": .bool(false),
            "author": .string("Frank Herbert"),
            "id": .string("dune"),
            "title": .string("Dune"),
            "émigré": .null,
            "nested": .map(["b": .array([.map([:]), .array([])]), "a": .map(["y": .integer(2), "x": .double(1)])]),
            "empty": .array([]),
            "published": .timestamp(Timestamp(microsecondsSinceEpoch: 0)),
        ]
        let expected = """
            {
              "id": "dune",
              "title": "Dune",
              "author": "Frank Herbert",
              "genre": "sf",
              "Alpha": false,
              "empty": [],
              "nested": {
                "a": {
                  "x": 1.0,
                  "y": 2
                },
                "b": [
                  {},
                  []
                ]
              },
              "published": {"$timestamp": "1970-01-01T00:00:00.000000Z"},
              "zeta": 1,
              "émigré": null
            }

            """
        let bytes = CanonicalJSON.encode(fields, leadingKeys: RecordSchema.books.leadingKeys)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
    }

    @Test func keysSortByUTF8BytesNotByUnicodeCollation() {
        // "Z" (0x5A) < "a" (0x61) < "é" (0xC3 0xA9) < "😀" (0xF0…); U+FB01 (0xEF…) sorts before U+1F600.
        let fields: Fields = ["😀": .null, "é": .null, "a": .null, "Z": .null, "ﬁ": .null]
        #expect(CanonicalJSON.orderedKeys(fields, leadingKeys: []) == ["Z", "a", "é", "ﬁ", "😀"])
    }

    @Test func canonicalBytesAreStable() throws {
        let messy = Array(#"{"genre":"sf" , "id":"x","title":"T","author":"A","n":[1,2.50,{"b":1,"a":[]}],"s":"\u00e9\/"}"#.utf8)
        let once = CanonicalJSON.encode(try JSONParser.parseObject(messy), leadingKeys: RecordSchema.books.leadingKeys)
        let twice = CanonicalJSON.encode(try JSONParser.parseObject(once), leadingKeys: RecordSchema.books.leadingKeys)
        #expect(once == twice)
        #expect(String(decoding: once, as: UTF8.self).contains(#""s": "é/""#))
    }
}
