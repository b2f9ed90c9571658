import Testing
@testable import BooksyncCore

/// Record ids of subcollection documents (`dune/reviews/r1`): accepted only
/// into configured subcollections, every segment checked and encoded like a
/// top-level id, and hostile segments refused.
@Suite struct SubcollectionIDTests {
    static let configured = Subcollections(entries: [
        Subcollections.Entry(path: "reviews"),
        Subcollections.Entry(path: "reviews/likes"),
        Subcollections.Entry(path: "notes of"),
    ])

    static let valid: [(id: String, file: String, documentID: String, subcollection: String?, parent: String?)] = [
        ("dune", "dune.json", "dune", nil, nil),
        ("dune/reviews/r1", "dune/reviews/r1.json", "r1", "reviews", "dune"),
        ("dune/reviews/r1/likes/l1", "dune/reviews/r1/likes/l1.json", "l1", "reviews/likes", "dune/reviews/r1"),
        ("a b/reviews/.x", "a%20b/reviews/%2Ex.json", ".x", "reviews", "a b"),
        ("über/notes of/100%", "%C3%BCber/notes%20of/100%25.json", "100%", "notes of", "über"),
        ("%2F/reviews/%2E%2E", "%252F/reviews/%252E%252E.json", "%2E%2E", "reviews", "%2F"),
        // A folder name never ends in .json, so it can never be taken for a record file.
        ("cfg.json/reviews/r.json", "cfg%2Ejson/reviews/r.json.json", "r.json", "reviews", "cfg.json"),
        (".json/reviews/r1", "%2Ejson/reviews/r1.json", "r1", "reviews", ".json"),
        ("..json/reviews/r1", "%2E%2Ejson/reviews/r1.json", "r1", "reviews", "..json"),
        ("a.json/reviews/b.json/likes/c", "a%2Ejson/reviews/b%2Ejson/likes/c.json", "c", "reviews/likes", "a.json/reviews/b.json"),
    ]

    @Test(arguments: valid)
    func pathIDsEncodeAndDecodeExactly(_ row: (id: String, file: String, documentID: String, subcollection: String?, parent: String?)) throws {
        let id = try RecordID(path: row.id, subcollections: Self.configured)
        #expect(id.rawValue == row.id)
        #expect(id.fileName == row.file)
        #expect(id.documentID == row.documentID)
        #expect(id.subcollectionPath == row.subcollection)
        #expect(id.parent?.rawValue == row.parent)
        #expect(try RecordID.fromRelativePath(row.file, subcollections: Self.configured) == id)
        #expect(RecordID(validated: row.id) == id)
        #expect(RecordID(validated: row.id).fileName == row.file)
        // A base copy's line names the record by its encoded name, read back without the config.
        #expect(RecordID.fromEncodedName(id.encodedName) == id)
        #expect(RecordID.fromEncodedName(id.encodedName)?.encodedName == id.encodedName)
    }

    /// Names that are no record's canonical encoding read back as nothing.
    @Test(arguments: ["", "dune/reviews", "dune//r1", "dune/reviews/r1/likes", "cfg.json/reviews/r1", "a%2fb", "dune/../r1", ".x", "dune/reviews/.x"])
    func namesThatEncodeNoRecordReadBackAsNothing(_ name: String) {
        #expect(RecordID.fromEncodedName(name) == nil)
    }

