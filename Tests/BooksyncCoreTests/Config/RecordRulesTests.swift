import Testing
@testable import BooksyncCore

@Suite struct RecordSchemaTests {
    static let dune = try! RecordID("dune")
    static let complete: Fields = ["id": .string("dune"), "title": .string("Dune"), "author": .string("Frank Herbert"), "genre": .string("sf")]

    static let cases: [(String, Fields, [String])] = [
        ("complete", complete, []),
        ("extra fields are fine", complete.merging(["year": .integer(1965), "x": .null]) { a, _ in a }, []),
        ("missing id", complete.filter { $0.key != "id" }, ["missing required field 'id' (it must be \"dune\", the id from the file name)"]),
        ("id differs from file name", complete.merging(["id": .string("dune2")]) { _, b in b },
         ["field 'id' is \"dune2\" but the file name says \"dune\"; rename the file or fix the field"]),
        ("id not a string", complete.merging(["id": .integer(1)]) { _, b in b }, ["field 'id' must be a string, found integer"]),
        ("missing two", ["id": .string("dune"), "title": .string("Dune")],
         ["missing required field 'author' (string)", "missing required field 'genre' (string)"]),
        ("wrong type", complete.merging(["title": .array([])]) { _, b in b }, ["field 'title' must be string, found array"]),
    ]

    @Test(arguments: cases)
    func bookSchema(name: String, fields: Fields, problems: [String]) {
        #expect(RecordSchema.books.problems(in: fields, id: Self.dune) == problems, "\(name)")
    }

    @Test func configurableSchema() {
        let schema = RecordSchema(requiredFields: [FieldRequirement(name: "born", type: .timestamp), FieldRequirement(name: "n", type: .number)])
        #expect(schema.leadingKeys == ["id", "born", "n"])
        let ok: Fields = ["id": .string("dune"), "born": .timestamp(Timestamp(microsecondsSinceEpoch: 0)), "n": .double(1)]
        #expect(schema.problems(in: ok, id: Self.dune).isEmpty)
        let bad: Fields = ["id": .string("dune"), "born": .string("1920"), "n": .string("1")]
        #expect(schema.problems(in: bad, id: Self.dune) == ["field 'born' must be timestamp, found string", "field 'n' must be number, found string"])
    }
}

@Suite struct FirestoreLimitsTests {
    static let id = try! RecordID("x")

    static func nested(_ depth: Int) -> Value {
        (0..<depth).reduce(Value.integer(1)) { inner, _ in .map(["m": inner]) }
    }

    static let cases: [(String, Fields, [String])] = [
        ("small record", ["a": .string("b")], []),
        ("depth 20 is allowed", ["d": nested(19)], []),
        ("depth 21 is not", ["d": nested(20)], ["field 'd" + String(repeating: ".m", count: 19) + "' is nested more than 20 levels deep; Firestore allows 20"]),
        ("array in array", ["a": .array([.integer(1), .array([])])], ["field 'a[1]' is an array inside an array; Firestore does not allow that (wrap it in a map)"]),
        ("array in map in array is fine", ["a": .array([.map(["b": .array([])])])], []),
        ("reserved name", ["__name__": .null], ["field '__name__': names of the form __name__ are reserved by Firestore"]),
        ("nested reserved name", ["m": .map(["__x__": .null])], ["field 'm.__x__': names of the form __name__ are reserved by Firestore"]),
        ("empty name", ["": .null], ["field '' has an empty name; Firestore field names cannot be empty"]),
    ]

