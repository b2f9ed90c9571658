import Testing
@testable import BooksyncCore

/// The plan file (`booksync plan --out`): it reads back as written, and any
/// change to it by hand — a value, a revision, a write added, a summary — is
/// refused, as are other formats, versions and ids that are no records'.
@Suite struct SavedPlanFileTests {
    static let plan = SavedPlan(
        remoteName: "production",
        target: TargetIdentity(endpoint: "https://firestore.googleapis.com/v1/", collection: "projects/p/databases/(default)/documents/books"),
        pathspecs: ["sci/"],
        writes: [
            .init(id: try! RecordID("dune"), action: .update, fileHash: ContentHash(text: "sha256:" + String(repeating: "a", count: 64)),
                  remoteRevision: "2026-12-05T10:00:00.123456Z",
                  changes: [.init(path: FieldPath(["stats", "rating"]), before: .double(4.2), after: .double(4.5)),
                            .init(path: FieldPath(field: "subtitle"), before: nil, after: .string("| `x` <b>"))]),
            .init(id: try! RecordID("new"), action: .create, fileHash: ContentHash(text: "sha256:" + String(repeating: "b", count: 64)),
                  remoteRevision: nil, changes: [.init(path: FieldPath(field: "title"), before: nil, after: .timestamp(Timestamp(microsecondsSinceEpoch: 1_000_005)))]),
            .init(id: try! RecordID("old"), action: .delete, fileHash: nil, remoteRevision: "2026-12-05T10:00:01Z",
                  changes: [.init(path: FieldPath(field: "title"), before: .string("Old"), after: nil)]),
        ],
        held: [.init(id: try! RecordID("bad"), reason: "the file is invalid")])

    static func read(_ bytes: [UInt8]) throws(SavedPlanError) -> SavedPlan {
        try SavedPlan.read(bytes, recordID: { raw throws(RecordIDError) in try RecordID(raw) })
    }

    static var text: String { String(decoding: plan.fileBytes(), as: UTF8.self) }

    @Test func readsBackAsWritten() throws {
        #expect(try Self.read(Self.plan.fileBytes()) == Self.plan)
        // Canonical: the same plan is the same bytes, format and version first.
        #expect(Self.plan.fileBytes() == Self.plan.fileBytes())
        #expect(Self.text.hasPrefix("{\n  \"format\": \"booksync-plan\",\n  \"version\": 1,\n  \"digest\": \"sha256:"))
    }

    /// The scope is written only for a scoped collection (so other plans are
    /// the bytes they were before it existed), reads back, and is covered
    /// by the digest.
    @Test func theScopeIsKeptOnlyWhenThereIsOne() throws {
        #expect(!Self.text.contains("\"scope\"") && Self.text.contains("\"version\": 1,"))
        let scoped = SavedPlan(remoteName: Self.plan.remoteName, target: Self.plan.target, pathspecs: [], writes: Self.plan.writes,
                               held: Self.plan.held, scope: "rating >= 4")
        let text = String(decoding: scoped.fileBytes(), as: UTF8.self)
        #expect(text.contains(#""scope": "rating >= 4""#) && text.contains("\"version\": 2,"), "\(text)")
        #expect(try Self.read(scoped.fileBytes()) == scoped)
        #expect(throws: SavedPlanError.edited) { try Self.read(Array(text.replacingAll("rating >= 4", with: "rating >= 1").utf8)) }
    }