    static let invalid: [(String, RecordIDError)] = [
        ("dune/reviews", .notDocumentPath("dune/reviews")),
        ("dune/reviews/r1/likes", .notDocumentPath("dune/reviews/r1/likes")),
        ("/reviews/r1", .badSegment("/reviews/r1", RecordIDError.empty.message)),
        ("dune//r1", .badSegment("dune//r1", RecordIDError.empty.message)),
        ("dune/reviews/", .badSegment("dune/reviews/", RecordIDError.empty.message)),
        ("../reviews/r1", .badSegment("../reviews/r1", RecordIDError.dots("..").message)),
        ("dune/reviews/..", .badSegment("dune/reviews/..", RecordIDError.dots("..").message)),
        ("dune/../r1", .badSegment("dune/../r1", RecordIDError.dots("..").message)),
        ("dune/reviews/__x__", .badSegment("dune/reviews/__x__", RecordIDError.reserved("__x__").message)),
        ("dune/ratings/r1", .unconfiguredSubcollection("dune/ratings/r1", "ratings")),
        ("dune/likes/r1", .unconfiguredSubcollection("dune/likes/r1", "likes")),
        ("dune/reviews/r1/other/x", .unconfiguredSubcollection("dune/reviews/r1/other/x", "reviews/other")),
        ("dune/Reviews/r1", .unconfiguredSubcollection("dune/Reviews/r1", "Reviews")),
    ]

    @Test(arguments: invalid)
    func badPathsAreRefused(id: String, error: RecordIDError) {
        #expect(throws: error) { try RecordID(path: id, subcollections: Self.configured) }
    }

    @Test(arguments: ["dune/reviews/r1", "a/b/c", "x/reviews/y/likes/z"])
    func withoutSubcollectionsASlashStaysInvalid(id: String) {
        #expect(throws: RecordIDError.slash(id)) { try RecordID(path: id, subcollections: .none) }
        #expect(throws: RecordIDError.slash(id)) { try RecordID(id) }
    }

    static let badFiles: [String] = [
        "dune/reviews/r1.txt",  // not a record file: nil, checked below
        "a%2Fb/reviews/r1.json",  // an encoded '/' in a folder name
        "dune/reviews/a%2Fb.json",  // and in a file name
        "%2E%2E/reviews/r1.json",  // '..' spelled as escapes
        "../reviews/r1.json",
        "./reviews/r1.json",
        "dune/reviews/.hidden.json",
        "dune/reviews/%2e.json",  // lowercase escape: not canonical
        "a%20b/reviews/r%41.json",  // escaped plain byte: not canonical
        "dune/ratings/r1.json",
        "dune/r1.json",
        "dune//r1.json",
        "cfg.json/reviews/r1.json",  // a folder named like a record file
        "cfg%2ejson/reviews/r1.json",  // lowercase escape of the folder's '.json'
        "cfg%2Ejson.json/reviews/r1.json",
    ]

    @Test(arguments: badFiles)
    func hostileFilePathsNeverBecomeIDs(path: String) {
        let decoded = try? RecordID.fromRelativePath(path, subcollections: Self.configured)
        #expect(decoded == nil)
        if path.hasSuffix(".json"), !path.split(separator: "/").last!.hasPrefix(".") {
            #expect(throws: RecordIDError.self) { try RecordID.fromRelativePath(path, subcollections: Self.configured) }
        }
    }

    /// Every segment may fit a file name while the whole path does not fit a
    /// path: such a document is invalid, named, never a write that fails.
    @Test func aPathLongerThanRecordPathsMayBeIsRefused() throws {
        let deep = Subcollections(entries: [Subcollections.Entry(path: "c/c/c"), Subcollections.Entry(path: "c/c/c/c")])
        let segment = String(repeating: "x", count: 250)
        let fits = ([segment] + Array(repeating: "c/" + segment, count: 3)).joined(separator: "/")
        #expect(try RecordID(path: fits, subcollections: deep).fileName.utf8.count == 1_014)
        let long = ([segment] + Array(repeating: "c/" + segment, count: 4)).joined(separator: "/")
        #expect(throws: RecordIDError.pathTooLong(long, 1_267)) { try RecordID(path: long, subcollections: deep) }
    }

