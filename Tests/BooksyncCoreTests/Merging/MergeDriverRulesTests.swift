import Testing
@testable import BooksyncCore

/// The rules of git's merge drivers, without git: the manifest merged by
/// record, record files checked against the collection's rules, and conflict
/// markers recognized in state files.
@Suite struct ManifestMergeTests {
    static let e = BaseEntry(hash: "sha256:e", revision: "r1")
    static let o = BaseEntry(hash: "sha256:o", revision: "r2")
    static let t = BaseEntry(hash: "sha256:t", revision: "r3")
    static let x = BaseEntry(hash: "sha256:x", revision: "r4")

    /// One record's entry on each side (nil: absent) and what the merge makes of it.
    enum Expected: Equatable {
        case entry(BaseEntry?)
        case conflict(String)
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let base: BaseEntry?
        let ours: BaseEntry?
        let theirs: BaseEntry?
        let expected: Expected
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "same on both sides", base: e, ours: e, theirs: e, expected: .entry(e)),
        Row(name: "changed on our side only", base: e, ours: o, theirs: e, expected: .entry(o)),
        Row(name: "changed on their side only", base: e, ours: e, theirs: t, expected: .entry(t)),
        Row(name: "changed on both the same way", base: e, ours: x, theirs: x, expected: .entry(x)),
        Row(name: "changed on both differently", base: e, ours: o, theirs: t, expected: .conflict("changed differently on both sides")),
        Row(name: "added on our side", base: nil, ours: o, theirs: nil, expected: .entry(o)),
        Row(name: "added on their side", base: nil, ours: nil, theirs: t, expected: .entry(t)),
        Row(name: "added on both the same way", base: nil, ours: x, theirs: x, expected: .entry(x)),
        Row(name: "added on both differently", base: nil, ours: o, theirs: t, expected: .conflict("added differently on both sides")),
        Row(name: "removed on our side, unchanged on theirs", base: e, ours: nil, theirs: e, expected: .entry(nil)),
        Row(name: "removed on their side, unchanged on ours", base: e, ours: e, theirs: nil, expected: .entry(nil)),
        Row(name: "removed on both", base: e, ours: nil, theirs: nil, expected: .entry(nil)),
        Row(name: "removed on our side, changed on theirs", base: e, ours: nil, theirs: t, expected: .conflict("removed on our side, changed on theirs")),
        Row(name: "changed on our side, removed on theirs", base: e, ours: o, theirs: nil, expected: .conflict("changed on our side, removed on theirs")),
        Row(name: "only the revision differs", base: e, ours: BaseEntry(hash: "sha256:e", revision: "r2"),
            theirs: BaseEntry(hash: "sha256:e", revision: "r3"), expected: .conflict("changed differently on both sides")),
    ]

    static func manifest(_ entry: BaseEntry?, id: RecordID) -> Manifest {
        // A record nobody touches rides along, to show that rows do not disturb each other.
        var entries = [try! RecordID("bystander"): BaseEntry(hash: "sha256:b", revision: "r0")]
        entries[id] = entry
        return Manifest(entries: entries, configFingerprint: "sha256:config")
    }

    @Test(arguments: rows)
    func rule(_ row: Row) throws {
        let id = try RecordID("dune")
        let result = ManifestMerge.merge(base: Self.manifest(row.base, id: id), ours: Self.manifest(row.ours, id: id),
                                         theirs: Self.manifest(row.theirs, id: id))
        #expect(result.manifest.entries[try RecordID("bystander")] == BaseEntry(hash: "sha256:b", revision: "r0"))
        #expect(result.manifest.configFingerprint == "sha256:config")
        #expect(!result.configConflict)
        switch row.expected {
        case .entry(let entry):
            #expect(result.isClean)
            #expect(result.manifest.entries[id] == entry)
            #expect(result.manifest.entries.count == (entry == nil ? 1 : 2))
        case .conflict(let reason):
            #expect(!result.isClean)
            #expect(result.conflicts == [ManifestMerge.Conflict(id: id, base: row.base, ours: row.ours, theirs: row.theirs)])
            #expect(result.conflicts.first?.reason == reason)
            // Left out, so that booksync compares the file with the remote by content.
            #expect(result.manifest.entries[id] == nil)
        }
        // Whatever happened, the result is a manifest booksync reads back.
        #expect(try Manifest.decode(result.manifest.encoded()) == result.manifest)
    }

    /// Ids that differ only by Unicode normalization are two records, as in Firestore.
    @Test func idsCompareByBytes() throws {
        let composed = try RecordID("caf\u{E9}"), decomposed = try RecordID("cafe\u{301}")
        let result = ManifestMerge.merge(base: Manifest(), ours: Manifest(entries: [composed: Self.o]),
                                         theirs: Manifest(entries: [decomposed: Self.t]))
        #expect(result.isClean)
        #expect(result.manifest.entries.count == 2)
        #expect(result.manifest.entries[composed] == Self.o)
        #expect(result.manifest.entries[decomposed] == Self.t)
    }

    struct FingerprintRow: CustomTestStringConvertible, Sendable {
        let name: String
        let base: String?, ours: String?, theirs: String?
        /// Whether each side also recorded a record of its own.
        let oursSynced: Bool, theirsSynced: Bool
        let expected: String?
        let conflict: Bool
        var testDescription: String { name }
    }

    static let fingerprintRows: [FingerprintRow] = [
        FingerprintRow(name: "equal", base: "A", ours: "A", theirs: "A", oursSynced: true, theirsSynced: true, expected: "A", conflict: false),
        FingerprintRow(name: "changed the same way", base: "A", ours: "B", theirs: "B", oursSynced: true, theirsSynced: true, expected: "B", conflict: false),
        FingerprintRow(name: "changed on our side, they recorded nothing", base: "A", ours: "B", theirs: "A", oursSynced: true, theirsSynced: false, expected: "B", conflict: false),
        FingerprintRow(name: "changed on their side, we recorded nothing", base: "A", ours: "A", theirs: "B", oursSynced: false, theirsSynced: true, expected: "B", conflict: false),
        // Our new entries were validated under A, not B: no fingerprint is the truth.
        FingerprintRow(name: "changed on their side, we recorded under the old one", base: "A", ours: "A", theirs: "B", oursSynced: true, theirsSynced: true, expected: nil, conflict: false),
        FingerprintRow(name: "changed on our side, they recorded under the old one", base: "A", ours: "B", theirs: "A", oursSynced: true, theirsSynced: true, expected: nil, conflict: false),
        FingerprintRow(name: "first recorded on one side", base: nil, ours: nil, theirs: "B", oursSynced: false, theirsSynced: true, expected: "B", conflict: false),
        FingerprintRow(name: "changed differently on both", base: "A", ours: "B", theirs: "C", oursSynced: true, theirsSynced: true, expected: nil, conflict: true),
    ]

    @Test(arguments: fingerprintRows)
    func configFingerprint(_ row: FingerprintRow) throws {
        let shared = [try RecordID("shared"): Self.e]
        func side(_ fingerprint: String?, synced: Bool, _ id: String, _ entry: BaseEntry) throws -> Manifest {
            var entries = shared
            if synced { entries[try RecordID(id)] = entry }
            return Manifest(entries: entries, configFingerprint: fingerprint)
        }
        let result = ManifestMerge.merge(
            base: Manifest(entries: shared, configFingerprint: row.base),
            ours: try side(row.ours, synced: row.oursSynced, "mine", Self.o),
            theirs: try side(row.theirs, synced: row.theirsSynced, "yours", Self.t))
        #expect(result.manifest.configFingerprint == row.expected)
        #expect(result.configConflict == row.conflict)
        #expect(result.conflicts.isEmpty)
        #expect(result.manifest.entries.count == 1 + (row.oursSynced ? 1 : 0) + (row.theirsSynced ? 1 : 0))
    }
}

