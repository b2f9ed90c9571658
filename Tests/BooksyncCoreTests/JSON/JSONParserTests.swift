import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// Malformed record files: each must fail with the exact position and a clear message.
@Suite struct JSONParserErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let input: [UInt8]
        let line: Int
        let column: Int
        let message: String
        init(_ text: String, _ line: Int, _ column: Int, _ message: String) {
            self.input = Array(text.utf8)
            self.line = line
            self.column = column
            self.message = message
        }
        init(bytes: [UInt8], _ line: Int, _ column: Int, _ message: String) {
            self.input = bytes
            self.line = line
            self.column = column
            self.message = message
        }
        var testDescription: String { String(decoding: input, as: UTF8.self) }
    }

    static let cases: [Case] = [
        Case(#"{"a": 1,}"#, 1, 9, "trailing comma before '}' is not allowed"),
        Case(#"{"a": 1 "b": 2}"#, 1, 9, "expected ',' or '}'"),
        Case("{\n  \"a\": 1,\n  \"a\": 2\n}", 3, 3, "duplicate key 'a'"),
        Case(#"{"a": [1, 2,]}"#, 1, 13, "trailing comma before ']' is not allowed"),
        Case("// note\n{}", 1, 1, "comments are not allowed in JSON"),
        Case("{\"a\": 1 /* c */}", 1, 9, "comments are not allowed in JSON"),
        Case(#"{"a": 01}"#, 1, 7, "leading zeros are not allowed in numbers"),
        Case(#"{"a": 9223372036854775808}"#, 1, 7, "integer 9223372036854775808 does not fit in 64 bits"),
        Case(#"{"a": -9223372036854775809}"#, 1, 7, "integer -9223372036854775809 does not fit in 64 bits"),
        Case(#"{"a": 1e400}"#, 1, 7, "number 1e400 is too large for a double"),
        Case(#"{"a": "x\qy"}"#, 1, 9, "invalid escape '\\q'"),
        Case(#"{"a": "\uD800"}"#, 1, 8, "unpaired surrogate \\uD800"),
        Case(#"{"a": "\uDC00"}"#, 1, 8, "unpaired surrogate \\uDC00"),
        Case(#"{"a": "\u12G4"}"#, 1, 8, "invalid \\u escape"),
        Case("{\"a\": \"tab\t\"}", 1, 11, "control character U+0009 must be escaped in a string"),
        Case(bytes: Array(#"{"a": "é"#.utf8) + [0xFF] + Array(#""}"#.utf8), 1, 9, "invalid UTF-8 byte 0xFF in a string"),
        Case(bytes: Array(#"{"a": ""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8), 1, 8, "invalid UTF-8 byte 0xC0 in a string"),
        Case(bytes: Array(#"{"a": ""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8), 1, 8, "invalid UTF-8 byte 0xED in a string"),
        Case(#"{"a": tru}"#, 1, 7, "unexpected 't'; expected a value (did you mean 'true'?)"),
        Case(#"{"a": nulls}"#, 1, 11, "unexpected 's' after 'null'"),
        Case(#"{"a": NaN}"#, 1, 7, "NaN and Infinity are not JSON"),
        Case(#"{"a": -Infinity}"#, 1, 7, "-Infinity is not JSON"),
        Case(#"{'a': 1}"#, 1, 2, "keys must use double quotes, not single quotes"),
        Case(#"{"a": 'x'}"#, 1, 7, "strings must use double quotes, not single quotes"),
        Case(#"{"a": 1} x"#, 1, 10, "unexpected 'x' after the JSON value"),
        Case(#"{"a": 1}{}"#, 1, 9, "unexpected '{' after the JSON value"),
        Case("", 1, 1, "the file is empty"),
        Case("  \n ", 2, 2, "the file is empty"),
        Case("[1]", 1, 1, "expected '{': the top level must be a JSON object"),
        Case(#"{"a": {"$timestmap": "x"}}"#, 1, 7, "unknown tag '$timestmap'"),
        Case(#"{"a": "unterminated"#, 1, 20, "unterminated string (opened at 1:7)"),
        Case("{\"a\": \"line\nbreak\"}", 1, 12, "unterminated string (opened at 1:7)"),
        Case(#"{"a" 1}"#, 1, 6, "expected ':' after key 'a'"),
        Case(#"{a: 1}"#, 1, 2, "expected a key in double quotes, found 'a'"),
        Case("{\n  \"title\": \"Dune\",\n  \"year\": 1965\n  \"genre\": \"sf\"\n}", 4, 3, "expected ',' or '}'"),
        Case("{\n\t\"t\": \"漢字\", \"x\" 1}", 2, 17, "expected ':' after key 'x'"),
        Case(#"{"a": {"$timestamp": "2024-13-01T00:00:00Z"}}"#, 1, 7, "$timestamp: '2024-13-01T00:00:00Z' is not an RFC 3339 timestamp"),
        Case(#"{"a": {"$timestamp": "2024-01-01T00:00:00.1234567Z"}}"#, 1, 7, "$timestamp: '2024-01-01T00:00:00.1234567Z' is more precise than a microsecond"),
        Case(#"{"a": {"$bytes": "not base64!"}}"#, 1, 7, "$bytes needs a base64 string"),
        Case(#"{"a": {"$reference": "authors"}}"#, 1, 7, "$reference 'authors' is not a document path"),
        Case(#"{"a": {"$geopoint": {"latitude": 91, "longitude": 0}}}"#, 1, 7, "$geopoint latitude must be within ±90"),
        Case(#"{"a": {"$double": "nan"}}"#, 1, 7, "$double must be \"NaN\", \"Infinity\" or \"-Infinity\""),
        Case(#"{"a": -}"#, 1, 8, "expected a digit after '-'"),
        Case(#"{"a": 1.}"#, 1, 9, "expected a digit after '.'"),
        Case(#"{"a": 1e}"#, 1, 9, "expected a digit in the exponent"),
        Case(#"{"a": "x""#, 1, 10, "unexpected end of file; expected ',' or '}'"),
        Case(#"{"a": ,}"#, 1, 7, "expected a value before ','"),
        Case("{\"a\": 1}\u{00}", 1, 9, "unexpected '\u{00}' after the JSON value"),
    ]

    @Test(arguments: cases)
    func reportsPositionAndMessage(_ c: Case) {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parseObject(c.input) }
        do {
            _ = try JSONParser.parseObject(c.input)
        } catch {
            #expect(error.position == SourcePosition(line: c.line, column: c.column), "\(error)")
            #expect(error.message.hasPrefix(c.message), "\(error.message)")
        }
    }

    /// A refused number is quoted shortened (first bytes, length, hash), once:
    /// a file of megabyte-long numbers printed every literal twice, whole.
    @Test(arguments: [
        String(repeating: "9", count: 1_000_000),
        "1" + String(repeating: "0", count: 200_000) + ".5",
        "1e" + String(repeating: "9", count: 100_000),
        "0." + String(repeating: "0", count: 100_000) + "1",
    ])
    func aHugeNumberIsQuotedShortened(_ literal: String) {
        do {
            _ = try JSONParser.parseObject(Array(#"{"n": \#(literal)}"#.utf8))
            Issue.record("expected an error")
        } catch {
            #expect(error.message.utf8.count < 300, "\(error.message.prefix(300))")
            #expect(error.message.contains("[\(literal.utf8.count) bytes, sha256 "), "\(error.message.prefix(300))")
        }
    }

    @Test func aShortNumberIsQuotedWhole() {
        #expect(throws: JSONSyntaxError(position: SourcePosition(line: 1, column: 7),
                                        message: "integer 123456789012345678901234567890 does not fit in 64 bits; write it as a double (123456789012345678901234567890.0) or a string")) {
            _ = try JSONParser.parseObject(Array(#"{"n": 123456789012345678901234567890}"#.utf8))
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let depth = 10_000
        let text = #"{"a": "# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
        do {
            _ = try JSONParser.parseObject(Array(text.utf8))
            Issue.record("expected an error")
        } catch {
            #expect(error.message == "nesting deeper than \(JSONParser.maximumDepth) levels")
            #expect(error.position.line == 1)
        }
    }
}

/// Valid input: kinds are kept apart and values come out as written.
@Suite struct JSONParserValueTests {
    @Test func integersAndDoublesStayApart() throws {
        let fields = try JSONParser.parseObject(Array(#"{"i": 42, "d": 42.0, "e": 4.2e1, "n": -0, "z": -0.0}"#.utf8))
        #expect(fields["i"] == .integer(42))
        #expect(fields["d"] == .double(42))
        #expect(fields["e"] == .double(42))
        #expect(fields["n"] == .integer(0))
        // -0.0 is read as 0.0 (Firestore keeps no negative zero; see Value).
        guard case .double(let z)? = fields["z"] else { Issue.record("z is not a double"); return }
        #expect(z.bitPattern == (0.0).bitPattern)
    }

    @Test func escapesDecode() throws {
        let fields = try JSONParser.parseObject(Array(#"{"s": "\"\\\/\b\f\n\r\t\u00e9\ud83d\ude80"}"#.utf8))
        #expect(fields["s"] == .string("\"\\/\u{08}\u{0C}\n\r\té🚀"))
    }

    @Test func byteOrderMarkIsIgnored() throws {
        let fields = try JSONParser.parseObject([0xEF, 0xBB, 0xBF] + Array(#"{"a": 1}"#.utf8))
        #expect(fields == ["a": .integer(1)])
    }

    @Test func taggedValuesDecode() throws {
        let text = """
            {"t": {"$timestamp": "2024-05-01T14:00:00.5+02:00"}, "b": {"$bytes": "AAEC"},
             "r": {"$reference": "projects/p/databases/(default)/documents/authors/frank"},
             "g": {"$geopoint": {"latitude": 1, "longitude": -3.25}}, "n": {"$double": "-Infinity"},
             "notTag": {"$a": 1, "$b": 2}}
            """
        let fields = try JSONParser.parseObject(Array(text.utf8))
        #expect(fields["t"] == .timestamp(try Timestamp(rfc3339: "2024-05-01T12:00:00.500000Z")))
        #expect(fields["b"] == .bytes([0, 1, 2]))
        #expect(fields["r"] == .reference("projects/p/databases/(default)/documents/authors/frank"))
        #expect(fields["g"] == .geoPoint(latitude: 1, longitude: -3.25))
        #expect(fields["n"] == .double(-.infinity))
        #expect(fields["notTag"] == .map(["$a": .integer(1), "$b": .integer(2)]))
    }

    @Test func depthLimitStillAllowsFirestoreDepths() throws {
        let text = #"{"a": "# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}"
        _ = try JSONParser.parseObject(Array(text.utf8))
    }
}

@Suite struct TimestampTests {
    static let cases: [(String, String)] = [
        ("2024-05-01T12:00:00Z", "2024-05-01T12:00:00.000000Z"),
        ("2024-05-01t12:00:00.123456789z".replacingZeros(), "2024-05-01T12:00:00.123456Z"),
        ("2024-05-01T14:30:00+02:30", "2024-05-01T12:00:00.000000Z"),
        ("2024-05-01T00:00:00-01:00", "2024-05-01T01:00:00.000000Z"),
        ("2000-02-29T23:59:59.9Z", "2000-02-29T23:59:59.900000Z"),
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000000Z"),
        ("9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"),
        ("1969-07-20T20:17:40.000001Z", "1969-07-20T20:17:40.000001Z"),
    ]

    @Test(arguments: cases)
    func parsesAndPrintsCanonically(input: String, canonical: String) throws {
        #expect(try Timestamp(rfc3339: input).rfc3339 == canonical)
    }

    @Test(arguments: ["2023-02-29T00:00:00Z", "2024-05-01 12:00:00Z", "2024-05-01T12:00:00", "2024-05-01T24:00:00Z",
                      "2024-05-01T12:00:61Z", "24-05-01T12:00:00Z", "2024-05-01T12:00:00.Z", "2024-05-01T12:00:00+0200"])
    func rejectsMalformed(input: String) {
        #expect(throws: TimestampError.malformed(input)) { try Timestamp(rfc3339: input) }
    }

    /// Second 60 is RFC 3339's leap second: a timestamp, which Firestore
    /// cannot store, and the message says that rather than "not RFC 3339".
    @Test(arguments: ["2016-12-31T23:59:60Z", "2016-12-31T23:59:60.5Z", "2017-01-01T00:59:60+01:00"])
    func aLeapSecondIsRefusedAsOne(input: String) {
        do {
            let parsed = try Timestamp(rfc3339: input)
            Issue.record("\(input) was taken as \(parsed.rfc3339)")
        } catch {
            #expect(error.message == "'\(input)' is a leap second, which Firestore cannot store (its timestamps have no second 60); "
                + "write the second before or after it")
        }
    }

    @Test func rejectsOutOfRange() {
        #expect(throws: TimestampError.outOfRange("0001-01-01T00:00:00+00:01")) { try Timestamp(rfc3339: "0001-01-01T00:00:00+00:01") }
    }
}

private extension String {
    /// "…123456789z" has non-zero sub-microsecond digits; the case wants zeros there.
    func replacingZeros() -> String { replacing("789z", with: "000z") }
}

/// Taking apart a text the parser refused: well-formed apart from its depth
/// and its values, or not at all.
@Suite struct JSONSkimTests {
    /// A million levels are walked without recursion; the elements and a name
    /// past a refused part are found; anything the parser refuses for its
    /// grammar (not its depth or values) leaves the text whole and refused.
    @Test func elementsAreFoundOnlyInAWellFormedText() throws {
        let deep = String(repeating: "[", count: 1_000_000) + String(repeating: "]", count: 1_000_000)
        let text = #"{"next": "t", "documents": [{"n": 1}, {"d": \#(deep), "name": "x"}, {"big": 1e999, "name": "y"}]}"#
        let bytes = Array(text.utf8)
        let (array, elements) = try #require(JSONParser.arrayElements(bytes, member: "documents"))
        #expect(String(decoding: bytes[array], as: UTF8.self).hasPrefix(#"[{"n": 1}, "#))
        #expect(elements.count == 3)
        #expect(String(decoding: bytes[elements[0]], as: UTF8.self) == #"{"n": 1}"#)
        #expect(JSONParser.string(at: ["name"], in: bytes[elements[1]]) == "x")
        #expect(JSONParser.string(at: ["name"], in: bytes[elements[2]]) == "y")
        #expect(JSONParser.string(at: ["next"], in: bytes) == "t")
        #expect(JSONParser.string(at: ["missing"], in: bytes) == nil)
        #expect(JSONParser.arrayElements(bytes, member: "next") == nil, "not an array")
        #expect(JSONParser.arrayElements(Array("[1, [2], {}]".utf8), member: nil)?.elements.count == 3)
        for broken in [#"[{"a": 1}, {"b": 2}"#, #"[{"a": 1},]"#, #"[{"a" 1}]"#, #"[{"a": "\x"}]"#, "[{\"a\": \"\u{1}\"}]",
                       #"[{"a": 01}]"#, #"[{"a": tru}]"#, #"[1] 2"#, #"[1, /* c */ 2]"#, #"[{"a": 1,}]"#, "[\"\u{FF}\"]"] {
            var bytes = Array(broken.utf8)
            if broken == "[\"\u{FF}\"]" { bytes = [0x5B, 0x22, 0xFF, 0x22, 0x5D] }  // invalid UTF-8
            #expect(JSONParser.arrayElements(bytes, member: nil) == nil, "\(broken)")
        }
    }

    /// Over the parser fuzz test's mutations: the skim accepts a record file
    /// exactly when the parser reads it, or refuses it only for its depth or
    /// its values (which `parseRecord` collects instead of throwing).
    @Test func theSkimAcceptsWhatTheParserReadsButForDepthAndValues() {
        var random = SplitMix64(seed: 20_261_202)
        var compared = 0
        for _ in 0..<20_000 {
            let input = ParserFuzzTests.mutation(&random)
            guard input.first == UInt8(ascii: "{") else { continue }
            compared += 1
            let skimmed = JSONParser.arrayElements(Array("[".utf8) + input + Array("]".utf8), member: nil)?.elements.count == 1
            var read = true
            do { _ = try JSONParser.parseRecord(input) } catch { read = error.message.hasPrefix("nesting deeper") }
            #expect(skimmed == read, "\(String(decoding: input, as: UTF8.self))")
        }
        #expect(compared > 10_000)
        let deep = Array(#"{"a": "#.utf8) + Array(repeating: UInt8(ascii: "["), count: 300) + Array(repeating: UInt8(ascii: "]"), count: 300) + Array("}".utf8)
        #expect(JSONParser.arrayElements(deep, member: "a")?.elements.count == 1)
    }
}