    @Test func oversizedRecord() {
        // 16 + 2 (name "x") + 6 ("books") + 5 ("blob") + 1 MiB + 32
        let fields: Fields = ["blob": .bytes([UInt8](repeating: 0, count: 1_048_576))]
        #expect(FirestoreLimits.problems(in: fields, id: Self.id, collectionPath: "books")
            == ["the record is 1048637 bytes as a Firestore document; the limit is 1048576 (1 MiB)"])
    }

    @Test(arguments: cases)
    func limits(name: String, fields: Fields, problems: [String]) {
        #expect(FirestoreLimits.problems(in: fields, id: Self.id, collectionPath: "books") == problems, "\(name)")
    }

    /// The whole dotted path counts, as the emulator counts it (tried on it
    /// at 1,500 and 1,501 bytes): names joined by dots, no backticks for a
    /// name that would need them, arrays adding nothing. Only the shortest
    /// path past the limit is reported, not every field below it.
    @Test(arguments: [
        ("m.<1,498>: 1,500 bytes", ["m": .map([String(repeating: "a", count: 1_498): .null])], nil),
        ("m.<1,499>: 1,501 bytes", ["m": .map([String(repeating: "a", count: 1_499): .null])], 1_501),
        ("é is two bytes", ["m": .map([String(repeating: "é", count: 749) + "a": .null])], 1_501),
        ("no backticks counted", ["-": .map([String(repeating: "-", count: 1_498): .null])], nil),
        ("arrays add nothing", ["a": .array([.map([String(repeating: "k", count: 1_498): .null])])], nil),
        ("a map in an array", ["a": .array([.integer(1), .map([String(repeating: "k", count: 1_499): .null])])], 1_501),
        ("deeper", ["a": .map(["b": .map(["c": .map([String(repeating: "k", count: 1_495): .map(["below": .null])])])])], 1_501),
    ] as [(String, Fields, Int?)])
    func fieldPathLimit(name: String, fields: Fields, bytes: Int?) {
        let problems = FirestoreLimits.problems(in: fields, id: Self.id, collectionPath: "books")
        if let bytes {
            #expect(problems.count == 1, "\(name): \(problems)")
            #expect(problems.first?.hasSuffix(" is \(bytes) bytes (the names down to the field, joined by dots); Firestore allows at most 1500") == true,
                    "\(name): \(problems)")
        } else {
            #expect(problems.isEmpty, "\(name): \(problems)")
        }
    }

    @Test func aNameTooLongIsNotAlsoAPathTooLong() {
        let name = String(repeating: "n", count: 1_501)
        #expect(FirestoreLimits.problems(in: ["m": .map([name: .map(["x": .null])])], id: Self.id, collectionPath: "books")
            == ["field name '\(name.prefix(40))…' is 1501 bytes; Firestore allows at most 1500"])
    }

    @Test func documentSizeFollowsTheDocumentedExample() throws {
        // https://firebase.google.com/docs/firestore/storage-size: users/jeff/tasks/my_task_id is 147 bytes.
        let fields: Fields = ["type": .string("Personal"), "done": .bool(false), "priority": .integer(1), "description": .string("Learn Cloud Firestore")]
        #expect(FirestoreLimits.documentSize(fields, id: try RecordID("my_task_id"), collectionPath: "users/jeff/tasks") == 147)
    }
}