@Suite struct RecordFileMergeTests {
    static let dune = try! RecordID("dune")
    static let base: Fields = ["id": .string("dune"), "title": .string("Dune"), "author": .string("Herbert"), "genre": .string("sf"), "year": .integer(1965),
                               "stats": .map(["rating": .integer(4), "views": .integer(1)])]

    static func with(_ changes: Fields, without removed: [String] = []) -> Fields {
        base.merging(changes) { _, new in new }.filter { !removed.contains($0.key) }
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let ours: Fields
        let theirs: Fields
        let expected: Fields
        /// Conflicting paths in dotted notation.
        let conflicts: [String]
        let keptForValidity: [String]
        let invalid: Bool
        let keptOursWhole: Bool
        var testDescription: String { name }
    }

    static let huge = Value.string(String(repeating: "x", count: 600_000))

    static let rows: [Row] = [
        Row(name: "clean merge of different fields", ours: with(["title": .string("Dune!")]), theirs: with(["year": .integer(1966)]),
            expected: with(["title": .string("Dune!"), "year": .integer(1966)]), conflicts: [], keptForValidity: [], invalid: false, keptOursWhole: false),
        Row(name: "conflicting field keeps ours", ours: with(["title": .string("Ours")]), theirs: with(["title": .string("Theirs")]),
            expected: with(["title": .string("Ours")]), conflicts: ["title"], keptForValidity: [], invalid: false, keptOursWhole: false),
        Row(name: "nested keys changed on different sides merge", ours: with(["stats": .map(["rating": .integer(5), "views": .integer(1)])]),
            theirs: with(["stats": .map(["rating": .integer(4), "views": .integer(2)])]),
            expected: with(["stats": .map(["rating": .integer(5), "views": .integer(2)])]), conflicts: [], keptForValidity: [], invalid: false, keptOursWhole: false),
        Row(name: "conflicting nested key keeps ours, the rest merges", ours: with(["stats": .map(["rating": .integer(5), "views": .integer(1)]), "title": .string("Dune!")]),
            theirs: with(["stats": .map(["rating": .integer(3), "views": .integer(1)])]),
            expected: with(["stats": .map(["rating": .integer(5), "views": .integer(1)]), "title": .string("Dune!")]),
            conflicts: ["stats.rating"], keptForValidity: [], invalid: false, keptOursWhole: false),
        Row(name: "their side dropped a required field", ours: with(["title": .string("Dune!")]), theirs: with([:], without: ["genre"]),
            expected: with(["title": .string("Dune!")]), conflicts: [], keptForValidity: ["genre"], invalid: true, keptOursWhole: false),
        Row(name: "their side changed a required field's type", ours: base, theirs: with(["author": .integer(7), "year": .integer(1966)]),
            expected: with(["year": .integer(1966)]), conflicts: [], keptForValidity: ["author"], invalid: true, keptOursWhole: false),
        Row(name: "their side changed the id", ours: base, theirs: with(["id": .string("dune-2"), "year": .integer(1966)]),
            expected: with(["year": .integer(1966)]), conflicts: [], keptForValidity: ["id"], invalid: true, keptOursWhole: false),
        Row(name: "their side removed the id", ours: base, theirs: with([:], without: ["id"]),
            expected: base, conflicts: [], keptForValidity: ["id"], invalid: true, keptOursWhole: false),
        Row(name: "both sides grew it past Firestore's size limit", ours: with(["a": huge]), theirs: with(["b": huge]),
            expected: with(["a": huge]), conflicts: [], keptForValidity: [], invalid: true, keptOursWhole: true),
    ]

