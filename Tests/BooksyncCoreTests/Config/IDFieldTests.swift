import Testing
@testable import BooksyncCore

/// The one translation between record files (which always have `id`) and
/// documents (which keep it in `id`, in another field, or not at all).
@Suite struct IDFieldMappingTests {
    static let ada = try! RecordID("ada")
    static let record: Fields = ["id": .string("ada"), "name": .string("Ada"), "age": .integer(36)]
    static let docId = IDField.field("docId")

    /// (setting, record fields, the document they become)
    static let pushCases: [(IDField, Fields, Fields)] = [
        (.standard, record, record),
        (.none, record, ["name": .string("Ada"), "age": .integer(36)]),
        (docId, record, ["docId": .string("ada"), "name": .string("Ada"), "age": .integer(36)]),
    ]

    @Test(arguments: pushCases)
    func recordToDocument(setting: IDField, record: Fields, document: Fields) throws {
        #expect(setting.document(from: record, id: Self.ada) == document)
        // And back: a valid record survives the round trip exactly.
        #expect(try setting.record(from: document, id: Self.ada).get() == record)
    }

    /// What a document becomes: record fields, or the problems that make it invalid.
    enum Pulled: Sendable, Equatable {
        case fields(Fields)
        case problems([String])
    }

    /// (case, setting, document fields, what it becomes)
    static let pullCases: [(String, IDField, Fields, Pulled)] = [
        ("id: field present", .standard, record, .fields(record)),
        ("id: field absent, taken from the name", .standard, ["name": .string("Ada")], .fields(["id": .string("ada"), "name": .string("Ada")])),
        // A mismatch under the default is left to the schema check, as before.
        ("id: field differs (schema reports it)", .standard, ["id": .string("bob")], .fields(["id": .string("bob")])),
        ("none: no id field", .none, ["name": .string("Ada")], .fields(["id": .string("ada"), "name": .string("Ada")])),
        ("none: empty document", .none, [:], .fields(["id": .string("ada")])),
        ("none: an id field anyway", .none, ["id": .string("ada"), "name": .string("Ada")], .problems([
            "the document has a field 'id', but this collection keeps the record id out of documents (config \"idField\": null); "
                + "a record file uses 'id' for the record id, so that field cannot be kept: remove or rename it in the document, "
                + "or set \"idField\": \"id\" in .booksync/config.json",
        ])),
        ("docId: present and equal", docId, ["docId": .string("ada"), "name": .string("Ada")], .fields(["id": .string("ada"), "name": .string("Ada")])),
        ("docId: absent, taken from the name", docId, ["name": .string("Ada")], .fields(["id": .string("ada"), "name": .string("Ada")])),
        ("docId: differs from the name", docId, ["docId": .string("bob")], .problems([
            "field 'docId' holds the record id (config \"idField\") and must be \"ada\", the document's name; found \"bob\"",
        ])),
        ("docId: not a string", docId, ["docId": .integer(7)], .problems([
            "field 'docId' holds the record id (config \"idField\") and must be the string \"ada\"; found integer",
        ])),
        ("docId: an id field too", docId, ["docId": .string("ada"), "id": .string("ada")], .problems([
            "the document has a field 'id', but this collection stores the record id in the field 'docId' (config \"idField\": \"docId\"); "
                + "a record file uses 'id' for the record id, so that field cannot be kept: remove or rename it in the document, "
                + "or set \"idField\": \"id\" in .booksync/config.json",
        ])),
    ]

    @Test(arguments: pullCases)
    func documentToRecord(name: String, setting: IDField, document: Fields, expected: Pulled) {
        let pulled: Pulled = switch setting.record(from: document, id: Self.ada) {
        case .success(let fields): .fields(fields)
        case .failure(let problems): .problems(problems.diagnostics.map(\.message))
        }
        #expect(pulled == expected, "\(name)")
    }

    /// The hash covers the record, never the document: the same record file has
    /// the same hash under every setting, so pull → no edit → status is clean,
    /// and a remote document converges with the local file whatever the setting.
    @Test func hashIsTheRecordsUnderEverySetting() throws {
        let schema = RecordSchema(requiredFields: [FieldRequirement(name: "name", type: .string)])
        let fileBytes = Array("{\n  \"id\": \"ada\",\n  \"name\": \"Ada\",\n  \"age\": 36\n}\n".utf8)
        var hashes: Set<ContentHash> = []
        for setting in [IDField.standard, .none, Self.docId] {
            let rules = RecordRules(schema: schema, collectionPath: "users", idField: setting)
            let local = try rules.load(fileBytes, id: Self.ada).get()
            let document = rules.documentFields(of: local)
            let remote = try rules.record(fromDocument: document, id: Self.ada).get()
            #expect(remote == local, "\(setting)")
            #expect(remote.canonicalBytes == fileBytes, "\(setting): pulled bytes equal the file")
            hashes.insert(remote.hash)
        }
        #expect(hashes.count == 1)
    }