    @Test func childComposesLikeThePath() throws {
        let parent = try RecordID("a b")
        let child = parent.child(collection: "notes of", document: try RecordID(".x"))
        #expect(child == (try RecordID(path: "a b/notes of/.x", subcollections: Self.configured)))
        #expect(child.fileName == "a%20b/notes%20of/%2Ex.json")
        let json = try RecordID("cfg.json")
        let review = json.child(collection: "reviews", document: try RecordID("r.json"))
        #expect(review.fileName == "cfg%2Ejson/reviews/r.json.json")
        #expect(review == (try RecordID(path: "cfg.json/reviews/r.json", subcollections: Self.configured)))
        #expect(review.parent == json && review.parent?.fileName == "cfg.json.json")
        #expect(json.folderPath == "cfg%2Ejson" && review.folderPath == "cfg%2Ejson/reviews/r%2Ejson")
        #expect(try RecordID.fromFolderName("cfg%2Ejson") == json)
        #expect(throws: RecordIDError.self) { try RecordID.fromFolderName("cfg.json") }
    }

    @Test func subcollectionSchemasApplyByPath() throws {
        let rules = RecordRules(subcollections: Subcollections(entries: [
            Subcollections.Entry(path: "reviews", schema: RecordSchema(requiredFields: [FieldRequirement(name: "rating", type: .integer)])),
            Subcollections.Entry(path: "reviews/likes"),
        ]))
        let review = try rules.recordID("dune/reviews/r1")
        guard case .success(let record) = rules.load(Array(#"{"rating": 5, "id": "r1", "text": "good"}"#.utf8), id: review) else {
            Issue.record("a review with its required field must load")
            return
        }
        #expect(String(decoding: record.canonicalBytes, as: UTF8.self) == "{\n  \"id\": \"r1\",\n  \"rating\": 5,\n  \"text\": \"good\"\n}\n")
        #expect(rules.canonicalBytes(record.fields, id: review) == record.canonicalBytes)
        guard case .failure(let problems) = rules.load(Array(#"{"id": "dune/reviews/r1"}"#.utf8), id: review) else {
            Issue.record("the id must be the last segment, and rating is required")
            return
        }
        #expect(problems.diagnostics.map(\.message) == [
            "field 'id' is \"dune/reviews/r1\" but the file name says \"r1\"; rename the file or fix the field",
            "missing required field 'rating' (integer)",
        ])
        // Deeper levels have their own schema (none here), not the book schema.
        let like = try rules.recordID("dune/reviews/r1/likes/l1")
        #expect(rules.problems(in: ["id": .string("l1")], id: like).isEmpty)
        #expect(!rules.problems(in: ["id": .string("dune")], id: try rules.recordID("dune")).isEmpty)
        // The id field of a document is the document id too.
        #expect(IDField.field("docId").document(from: ["id": .string("r1")], id: review) == ["docId": .string("r1")])
    }
}

@Suite struct SubcollectionConfigTests {
    @Test func configRoundTripsSubcollectionsAndTheirSchemas() throws {
        let config = CollectionConfig(
            remote: FirestoreTarget(project: "p", collectionPath: "books"),
            subcollections: try Subcollections.parse(paths: ["reviews", "reviews/likes"], requirements: ["reviews:rating:integer", "reviews:by:string"]))
        let text = String(decoding: config.encoded(), as: UTF8.self)
        #expect(text.contains("\"subcollections\": [\n    \"reviews\",\n    \"reviews/likes\"\n  ]"))
        #expect(text.contains("\"subcollections\": {\n      \"reviews\": ["))
        #expect(try CollectionConfig.decode(config.encoded()) == config)
        #expect(config.rules.schema(for: try config.rules.recordID("d/reviews/r")).leadingKeys == ["id", "rating", "by"])
    }

    @Test func withoutSubcollectionsTheConfigIsUnchanged() {
        let config = CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books"))
        #expect(!String(decoding: config.encoded(), as: UTF8.self).contains("subcollections"))
    }