@Suite struct StateFileTests {
    @Test func manifestRoundTripsOneRecordPerLine() throws {
        var manifest = Manifest()
        manifest.entries[try RecordID("b")] = BaseEntry(hash: "sha256:bb", revision: "2024-01-01T00:00:00.000002Z")
        manifest.entries[try RecordID("a \"q\"")] = BaseEntry(hash: "sha256:aa", revision: "2024-01-01T00:00:00.000001Z")
        let text = String(decoding: manifest.encoded(), as: UTF8.self)
        #expect(text == """
            {
              "version": 1,
              "records": {
                "a \\"q\\"": {"hash": "sha256:aa", "revision": "2024-01-01T00:00:00.000001Z"},
                "b": {"hash": "sha256:bb", "revision": "2024-01-01T00:00:00.000002Z"}
              }
            }

            """)
        #expect(try Manifest.decode(manifest.encoded()) == manifest)
        #expect(try Manifest.decode(Manifest().encoded()) == Manifest())
    }

    @Test func manifestKeepsTheConfigFingerprint() throws {
        var manifest = Manifest(configFingerprint: "sha256:cf")
        #expect(try Manifest.decode(manifest.encoded()) == manifest)
        manifest.entries[try RecordID("a")] = BaseEntry(hash: "sha256:aa", revision: "r")
        let text = String(decoding: manifest.encoded(), as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"version\": 1,\n  \"config\": \"sha256:cf\",\n  \"records\": {\n"))
        #expect(Manifest.decodeCanonical(manifest.encoded()) == manifest, "the fast path reads it")
        // Reformatted by hand: the general parser reads the same.
        let pretty = Array(#"{"records": {"a": {"revision": "r", "hash": "sha256:aa"}}, "config": "sha256:cf", "version": 1}"#.utf8)
        #expect(try Manifest.decode(pretty) == manifest)
    }

    @Test(arguments: [
        (#"{"version": 2, "records": {}}"#, "version 2 is not supported by this booksync (it reads version 1); upgrade booksync"),
        (#"{"version": 1}"#, "missing \"records\" object"),
        (#"{"version": 1, "records": {"..": {"hash": "sha256:x", "revision": "r"}}}"#, "record '..': '..' is not a valid record id ('.' and '..' are reserved)"),
        (#"{"version": 1, "records": {"a": {"hash": "md5:x", "revision": "r"}}}"#, "record 'a' needs {\"hash\": \"sha256:…\", \"revision\": \"…\"}"),
        ("{\"version\": 1,\n \"records\": {,}}", "expected a key in double quotes, found ','"),
    ])
    func damagedManifestsAreExplained(text: String, message: String) {
        #expect(throws: StateFileError.self) { try Manifest.decode(Array(text.utf8)) }
        do { _ = try Manifest.decode(Array(text.utf8)) } catch { #expect(error.message == message) }
    }

    @Test func configRoundTrips() throws {
        let config = CollectionConfig(
            remote: FirestoreTarget(project: "p", database: "db", collectionPath: "users/u1/books"),
            schema: RecordSchema(requiredFields: [FieldRequirement(name: "name", type: .string), FieldRequirement(name: "born", type: .timestamp)]),
            tokenCommand: "gcloud auth print-access-token")
        #expect(try CollectionConfig.decode(config.encoded()) == config)
    }

    @Test(arguments: [
        (#"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "a/b"}}"#,
         "remote.collection: 'a/b' names a document, not a collection; a collection path has an odd number of segments (books, users/u1/books)"),
        (#"{"version": 1, "remote": {"type": "s3", "project": "p", "collection": "a"}}"#,
         "remote.type must be \"firestore\" (the only remote booksync supports so far)"),
        (#"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "a"}, "schema": {"required": [{"name": "x", "type": "text"}]}}"#,
         "schema.required field 'x': unknown type 'text' (known: string, integer, double, number, boolean, timestamp, bytes, reference, geopoint, map, array, any)"),
        (#"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "a"}, "schema": {"required": [{"name": "t", "type": "string"}, {"name": "t", "type": "string"}]}}"#,
         "schema.required lists 't' twice (a field is either required or optional, once)"),
    ])
    func badConfigsAreExplained(text: String, message: String) {
        do {
            _ = try CollectionConfig.decode(Array(text.utf8))
            Issue.record("expected an error")
        } catch {
            #expect(error.message == message)
        }
    }
}

@Suite struct ReferenceTests {
    @Test func fullNamesUnderOurDatabaseAreShortenedOthersKept() throws {
        let rules = RecordRules(documentsRoot: "projects/p/databases/(default)/documents")
        let text = """
            {"id": "x", "title": "t", "author": "a", "genre": "g",
             "own": {"$reference": "projects/p/databases/(default)/documents/authors/frank"},
             "other": {"$reference": "projects/q/databases/(default)/documents/authors/frank"},
             "list": [{"$reference": "projects/p/databases/(default)/documents/a/b"}]}
            """
        guard case .success(let fields) = rules.parse(Array(text.utf8)) else { Issue.record("parse failed"); return }
        #expect(fields["own"] == .reference("authors/frank"))
        #expect(fields["other"] == .reference("projects/q/databases/(default)/documents/authors/frank"))
        #expect(fields["list"] == .array([.reference("a/b")]))
    }
}
