import Testing
@testable import BooksyncCore

/// config.json's `"scope"` (<doc:WholeProject>): written as the expression
/// parses back, read with the parser's bounds, refused with the column it
/// stopped at, and kept apart from what it cannot narrow.
@Suite struct ScopeConfigTests {
    static func config(_ extra: String) -> [UInt8] {
        Array(#"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "books"}\#(extra)}"#.utf8)
    }

    @Test func aScopeRoundTripsInItsCanonicalSpelling() throws {
        let decoded = try CollectionConfig.decode(Self.config(#", "scope": "rating>=4   and genre == \"sf\"""#))
        #expect(decoded.scope?.description == #"rating >= 4 and genre == "sf""#)
        let again = try CollectionConfig.decode(decoded.encoded())
        #expect(again == decoded)
        #expect(String(decoding: decoded.encoded(), as: UTF8.self).contains(#""scope": "rating >= 4 and genre == \"sf\"""#))
        #expect(decoded.rules.scope == decoded.scope)
    }

    @Test(arguments: [
        (#", "scope": "rating is 4""#, "scope: column 8: expected an operator"),
        (#", "scope": 4"#, "scope must be a query"),
        (#", "scope": "updatedAt > 1", "changeField": "updatedAt""#, "scope: 'updatedAt' is the change field"),
        (#", "scope": "rating > 1", "subcollections": ["reviews"]"#, "scope: a scope cannot be combined with subcollections yet"),
        (#", "scope": "id >= \"a\"""#, "scope: 'id' holds the record id"),
        (#", "scope": "docId == \"a\"", "idField": "docId""#, "scope: 'docId' holds the record id"),
        (#", "scope": "__name__ > 1""#, "scope: '__name__' is a name Firestore reserves"),
    ])
    func aBadScopeIsRefusedSayingWhy(extra: String, message: String) {
        #expect {
            _ = try CollectionConfig.decode(Self.config(extra))
        } throws: { error in
            (error as? StateFileError)?.message.hasPrefix(message) == true
        }
    }

    @Test func aScopeLongerThanTheParserTakesIsRefused() {
        let long = (0..<1_000).map { "f\($0) == 1" }.joined(separator: " and ")
        #expect(throws: StateFileError.self) { _ = try CollectionConfig.decode(Self.config(#", "scope": "\#(long)""#)) }
    }

    /// A record matches by the document it becomes: the id field is where the
    /// config keeps it (`idField`), the rest as the file holds it.
    @Test func recordsMatchAsTheirDocuments() throws {
        let target = FirestoreTarget(project: "p", collectionPath: "books")
        var config = CollectionConfig(remote: target, schema: .idOnly, idField: .field("docId"))
        config.scope = try ScopeExpression.parse(#"docId == "dune" and rating >= 4"#)
        let rules = config.rules
        let id = try RecordID("dune")
        #expect(rules.isInScope(fields: ["id": .string("dune"), "rating": .integer(5)], id: id))
        #expect(!rules.isInScope(fields: ["id": .string("dune"), "rating": .integer(3)], id: id))
        #expect(rules.warnings(in: ["id": .string("dune"), "rating": .integer(3)], id: id).contains { $0.hasPrefix("does not match the scope") })
        #expect(CollectionConfig(remote: target).rules.isInScope(fields: [:], id: id), "no scope: everything is in it")
    }

    /// A change mark remembers its scope, so a mark taken under another scope is not used.
    @Test func aChangeMarkKeepsItsScopeInTheManifest() throws {
        let scope = try ScopeExpression.parse("rating >= 4")
        let mark = ChangeMark(field: "updatedAt", time: try Timestamp(rfc3339: "2026-01-01T00:00:00Z"), scope: scope.description)
        let manifest = Manifest(entries: [:], changesSince: mark)
        let read = try Manifest.decode(manifest.encoded())
        #expect(read.changesSince == mark)
        #expect(mark.isFor(field: "updatedAt", scope: scope))
        #expect(!mark.isFor(field: "updatedAt", scope: nil))
        #expect(!mark.isFor(field: "updatedAt", scope: try ScopeExpression.parse("rating >= 5")))
    }

    /// Numbers compare exactly, as Firestore compares them: an integer past
    /// 2⁵³ is not rounded to the nearest double first.
    @Test(arguments: [
        ("n == 9007199254740993", Value.double(9_007_199_254_740_992), false),
        ("n > 9007199254740992.0", Value.integer(9_007_199_254_740_993), true),
        ("n < 9007199254740993", Value.double(9_007_199_254_740_992), true),
        ("n == 1", Value.double(1.0), true),
        ("n > 1.5", Value.integer(1), false),
        ("n >= -1.5", Value.integer(-1), true),
        ("n < 1e300", Value.integer(.max), true),
    ])
    func numbersCompareExactly(scope: String, value: Value, matches: Bool) throws {
        #expect(try ScopeExpression.parse(scope).matches(["n": value]) == matches)
    }

    /// A reference in the scope written in full matches the record file's
    /// shortened one (and is sent in full).
    @Test func referencesMatchAsRecordFilesHoldThem() throws {
        let target = FirestoreTarget(project: "p", collectionPath: "books")
        var config = CollectionConfig(remote: target, schema: .idOnly)
        config.scope = try ScopeExpression.parse(#"author == {"$reference": "projects/p/databases/(default)/documents/authors/x"}"#)
        #expect(config.rules.isInScope(fields: ["id": .string("dune"), "author": .reference("authors/x")], id: try RecordID("dune")))
        #expect(!config.rules.isInScope(fields: ["id": .string("dune"), "author": .reference("authors/y")], id: try RecordID("dune")))
    }
}