    static let head = #"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "books"}"#
    @Test(arguments: [
        (head + #", "subcollections": "reviews"}"#, "subcollections must be a list of subcollection paths such as \"reviews\" or \"reviews/likes\""),
        (head + #", "subcollections": ["../x"]}"#,
         "subcollections: subcollection path '../x' has a segment that is not a valid collection id: '..' is not a valid record id ('.' and '..' are reserved)"),
        (head + #", "subcollections": ["reviews//likes"]}"#, "subcollections: subcollection path 'reviews//likes' has an empty segment"),
        (head + #", "subcollections": ["a:b"]}"#, "subcollections: subcollection path 'a:b' contains ':'"),
        (head + #", "subcollections": ["reviews", "reviews"]}"#, "subcollections lists 'reviews' twice"),
        // A cloned config cannot make every status cost thousands of queries:
        // distinct collection ids are capped (paths are not: see below).
        (head + #", "subcollections": ["# + (0...100).map { "\"s\($0)\"" }.joined(separator: ", ") + "]}",
         "subcollections: the subcollection paths end in 101 distinct collection ids; booksync syncs at most 100 (each costs a collection-group query on every status)"),
        (head + #", "subcollections": ["reviews"], "schema": {"required": [], "subcollections": {"ratings": []}}}"#,
         "schema.subcollections names 'ratings', which is not in \"subcollections\""),
        (head + #", "subcollections": ["reviews"], "schema": {"required": [], "subcollections": {"reviews": [{"name": "x", "type": "text"}]}}}"#,
         "schema.subcollections.reviews.required field 'x': unknown type 'text' (known: string, integer, double, number, boolean, timestamp, bytes, reference, geopoint, map, array, any)"),
    ])
    func badSubcollectionConfigsAreExplained(text: String, message: String) {
        do {
            _ = try CollectionConfig.decode(Array(text.utf8))
            Issue.record("expected an error")
        } catch {
            #expect(error.message == message)
        }
    }

    @Test(arguments: [
        (["reviews"], ["ratings:x:string"], "'ratings:x:string' names the subcollection 'ratings', which no --subcollection gives"),
        (["reviews"], ["reviews"], "'reviews' needs PATH:FIELD:TYPE, such as reviews:rating:integer"),
        (["reviews"], ["reviews:x:string", "reviews:x:integer"], "the field 'x' of subcollection 'reviews' is given twice"),
        (["reviews", "reviews"], [], "the subcollection 'reviews' is given twice"),
        ((0...100).map { "s\($0)" }, [], "the subcollection paths end in 101 distinct collection ids; booksync syncs at most 100 (each costs a collection-group query on every status)"),
        (["a/../b"], [], "subcollection path 'a/../b' has a segment that is not a valid collection id: '..' is not a valid record id ('.' and '..' are reserved)"),
    ])
    func badInitArgumentsAreExplained(paths: [String], requirements: [String], message: String) {
        #expect(throws: RequirementSyntaxError(message)) { try Subcollections.parse(paths: paths, requirements: requirements) }
    }

    @Test func manifestsTakePathIDsOnlyIntoConfiguredSubcollections() throws {
        let subcollections = Subcollections(entries: [Subcollections.Entry(path: "reviews")])
        var manifest = Manifest()
        manifest.entries[try RecordID(path: "dune/reviews/r1", subcollections: subcollections)] = BaseEntry(hash: ContentHash(text: "sha256:" + String(repeating: "a", count: 64)), revision: "2024-01-01T00:00:00.000001Z")
        var bytes: [UInt8] = []
        manifest.encode { bytes += $0 }
        let decoded = try Manifest.decode(bytes, subcollections: subcollections)
        #expect(decoded.entries.count == 1)
        #expect(decoded.entries[try RecordID(path: "dune/reviews/r1", subcollections: subcollections)] != nil)
        // The same manifest in a collection without that subcollection is refused, fast path or not.
        #expect(throws: StateFileError.self) { try Manifest.decode(bytes, subcollections: .none) }
        let pretty = String(decoding: bytes, as: UTF8.self).replacingSpaces()
        #expect(throws: StateFileError.self) { try Manifest.decode(Array(pretty.utf8), subcollections: .none) }
        #expect(try Manifest.decode(Array(pretty.utf8), subcollections: subcollections).entries.count == 1)
    }
}

private extension String {
    /// The same JSON without the canonical layout, so the full parser reads it.
    func replacingSpaces() -> String { String(self.filter { $0 != "\n" }) }
}
