import Testing
@testable import BooksyncCore

/// What a clone's config.json and remotes.json may hold (<doc:CollectionFormat>):
/// every command reads both, so each count has a cap, and the checks below
/// it look each entry up in a set instead of comparing it with every other
/// (a file of 8,000 remotes once cost every command 15 s). At each cap the
/// file is read; one past it, refused with a sentence naming the cap. How
/// long a command takes at the caps is `scripts/check-state-caps.py`'s to
/// measure, not a unit test's.
@Suite struct ConfigCapsTests {
    static let head = #"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "books"}, "schema": "#

    /// remotes.json with `count` production remotes.
    static func remotes(_ count: Int) -> [UInt8] {
        let entries = (0..<count).map { #""r\#($0)": {"project": "p", "collection": "books"}"# }
        return Array((#"{"version": 1, "remotes": {"# + entries.joined(separator: ", ") + "}}").utf8)
    }

    /// config.json whose `genre` field allows `count` values.
    static func allowedValues(_ count: Int) -> [UInt8] {
        let values = (0..<count).map { "\"g\($0)\"" }.joined(separator: ", ")
        return Array((head + #"{"required": [{"name": "genre", "type": "string", "enum": ["# + values + "]}]}}").utf8)
    }

    /// config.json declaring `count` fields: one map of 10 and the rest
    /// strings, half of them required and half optional.
    static func declaredFields(_ count: Int) -> [UInt8] {
        let inner = (0..<10).map { #"{"name": "n\#($0)", "type": "string"}"# }.joined(separator: ", ")
        let strings = (0..<(count - 11)).map { #"{"name": "f\#($0)", "type": "string"}"# }
        let half = strings.count / 2
        let required = [#"{"name": "m", "type": "map", "optional": ["# + inner + "]}"] + strings[..<half]
        return Array((head + #"{"required": ["# + required.joined(separator: ", ") + #"], "optional": ["#
            + strings[half...].joined(separator: ", ") + "]}}").utf8)
    }

    static func readRemotes(_ bytes: [UInt8]) throws { _ = try RemoteList.decode(bytes) }
    static func readConfig(_ bytes: [UInt8]) throws { _ = try CollectionConfig.decode(bytes) }

    static let caps: [(what: String, cap: Int, file: @Sendable (Int) -> [UInt8], read: @Sendable ([UInt8]) throws -> Void, refusal: String)] = [
        ("remotes", RemoteList.maximumRemotes, remotes, readRemotes,
         "1001 remotes are defined; booksync reads at most 1000 (every command reads this file, and a collection needs a handful): remove the ones not in use"),
        ("enum values", FieldRequirement.maximumAllowedValues, allowedValues, readConfig,
         #"schema.required field 'genre': "enum" lists 10001 values; booksync takes at most 10000 (for more, declare the field a plain string)"#),
        ("declared fields", FirestoreLimits.maximumFieldCount, declaredFields, readConfig,
         "schema declares 20001 fields (counting those inside maps); a Firestore document holds at most 20000, and booksync reads no more"),
    ]

    @Test(arguments: caps)
    func atTheCapIsReadPastItIsRefused(_ cap: (what: String, cap: Int, file: @Sendable (Int) -> [UInt8], read: @Sendable ([UInt8]) throws -> Void, refusal: String)) {
        #expect(throws: Never.self, "\(cap.what): \(cap.cap)") { try cap.read(cap.file(cap.cap)) }
        #expect(throws: StateFileError(message: cap.refusal), "\(cap.what)") { try cap.read(cap.file(cap.cap + 1)) }
    }

    /// The sets find a repeat however far apart, and compare as before:
    /// names and values equal as Swift strings (canonically equivalent) are the same.
    @Test(arguments: [
        (head + #"{"required": [{"name": "a", "type": "string"}"#
            + (1..<5_000).map { #", {"name": "b\#($0)", "type": "string"}"# }.joined() + #"], "optional": [{"name": "a", "type": "string"}]}}"#,
         "schema.optional lists 'a' twice (a field is either required or optional, once)"),
        (head + "{\"required\": [{\"name\": \"caf\u{E9}\", \"type\": \"string\"}, {\"name\": \"cafe\u{301}\", \"type\": \"string\"}]}}",
         "schema.required lists 'cafe\u{301}' twice (a field is either required or optional, once)"),
        (head + #"{"required": [{"name": "genre", "type": "string", "enum": ["#
            + (0..<9_999).map { "\"g\($0)\"" }.joined(separator: ", ") + #", "g0"]}]}}"#,
         #"schema.required field 'genre': "enum" lists "g0" twice"#),
    ])
    func repeatsAreFoundAnywhere(text: String, refusal: String) {
        #expect(throws: StateFileError(message: refusal)) { try CollectionConfig.decode(Array(text.utf8)) }
    }

    /// A remote whose name differs from an earlier one only in letter case
    /// is found by its lower case, however many come between.
    @Test func aCaseClashIsFoundAmongManyRemotes() {
        var text = String(decoding: Self.remotes(998), as: UTF8.self)
        text.removeLast(2)
        text += #", "R5": {"project": "p", "collection": "books"}}}"#
        #expect(throws: StateFileError(message: "remote name 'r5' differs from 'R5' only in letter case; on macOS they would share one sync state")) {
            try RemoteList.decode(Array(text.utf8))
        }
        let list = RemoteList((0..<RemoteList.maximumRemotes).map {
            RemoteDefinition(name: "r\($0)", target: FirestoreTarget(project: "p", collectionPath: "b"), endpoint: .production, sharesState: true)
        })
        #expect(list.problemAddingOne == "this collection has 1000 remotes, the most booksync reads (1000); remove one first")
        #expect(RemoteList().problemAddingOne == nil)
    }

    /// A value is allowed when its bytes are listed: one look-up in the set,
    /// and a byte comparison when only a canonically equal value is found.
    @Test func allowedValuesAreComparedByteForByte() {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        let one = FieldRequirement(name: "g", type: .string, allowedValues: [nfc])
        #expect(one.isAllowed(nfc))
        #expect(!one.isAllowed(nfd), "canonically equal, but other bytes")
        let both = FieldRequirement(name: "g", type: .string, allowedValues: [nfc, nfd])
        #expect(both.isAllowed(nfc) && both.isAllowed(nfd))
        #expect(!both.isAllowed("cafe"))
        let many = FieldRequirement(name: "g", type: .string, allowedValues: (0..<FieldRequirement.maximumAllowedValues).map { "g\($0)" })
        #expect(many.problems(with: .string("g9999"), path: "g").isEmpty)
        #expect(many.problems(with: .string("x"), path: "g")
            == [#"field 'g' must be one of "g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8", "g9", … (10000 values in all); found "x""#])
    }
}