    /// Local files: under `docId`, a record file cannot have `docId` itself,
    /// because push writes the id there; under the others nothing changes.
    @Test func recordFilesCannotHoldTheIDField() {
        let fields: Fields = ["id": .string("ada"), "docId": .string("x"), "title": .string("T"), "author": .string("A"), "genre": .string("g")]
        #expect(RecordRules(idField: .standard).problems(in: fields, id: Self.ada).isEmpty)
        #expect(RecordRules(idField: .none).problems(in: fields, id: Self.ada).isEmpty)
        #expect(RecordRules(idField: Self.docId).problems(in: fields, id: Self.ada).map(\.message) == [
            "field 'docId' cannot be in a record file: this collection stores the record id in the documents' field 'docId' "
                + "(config \"idField\"), where push writes the file's 'id'; rename the field",
        ])
    }

    /// The document-size limit applies to what Firestore stores.
    @Test func documentSizeIsMeasuredWithoutTheIDUnderNone() {
        let id = try! RecordID("x")
        // 16 + 2 + 6 + ("id" 3 + "x" 2) + ("blob" 5 + n) + 32 = n + 66 with the id; n + 61 without.
        let blob = [UInt8](repeating: 0, count: FirestoreLimits.maximumDocumentBytes - 64)
        let fields: Fields = ["id": .string("x"), "blob": .bytes(blob)]
        let schema = RecordSchema(requiredFields: [])
        #expect(RecordRules(schema: schema, idField: .standard).problems(in: fields, id: id).count == 1)
        #expect(RecordRules(schema: schema, idField: .none).problems(in: fields, id: id).isEmpty)
    }

    static let fieldNames: [(String, String?)] = [
        ("docId", nil), ("id", nil), ("user id", nil), ("", "the id field name is empty; give a field name such as docId, or none"),
        ("__id__", "'__id__' is reserved by Firestore (names of the form __name__)"),
        ("a\u{1B}b", "the id field name contains a control character"),
        (String(repeating: "x", count: 1501), "the id field name is 1501 bytes; Firestore allows at most 1500"),
    ]

    @Test(arguments: fieldNames)
    func idFieldNames(name: String, problem: String?) {
        #expect(IDField.problem(withFieldName: name) == problem)
    }
}

@Suite struct RequireArgumentTests {
    static let known = "string, integer, double, number, boolean, timestamp, bytes, reference, geopoint, map, array, any"

    /// (arguments, the required fields, or the error)
    static let cases: [([String], Result<[FieldRequirement], RequirementSyntaxError>)] = [
        (["none"], .success([])),
        (["name:string"], .success([FieldRequirement(name: "name", type: .string)])),
        (["name:string", "age:integer", "score:number"],
         .success([FieldRequirement(name: "name", type: .string), FieldRequirement(name: "age", type: .integer), FieldRequirement(name: "score", type: .number)])),
        (["born:Timestamp"], .success([FieldRequirement(name: "born", type: .timestamp)])),
        (["a:b:geopoint"], .success([FieldRequirement(name: "a:b", type: .geopoint)])),
        (["tags:array", "meta:map", "pic:bytes", "ref:reference", "ok:boolean", "x:double", "y:any"],
         .success([FieldRequirement(name: "tags", type: .array), FieldRequirement(name: "meta", type: .map), FieldRequirement(name: "pic", type: .bytes),
                   FieldRequirement(name: "ref", type: .reference), FieldRequirement(name: "ok", type: .boolean), FieldRequirement(name: "x", type: .double),
                   FieldRequirement(name: "y", type: .any)])),
        (["name"], .failure(RequirementSyntaxError("'name' needs a type: FIELD:TYPE such as title:string (types: \(known)), or none alone"))),
        (["name:str"], .failure(RequirementSyntaxError("unknown type 'str' in 'name:str' (types: \(known))"))),
        ([":string"], .failure(RequirementSyntaxError("':string' has no field name before ':'"))),
        (["name:"], .failure(RequirementSyntaxError("'name:' has no type after ':' (types: \(known))"))),
        (["id:string"], .failure(RequirementSyntaxError("'id' is always required (a string equal to the file name); leave it out of --require"))),
        (["a:string", "a:integer"], .failure(RequirementSyntaxError("the field 'a' is given twice"))),
        (["none", "a:string"], .failure(RequirementSyntaxError("none requires nothing but id, so it cannot be combined with FIELD:TYPE"))),
        (["a:string", "none"], .failure(RequirementSyntaxError("none requires nothing but id, so it cannot be combined with FIELD:TYPE"))),
        (["stats.views:integer"], .failure(RequirementSyntaxError("'stats.views': only top-level fields can be declared, and a field name with '.' would read as a nested path"))),
        (["__x__:string"], .failure(RequirementSyntaxError("'__x__' is reserved by Firestore (names of the form __name__)"))),
        (["a\u{7}:string"], .failure(RequirementSyntaxError("the field name contains a control character"))),
    ]