    @Test(arguments: rows)
    func mergedRecordIsValidOrAConflict(_ row: Row) {
        let outcome = RecordFileMerge.merge(base: Self.base, ours: row.ours, theirs: row.theirs, id: Self.dune, rules: RecordRules())
        #expect(outcome.fields == row.expected)
        #expect(outcome.conflicts.map(\.description) == row.conflicts)
        #expect(outcome.keptForValidity == row.keptForValidity)
        #expect(outcome.problems.isEmpty == !row.invalid)
        #expect(outcome.keptOursWhole == row.keptOursWhole)
        #expect(outcome.isClean == (row.conflicts.isEmpty && !row.invalid))
        // What the driver writes is always a valid record when ours was.
        #expect(RecordRules().problems(in: outcome.fields, id: Self.dune).isEmpty)
    }

    /// The id comes from the path git merges: a record whose id matches neither is not clean.
    @Test func idIsCheckedAgainstThePath() throws {
        let outcome = RecordFileMerge.merge(base: Self.base, ours: Self.base, theirs: Self.base, id: try RecordID("other"), rules: RecordRules())
        #expect(!outcome.isClean)
        #expect(outcome.keptOursWhole)
        #expect(outcome.problems.map(\.message) == ["field 'id' is \"dune\" but the file name says \"other\"; rename the file or fix the field"])
    }
}

@Suite struct GitConflictMarkersTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let text: String
        let expected: Bool
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "git's markers", text: "{\n<<<<<<< HEAD\n  \"a\": 1\n=======\n  \"a\": 2\n>>>>>>> branch\n}\n", expected: true),
        Row(name: "diff3 style with CRLF", text: "{\r\n<<<<<<< ours\r\n||||||| base\r\n=======\r\n>>>>>>> theirs\r\n}\r\n", expected: true),
        Row(name: "bare markers", text: "<<<<<<<\n=======\n>>>>>>>\n", expected: true),
        Row(name: "valid JSON", text: "{\n  \"version\": 1,\n  \"records\": {}\n}\n", expected: false),
        Row(name: "markers inside a string", text: "{\n  \"<<<<<<< x\": \">>>>>>> y\"\n}\n", expected: false),
        Row(name: "opening only", text: "<<<<<<< HEAD\n{\n", expected: false),
        Row(name: "closing before opening", text: ">>>>>>> b\n<<<<<<< a\n", expected: false),
        Row(name: "eight angle brackets", text: "<<<<<<<<\n>>>>>>>>\n", expected: false),
    ]

    @Test(arguments: rows)
    func recognizesAnUnfinishedMerge(_ row: Row) {
        #expect(GitConflictMarkers.found(in: Array(row.text.utf8)) == row.expected)
    }
}
