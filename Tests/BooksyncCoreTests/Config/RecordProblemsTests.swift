import Testing
@testable import BooksyncCore

/// `validate` promises every problem of a file (<doc:Commands>): the record parser
/// goes on after an error in a value the grammar accepts, and the schema and
/// Firestore's limits are checked on the rest; a syntax error still stops it.
@Suite struct RecordProblemsTests {
    static let id = try! RecordID("dune")

    static func problems(_ text: String) -> [String] {
        switch RecordRules().load(Array(text.utf8), id: id) {
        case .success: []
        case .failure(let problems): problems.diagnostics.map(\.description)
        }
    }

    static let cases: [(name: String, text: String, problems: [String])] = [
        ("two bad values and a missing field: all three", """
            {"id": "dune",
             "title": {"$timestamp": "garbage"},
             "n": 99999999999999999999,
             "genre": "sf"}
            """, [
                "2:11: $timestamp: 'garbage' is not an RFC 3339 timestamp like 2024-05-01T12:00:00.000000Z",
                "3:7: integer 99999999999999999999 does not fit in 64 bits; write it as a double (99999999999999999999.0) or a string",
                "missing required field 'author' (string)",
            ]),
        ("a bad value, a wrong type, an id mismatch and two Firestore limits", """
            {"id": "other", "title": 5, "author": "a", "genre": "g",
             "big": 1e999, "__x__": 1, "nested": [[1]]}
            """, [
                "2:9: number 1e999 is too large for a double",
                "field 'id' is \"other\" but the file name says \"dune\"; rename the file or fix the field",
                "field 'title' must be string, found integer",
                "field '__x__': names of the form __name__ are reserved by Firestore",
                "field 'nested[0]' is an array inside an array; Firestore does not allow that (wrap it in a map)",
            ]),
        ("unreadable required fields are not also reported as the wrong type or missing", """
            {"id": {"$bytes": "!"}, "title": {"$timestamp": "x"}, "author": 1e-999, "genre": "g"}
            """, [
                "1:8: $bytes needs a base64 string",
                "1:34: $timestamp: 'x' is not an RFC 3339 timestamp like 2024-05-01T12:00:00.000000Z",
                "1:65: number 1e-999 is too small for a double (it would become 0.0; the smallest is 5e-324)",
            ]),
        ("a duplicate key: the first value stays and is checked", """
            {"id": "dune", "title": 1, "author": "a", "genre": "g", "title": "t"}
            """, [
                "1:57: duplicate key 'title'",
                "field 'title' must be string, found integer",
            ]),
        ("an error inside a tagged payload is reported once", """
            {"id": "dune", "title": "t", "author": "a", "genre": "g",
             "at": {"$geopoint": {"latitude": 1e999, "longitude": 0}}}
            """, [
                "2:35: number 1e999 is too large for a double",
            ]),
        ("a bad value deep in a map keeps the map's type", """
            {"id": "dune", "title": "t", "author": "a", "genre": {"x": 99999999999999999999}}
            """, [
                "1:60: integer 99999999999999999999 does not fit in 64 bits; write it as a double (99999999999999999999.0) or a string",
                "field 'genre' must be string, found map",
            ]),
        ("a syntax error stops the parser: nothing after it can be trusted", """
            {"id": "dune", "title": {"$timestamp": "x"}, "author": 1 "genre": "g"}
            """, [
                "1:58: expected ',' or '}'",
            ]),
        ("a lone tagged value is a tag error, not 'expected a JSON object'", """
            {"$timestamp": "x"}
            """, [
                "1:1: $timestamp: 'x' is not an RFC 3339 timestamp like 2024-05-01T12:00:00.000000Z",
            ]),
    ]

    @Test(arguments: cases)
    func everyProblemIsListed(_ name: String, _ text: String, _ expected: [String]) {
        #expect(Self.problems(text) == expected, "\(name)")
    }

    /// An unreadable required field of any declared type is reported once,
    /// by its own error: the stand-in the schema check sees is of that type.
    @Test(arguments: FieldType.allCases)
    func unreadableFieldsOfEveryTypeAreNotReportedTwice(_ type: FieldType) {
        #expect(type.accepts(type.standIn))
        let rules = RecordRules(schema: RecordSchema(requiredFields: [FieldRequirement(name: "f", type: type)]))
        guard case .failure(let problems) = rules.load(Array(#"{"id": "dune", "f": {"$bytes": 1}}"#.utf8), id: Self.id) else {
            Issue.record("a bad tag loaded")
            return
        }
        #expect(problems.diagnostics.map(\.description) == ["1:21: $bytes needs a base64 string"], "\(type)")
    }

    /// Each collected position is a scan from the start of the text: a hostile
    /// file with a million bad numbers must not cost a million scans.
    @Test func valueErrorsAreCappedWithANote() {
        let text = "{\"id\": \"dune\", \"n\": [" + Array(repeating: "1e999", count: 5_000).joined(separator: ",") + "]}"
        let problems = Self.problems(text)
        #expect(problems.count == JSONParser.maximumValueErrors + 4, "100 errors, the note, then title, author and genre missing")
        #expect(problems[JSONParser.maximumValueErrors].hasSuffix("more value errors follow; only the first 100 are listed"))
        #expect(problems.suffix(3) == [
            "missing required field 'title' (string)", "missing required field 'author' (string)", "missing required field 'genre' (string)",
        ])
    }

    /// `parse` (fmt, state files) and `parseObject` still stop at the first
    /// error: fmt must never rewrite a file whose values it could not read.
    @Test func strictParsersStillStopAtTheFirstValueError() {
        let text = Array(#"{"a": 1e999, "b": {"$timestamp": "x"}}"#.utf8)
        guard case .failure(let diagnostic) = RecordRules().parse(text) else {
            Issue.record("parse accepted a value error")
            return
        }
        #expect(diagnostic.description == "1:7: number 1e999 is too large for a double")
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parseObject(text) }
        let record = try? JSONParser.parseRecord(text)
        #expect(record?.valueErrors.count == 2)
        #expect(record?.unreadableFields == ["a", "b"])
        #expect(record?.fields == ["a": .null, "b": .null])
    }
}