    @Test(arguments: cases)
    func parse(arguments: [String], expected: Result<[FieldRequirement], RequirementSyntaxError>) {
        let parsed = Result { () throws(RequirementSyntaxError) in try RecordSchema.parse(requirements: arguments).requiredFields }
        #expect(parsed == expected, "\(arguments)")
    }

    /// Canonical files list the required fields in the order given.
    @Test func orderIsTheCanonicalOrder() throws {
        let schema = try RecordSchema.parse(requirements: ["name:string", "age:integer"])
        #expect(schema.leadingKeys == ["id", "name", "age"])
        let rules = RecordRules(schema: schema)
        let bytes = rules.canonicalBytes(["age": .integer(1), "zeta": .null, "id": .string("a"), "name": .string("A")])
        #expect(String(decoding: bytes, as: UTF8.self) == "{\n  \"id\": \"a\",\n  \"name\": \"A\",\n  \"age\": 1,\n  \"zeta\": null\n}\n")
    }
}

@Suite struct CollectionConfigSettingsTests {
    static let target = FirestoreTarget(project: "p", collectionPath: "users")

    @Test(arguments: [IDField.standard, .none, .field("docId")])
    func idFieldRoundTrips(setting: IDField) throws {
        let config = CollectionConfig(remote: Self.target, schema: RecordSchema(requiredFields: []), idField: setting)
        let decoded = try CollectionConfig.decode(config.encoded())
        #expect(decoded == config)
        #expect(decoded.rules.idField == setting)
    }

    /// A config.json written before idField existed keeps today's behaviour.
    @Test func absentIDFieldIsTheDefault() throws {
        let old = #"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "books"}}"#
        #expect(try CollectionConfig.decode(Array(old.utf8)).idField == .standard)
    }

    static func config(_ remote: String, _ extra: String = "") -> String {
        #"{"version": 1, "remote": {"type": "firestore", "collection": "books", "#  + remote + "}" + extra + "}"
    }

    /// A committed config.json is untrusted (<doc:Safety>): what it says
    /// becomes request paths, so values that could leave their path segment
    /// are refused when it is read.
    static let invalid: [(String, String)] = [
        (config(#""project": "a/b""#), "remote.project: project id 'a/b' contains '/'"),
        (config(#""project": "..""#), "remote.project: '..' is not a project id"),
        (config(#""project": "p q""#), "remote.project: the project id contains whitespace or a control character"),
        (config(#""project": "p\u001b[2J""#), "remote.project: the project id contains whitespace or a control character"),
        (config(#""project": "p", "database": "../x""#), "remote.database: database id '../x' contains '/'"),
        (config(#""project": "p""#, #", "idField": 3"#), "idField must be a field name such as \"id\" or \"docId\", or null for none"),
        (config(#""project": "p""#, #", "idField": """#), "idField: the id field name is empty; give a field name such as docId, or none"),
        (config(#""project": "p""#, #", "idField": "title""#),
         "idField: 'title' cannot be both the id field and a required field: documents keep the record id in 'title', and record files keep it in 'id'"),
    ]

    @Test(arguments: invalid)
    func refusedConfig(text: String, message: String) {
        #expect(throws: StateFileError(message: message)) { try CollectionConfig.decode(Array(text.utf8)) }
    }

    static let projects: [(String, String?)] = [
        ("my-project", nil), ("demo-x", nil), ("p", nil), ("t-name-1234abcd", nil),
        ("", "the project id is empty"), ("a/b", "project id 'a/b' contains '/'"), (".", "'.' is not a project id"),
        ("a b", "the project id contains whitespace or a control character"),
        ("a\tb", "the project id contains whitespace or a control character"),
        ("a\u{00A0}b", "the project id contains whitespace or a control character"),
        ("a\u{7F}", "the project id contains whitespace or a control character"),
    ]

    @Test(arguments: projects)
    func projectIDs(project: String, problem: String?) {
        #expect(FirestoreTarget.problem(withProject: project) == problem)
    }
}