    /// A scope only in version 2, and always there, even with a digest that
    /// agrees (as a booksync between the two formats wrote, or a hand that
    /// computed it): the version says which check apply can make.
    @Test(arguments: [(1, true), (2, false)])
    func aScopeAndTheVersionGoTogether(version: Int64, scoped: Bool) throws {
        let scopedPlan = SavedPlan(remoteName: Self.plan.remoteName, target: Self.plan.target, pathspecs: [], writes: Self.plan.writes,
                                   held: Self.plan.held, scope: "rating >= 4")
        var fields = try JSONParser.parseObject(scopedPlan.fileBytes())
        fields["digest"] = nil
        fields["version"] = .integer(version)
        if !scoped { fields["scope"] = nil }
        let leading = ["format", "version", "digest"]
        fields["digest"] = .string(SHA256.contentHash(CanonicalJSON.encode(fields, leadingKeys: leading)).text)
        #expect(throws: SavedPlanError.field("scope", "in a plan of version 2 only, and always there (make the plan again with booksync plan)")) {
            try Self.read(CanonicalJSON.encode(fields, leadingKeys: leading))
        }
    }

    @Test func whitespaceAloneIsNoEdit() throws {
        let reindented = Self.text.replacingAll("\n  ", with: "\n    ")
        #expect(try Self.read(Array(reindented.utf8)) == Self.plan)
    }

    struct Edit: CustomTestStringConvertible, Sendable {
        let name: String
        let from: String
        let to: String
        let expected: SavedPlanError
        var testDescription: String { name }
    }

    static let edits: [Edit] = [
        Edit(name: "a value", from: "4.5", to: "5.0", expected: .edited),
        Edit(name: "a revision", from: "10:00:00.123456Z", to: "10:00:00.999999Z", expected: .edited),
        Edit(name: "a file hash", from: "\"sha256:aaaa", to: "\"sha256:cccc", expected: .edited),
        Edit(name: "an action", from: "\"action\": \"update\"", to: "\"action\": \"delete\"", expected: .edited),
        Edit(name: "the target", from: "documents/books", to: "documents/authors", expected: .edited),
        Edit(name: "a held record dropped", from: "\"id\": \"bad\"", to: "\"id\": \"bad2\"", expected: .edited),
        Edit(name: "another version", from: "\"version\": 1", to: "\"version\": 3", expected: .otherVersion(3)),
        Edit(name: "another format", from: "\"booksync-plan\"", to: "\"terraform-plan\"", expected: .notAPlan("it has no \"format\": \"booksync-plan\"")),
    ]

    @Test(arguments: edits) func anEditByHandIsRefused(_ edit: Edit) {
        #expect(Self.text.contains(edit.from), "the edit must change something")
        let edited = Self.text.replacingFirst(edit.from, with: edit.to)
        #expect(throws: edit.expected) { try Self.read(Array(edited.utf8)) }
    }

    /// An edit that also recomputes the digest (the file is not signed) still
    /// must agree with itself: its summary and the names it shows readers.
    @Test func aConsistentDigestStillNeedsAConsistentSummary() throws {
        var fields = try JSONParser.parseObject(Self.plan.fileBytes())
        fields["summary"] = .map(["creates": .integer(0), "updates": .integer(1), "deletes": .integer(1), "fields": .integer(4), "held": .integer(1)])
        fields.removeValue(forKey: "digest")
        fields["digest"] = .string(SHA256.contentHash(CanonicalJSON.encode(fields, leadingKeys: ["format", "version", "digest"])).text)
        #expect(throws: SavedPlanError.edited) { try Self.read(CanonicalJSON.encode(fields, leadingKeys: ["format", "version", "digest"])) }
    }

    /// A write listed twice would be sent twice: refused even with a recomputed digest.
    @Test func aRecordWrittenTwiceIsRefused() throws {
        var fields = try JSONParser.parseObject(Self.plan.fileBytes())
        guard case .array(let writes)? = fields["writes"], case .map(var summary)? = fields["summary"] else { throw SavedPlanError.edited }
        fields["writes"] = .array([writes[0], writes[0]] + writes.dropFirst())
        summary["updates"] = .integer(2)
        summary["fields"] = .integer(6)
        fields["summary"] = .map(summary)
        fields.removeValue(forKey: "digest")
        fields["digest"] = .string(SHA256.contentHash(CanonicalJSON.encode(fields, leadingKeys: ["format", "version", "digest"])).text)
        #expect(throws: SavedPlanError.field("writes", "in id order, each record once (in writes or in held)")) {
            try Self.read(CanonicalJSON.encode(fields, leadingKeys: ["format", "version", "digest"]))
        }
    }

    @Test func anIDThatIsNoRecordsIsRefused() {
        let hostile = Self.text.replacingFirst("\"id\": \"dune\"", with: "\"id\": \"../etc/passwd\"")
        #expect(throws: SavedPlanError.self) { try Self.read(Array(hostile.utf8)) }
    }

    @Test func notJSONAndTooLarge() {
        #expect(throws: SavedPlanError.self) { try Self.read(Array("{\"format\": ".utf8)) }
        #expect(throws: SavedPlanError.tooLarge(bytes: SavedPlan.maximumFileBytes + 1, limit: SavedPlan.maximumFileBytes)) {
            try Self.read([UInt8](repeating: 0x20, count: SavedPlan.maximumFileBytes + 1))
        }
    }

    @Test func fieldChangesAreTheFilesAgainstTheDocument() {
        let before: Fields = ["title": .string("Dune"), "stats": .map(["rating": .double(4.2), "votes": .integer(9)]), "gone": .bool(true)]
        let after: Fields = ["title": .string("Dune"), "stats": .map(["rating": .double(4.5), "votes": .integer(9)]), "new": .null]
        #expect(SavedPlan.FieldChange.between(before, after) == [
            .init(path: FieldPath(field: "gone"), before: .bool(true), after: nil),
            .init(path: FieldPath(field: "new"), before: nil, after: .null),
            .init(path: FieldPath(["stats", "rating"]), before: .double(4.2), after: .double(4.5)),
        ])
        #expect(SavedPlan.FieldChange.between(nil, ["a": .integer(1)]) == [.init(path: FieldPath(field: "a"), before: nil, after: .integer(1))])
        #expect(SavedPlan.FieldChange.between(["a": .integer(1)], nil) == [.init(path: FieldPath(field: "a"), before: .integer(1), after: nil)])
    }
}

private extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        split(separator: target, maxSplits: 1, omittingEmptySubsequences: false).joined(separator: replacement)
    }

    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
