import Testing
@testable import BooksyncCore

/// The richer record schema of config.json (<doc:CollectionFormat>): optional
/// fields, allowed values, a map's own fields, an array's item type, and
/// strict mode. One table: the same rules `validate`, `status`, `push` and
/// `RecordStore.save` apply, with the sentences they print.
@Suite struct SchemaDeclarationTests {
    static let id = try! RecordID("dune")

    /// A schema with one of everything the config can declare.
    static func schema(_ strictness: SchemaStrictness) -> RecordSchema {
        RecordSchema(
            requiredFields: [
                FieldRequirement(name: "title", type: .string),
                FieldRequirement(name: "genre", type: .string, allowedValues: ["fiction", "poetry"]),
            ],
            optionalFields: [
                FieldRequirement(name: "year", type: .integer),
                FieldRequirement(name: "tags", type: .array, itemType: .string),
                FieldRequirement(name: "printing", type: .map, mapFields: DeclaredFields(
                    required: [FieldRequirement(name: "copies", type: .integer)],
                    optional: [FieldRequirement(name: "publisher", type: .reference)])),
                FieldRequirement(name: "extra", type: .any),
            ],
            strictness: strictness)
    }

    static let cases: [(name: String, strictness: SchemaStrictness, record: String, problems: [String], warnings: [String])] = [
        ("required only", .off, #"{"id": "dune", "title": "t", "genre": "poetry"}"#, [], []),
        ("every optional field present and right", .off,
         #"{"id": "dune", "title": "t", "genre": "fiction", "year": 1965, "tags": ["a"], "printing": {"copies": 1, "publisher": {"$reference": "p/x"}}, "extra": [1, "two"]}"#, [], []),
        ("optional fields may be null", .off, #"{"id": "dune", "title": "t", "genre": "fiction", "year": null, "printing": null}"#, [], []),
        ("an optional field of the wrong type", .off, #"{"id": "dune", "title": "t", "genre": "fiction", "year": "1965"}"#,
         ["field 'year' must be integer, found string"], []),
        ("a value outside the enum", .off, #"{"id": "dune", "title": "t", "genre": "sf"}"#,
         [#"field 'genre' must be one of "fiction", "poetry"; found "sf""#], []),
        ("enum values are compared byte for byte", .off, #"{"id": "dune", "title": "t", "genre": "Fiction"}"#,
         [#"field 'genre' must be one of "fiction", "poetry"; found "Fiction""#], []),
        ("an array item of the wrong type, named by index", .off, #"{"id": "dune", "title": "t", "genre": "fiction", "tags": ["a", 2, "c", true]}"#,
         ["field 'tags[1]' must be string, found integer", "field 'tags[3]' must be string, found boolean"], []),
        ("a declared map missing its required field", .off, #"{"id": "dune", "title": "t", "genre": "fiction", "printing": {"publisher": {"$reference": "p/x"}}}"#,
         ["missing required field 'printing.copies' (integer)"], []),
        ("a declared map's field of the wrong type", .off, #"{"id": "dune", "title": "t", "genre": "fiction", "printing": {"copies": 1, "publisher": "p/x"}}"#,
         ["field 'printing.publisher' must be reference, found string"], []),
        ("strict off: other fields are fine", .off, #"{"id": "dune", "title": "t", "genre": "fiction", "colour": "red"}"#, [], []),
        ("strict warning: other fields are warned about, not refused", .warning,
         #"{"id": "dune", "title": "t", "genre": "fiction", "colour": "red", "printing": {"copies": 1, "signed": true}}"#, [], [
            #"field 'colour' is not in the schema (config schema "strict": "warning"); declare it in .booksync/config.json, or remove it"#,
            #"field 'printing.signed' is not in the schema (config schema "strict": "warning"); declare it in .booksync/config.json, or remove it"#,
         ]),
        ("strict error: other fields, at the top and in declared maps, are problems", .error,
         #"{"id": "dune", "title": "t", "genre": "fiction", "colour": "red", "printing": {"copies": 1, "signed": true}}"#, [
            #"field 'colour' is not in the schema (config schema "strict": "error"); declare it in .booksync/config.json, or remove it"#,
            #"field 'printing.signed' is not in the schema (config schema "strict": "error"); declare it in .booksync/config.json, or remove it"#,
         ], []),
        ("strict error: an undeclared map's contents are free", .error,
         #"{"id": "dune", "title": "t", "genre": "fiction", "extra": {"anything": 1}}"#, [], []),
        ("names are compared byte for byte, as Firestore and JSON Schema do: cafe+U+0301 is not café", .error,
         "{\"id\": \"dune\", \"title\": \"t\", \"genre\": \"fiction\", \"extra\": 1, \"cafe\u{301}\": 2}", [
            "field 'cafe\u{301}' is not in the schema (config schema \"strict\": \"error\"); declare it in .booksync/config.json, or remove it",
         ], []),
        ("strict error: the editor hint is no field", .error,
         #"{"$schema": "./.booksync/record.schema.json", "id": "dune", "title": "t", "genre": "fiction"}"#, [], []),
    ]

    @Test(arguments: cases)
    func rule(_ example: (name: String, strictness: SchemaStrictness, record: String, problems: [String], warnings: [String])) {
        let rules = RecordRules(schema: Self.schema(example.strictness))
        switch rules.load(Array(example.record.utf8), id: Self.id) {
        case .success(let record):
            #expect(example.problems.isEmpty, "\(example.name): accepted")
            #expect(rules.warnings(in: record.fields, id: Self.id) == example.warnings, "\(example.name)")
        case .failure(let problems):
            #expect(problems.diagnostics.map(\.message) == example.problems, "\(example.name)")
            #expect(example.warnings.isEmpty)
        }
    }

    /// The config keeps every declaration and reads it back unchanged.
    @Test func configRoundTrip() throws {
        for strictness in SchemaStrictness.allCases {
            let schema = RecordSchema(requiredFields: Self.schema(strictness).requiredFields, optionalFields: Self.schema(strictness).optionalFields,
                                      strictness: strictness, title: "Book", description: "A book.")
            let config = CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books"), schema: schema,
                                          subcollections: Subcollections(entries: [.init(path: "reviews", schema: schema),
                                                                                   .init(path: "notes", schema: RecordSchema(requiredFields: [FieldRequirement(name: "n", type: .string)]))]))
            let decoded = try CollectionConfig.decode(config.encoded())
            #expect(decoded == config)
            #expect(decoded.encoded() == config.encoded())
        }
    }

    /// A config written before these keys existed reads as it did: a
    /// subcollection's bare required-field list included.
    @Test func olderConfigStillReads() throws {
        let text = #"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "books"}, "schema": {"required": [{"name": "title", "type": "string"}], "subcollections": {"reviews": [{"name": "rating", "type": "integer"}]}}, "subcollections": ["reviews"]}"#
        let config = try CollectionConfig.decode(Array(text.utf8))
        #expect(config.schema == RecordSchema(requiredFields: [FieldRequirement(name: "title", type: .string)]))
        #expect(config.subcollections.entries[0].schema == RecordSchema(requiredFields: [FieldRequirement(name: "rating", type: .integer)]))
    }

    static let badConfigs: [(schema: String, error: String)] = [
        (#"{"required": [], "strict": "loud"}"#, #"schema.strict must be "warning", "error" or "off""#),
        (#"{"required": [], "requried": []}"#, "schema has an unknown key 'requried' (known: description, optional, required, strict, subcollections, title)"),
        (#"{"required": [{"name": "a", "type": "integer", "enum": ["x"]}]}"#, #"schema.required field 'a': "enum" lists allowed strings, so the type must be string"#),
        (#"{"required": [{"name": "a", "type": "string", "enum": []}]}"#, #"schema.required field 'a': "enum" must be a non-empty list of strings"#),
        (#"{"required": [{"name": "a", "type": "string", "enum": ["x", "x"]}]}"#, #"schema.required field 'a': "enum" lists "x" twice"#),
        (#"{"required": [{"name": "a", "type": "string"}], "optional": [{"name": "a", "type": "string"}]}"#,
         "schema.optional lists 'a' twice (a field is either required or optional, once)"),
        (#"{"required": [{"name": "$schema", "type": "string"}]}"#,
         "schema.required: '$schema' is the editor's schema hint in record files, never a field; it cannot be declared"),
        (#"{"required": [{"name": "a", "type": "string", "items": "string"}]}"#,
         #"schema.required field 'a': "items" gives an array's item type, so the type must be array"#),
        (#"{"required": [{"name": "a", "type": "array", "items": "array"}]}"#,
         #"schema.required field 'a': "items" must be a type name (string, integer, double, number, boolean, timestamp, bytes, reference, geopoint, map, any; Firestore has no arrays in arrays)"#),
        (#"{"required": [{"name": "a", "type": "string", "required": []}]}"#,
         #"schema.required field 'a': "required" and "optional" declare a map's fields, so the type must be map"#),
        (#"{"required": [{"name": "a", "type": "map", "required": [{"name": "b", "type": "nope"}]}]}"#,
         "schema.required field 'a'.required field 'b': unknown type 'nope' (known: string, integer, double, number, boolean, timestamp, bytes, reference, geopoint, map, array, any)"),
        (#"{"required": [{"name": "$schema", "type": "string"}], "optional": []}"#,
         "schema.required: '$schema' is the editor's schema hint in record files, never a field; it cannot be declared"),
        (#"{"required": [{"name": "a", "type": "string", "colour": 1}]}"#,
         "schema.required field 'a' has an unknown key 'colour' (known: name, type, title, enum, description, required, optional, items)"),
    ]

    @Test(arguments: badConfigs)
    func configErrors(_ example: (schema: String, error: String)) {
        let text = #"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "books"}, "schema": "# + example.schema + "}"
        #expect(throws: StateFileError(message: example.error)) { try CollectionConfig.decode(Array(text.utf8)) }
    }

    /// Declared maps deep enough to put a container past Firestore's 20
    /// levels are refused (the JSON Schema has no level for them).
    @Test func declarationsStopAtFirestoresDepth() throws {
        func config(maps: Int) -> [UInt8] {
            var field = #"{"name": "leaf", "type": "array"}"#
            for level in (0..<maps).reversed() { field = #"{"name": "m\#(level)", "type": "map", "required": [\#(field)]}"# }
            return Array(#"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "books"}, "schema": {"required": [\#(field)]}}"#.utf8)
        }
        _ = try CollectionConfig.decode(config(maps: 18))
        #expect(throws: StateFileError.self) { try CollectionConfig.decode(config(maps: 19)) }
        do { _ = try CollectionConfig.decode(config(maps: 19)) } catch {
            #expect(error.message.hasSuffix("field 'leaf': an array here would be nested more than 20 levels deep; Firestore allows 20"))
        }
    }

    /// `init --optional` and `--strict`.
    @Test func arguments() throws {
        let schema = try RecordSchema.parse(requirements: ["title:string"]).adding(optional: ["year:integer", "tags:array"], strictness: .error)
        #expect(schema.optionalFields == [FieldRequirement(name: "year", type: .integer), FieldRequirement(name: "tags", type: .array)])
        #expect(schema.strictness == .error)
        #expect(throws: RequirementSyntaxError("the field 'title' is given twice (a field is either required or optional)")) {
            try RecordSchema.parse(requirements: ["title:string"]).adding(optional: ["title:string"], strictness: .off)
        }
        #expect(throws: RequirementSyntaxError("'id' is always required (a string equal to the file name); leave it out of --optional")) {
            try RecordSchema.books.adding(optional: ["id:string"], strictness: .off)
        }
        #expect(throws: RequirementSyntaxError("'none' needs a type: FIELD:TYPE such as title:string (types: string, integer, double, number, boolean, timestamp, bytes, reference, geopoint, map, array, any)")) {
            try RecordSchema.books.adding(optional: ["none"], strictness: .off)
        }
    }
}
