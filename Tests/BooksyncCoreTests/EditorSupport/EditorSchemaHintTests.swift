import Testing
@testable import BooksyncCore

/// `$schema` in a record file is the editor's, not the record's
/// (<doc:CollectionFormat> ("Editing records")): never compared, never sent,
/// never pulled, kept first when a file is rewritten.
@Suite struct EditorSchemaHintTests {
    static let id = try! RecordID("dune")
    static let rules = RecordRules()
    static let plain = #"{"id": "dune", "title": "t", "author": "a", "genre": "g"}"#

    static func load(_ text: String) throws -> CanonicalRecord {
        try rules.load(Array(text.utf8), id: id).get()
    }

    @Test func theHintIsNoPartOfTheRecord() throws {
        let with = try Self.load(#"{"$schema": "./.booksync/record.schema.json", "id": "dune", "title": "t", "author": "a", "genre": "g"}"#)
        let other = try Self.load(#"{"id": "dune", "title": "t", "author": "a", "genre": "g", "$schema": "https://example.com/x.json"}"#)
        let without = try Self.load(Self.plain)
        #expect(with.fields[EditorSchemaHint.key] == nil)
        #expect(with.hash == without.hash)
        #expect(other.hash == without.hash)
        #expect(Self.rules.documentFields(of: with)[EditorSchemaHint.key] == nil)
    }

    @Test func aHintThatIsNotAStringIsNamed() {
        let result = Self.rules.load(Array(#"{"$schema": 5, "id": "dune", "title": "t", "author": "a", "genre": "g"}"#.utf8), id: Self.id)
        #expect(throws: RecordFileProblems(diagnostics: [RecordDiagnostic(message:
            #"field '$schema' is the editor's schema hint and must be a string such as "./.booksync/record.schema.json", found integer"#)])) {
            try result.get()
        }
    }

    /// A document field named `$schema` would become the file's hint and be
    /// deleted by the next push: the document is refused instead.
    @Test func aDocumentWithTheFieldIsRefused() {
        let fields: Fields = ["id": .string("dune"), "title": .string("t"), "author": .string("a"), "genre": .string("g"), "$schema": .string("x")]
        guard case .failure(let problems) = Self.rules.record(fromDocument: fields, id: Self.id) else {
            Issue.record("accepted a document with a $schema field")
            return
        }
        #expect(problems.diagnostics.map(\.message) == ["the document has a field '$schema', which a record file keeps for the editor's schema hint and never syncs; rename the field in the document"])
    }

    @Test func writersPutTheHintFirst() throws {
        let record = try Self.load(Self.plain)
        let bytes = Self.rules.fileBytes(record.fields, id: Self.id, hint: "./.booksync/record.schema.json")
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("{\n  \"$schema\": \"./.booksync/record.schema.json\",\n  \"id\": \"dune\",\n  \"title\""))
        #expect(Self.rules.hint(inFile: bytes) == "./.booksync/record.schema.json")
        #expect(try Self.rules.load(bytes, id: Self.id).get().hash == record.hash)
        #expect(Self.rules.fileBytes(record.fields, id: Self.id, hint: nil) == record.canonicalBytes)
        #expect(Self.rules.hint(inFile: record.canonicalBytes) == nil)
        #expect(Self.rules.hint(inFile: nil) == nil)
        // "$schema" as a value, or inside a map, is no hint.
        #expect(Self.rules.hint(inFile: Array(#"{"id": "dune", "note": "$schema", "m": {"$schema": "x", "y": 1}}"#.utf8)) == nil)
    }

    /// Neither the id field nor the change field can be `$schema`: a
    /// document would hold it, and pull refuses such documents.
    @Test func theHintIsNeitherTheIDFieldNorTheChangeField() {
        #expect(IDField.problem(withFieldName: "$schema") != nil)
        #expect(CollectionConfig.problem(changeField: "$schema", idField: .standard, schema: .books) != nil)
    }

    @Test func anEscapedKeyIsFoundToo() {
        #expect(Self.rules.hint(inFile: Array(#"{"\u0024schema": "./x.json", "id": "dune"}"#.utf8)) == "./x.json")
    }

    @Test func theQuickTestNeverMissesAHint() {
        #expect(EditorSchemaHint.mayBeIn(Array(#"{"$schema":"x"}"#.utf8)))
        #expect(!EditorSchemaHint.mayBeIn(Array(#"{"schema": "$x"}"#.utf8)))
        #expect(!EditorSchemaHint.mayBeIn([]))
    }
}
