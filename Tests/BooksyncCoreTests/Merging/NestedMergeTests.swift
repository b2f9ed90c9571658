import Testing
@testable import BooksyncCore

/// <doc:ThreeWaySync> for nested maps: maps merge key by key at any depth, conflicts
/// are named by dotted path, arrays and tagged values are whole values. One row
/// per rule; every row is checked through `FieldMerge`, the `RecordMerge` that
/// pull and resolve use (both preferred sides), and `FieldDiff`.
@Suite struct NestedMergeTests {
    static let stats: Value = .map(["rating": .integer(4), "views": .integer(10), "by": .map(["web": .integer(7)])])
    static let base: Fields = ["id": .string("dune"), "title": .string("Dune"), "stats": stats, "tags": .array([.string("sf")])]

    /// `base` with the value at each dotted path (plain names only) replaced; nil removes it.
    static func with(_ changes: [(String, Value?)], from fields: Fields = base) -> Fields {
        var result = fields
        for (path, value) in changes {
            FieldPath(path.split(separator: ".").map(String.init)).set(value, in: &result)
        }
        return result
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let base: Fields?
        let local: Fields
        let remote: Fields
        /// The merge keeping local values on conflicting paths.
        let keepingLocal: Fields
        /// Conflicting paths in dotted notation.
        let conflicts: [String]
        /// The merge keeping remote values on conflicting paths (`--theirs`).
        let keepingRemote: Fields
        var testDescription: String { name }
    }

    static let ts1: Value = .timestamp(try! Timestamp(rfc3339: "2024-05-01T12:00:00Z"))
    static let ts2: Value = .timestamp(try! Timestamp(rfc3339: "2024-06-01T12:00:00Z"))

    static let rows: [Row] = [
        Row(name: "different nested keys on each side merge", base: base,
            local: with([("stats.rating", .integer(5))]), remote: with([("stats.views", .integer(11))]),
            keepingLocal: with([("stats.rating", .integer(5)), ("stats.views", .integer(11))]), conflicts: [],
            keepingRemote: with([("stats.rating", .integer(5)), ("stats.views", .integer(11))])),
        Row(name: "different keys three levels down merge", base: base,
            local: with([("stats.by.ios", .integer(1))]), remote: with([("stats.by.web", .integer(8))]),
            keepingLocal: with([("stats.by.ios", .integer(1)), ("stats.by.web", .integer(8))]), conflicts: [],
            keepingRemote: with([("stats.by.ios", .integer(1)), ("stats.by.web", .integer(8))])),
        Row(name: "the same nested change on both sides is fine", base: base,
            local: with([("stats.rating", .integer(5)), ("title", .string("Dune!"))]), remote: with([("stats.rating", .integer(5))]),
            keepingLocal: with([("stats.rating", .integer(5)), ("title", .string("Dune!"))]), conflicts: [],
            keepingRemote: with([("stats.rating", .integer(5)), ("title", .string("Dune!"))])),
        Row(name: "same nested key changed differently conflicts at its path", base: base,
            local: with([("stats.rating", .integer(5)), ("stats.views", .integer(12))]), remote: with([("stats.rating", .integer(3))]),
            keepingLocal: with([("stats.rating", .integer(5)), ("stats.views", .integer(12))]), conflicts: ["stats.rating"],
            keepingRemote: with([("stats.rating", .integer(3)), ("stats.views", .integer(12))])),
        Row(name: "nested key deleted here, changed there conflicts at its path", base: base,
            local: with([("stats.rating", nil)]), remote: with([("stats.rating", .integer(3)), ("stats.views", .integer(11))]),
            keepingLocal: with([("stats.rating", nil), ("stats.views", .integer(11))]), conflicts: ["stats.rating"],
            keepingRemote: with([("stats.rating", .integer(3)), ("stats.views", .integer(11))])),
        Row(name: "nested key deleted on one side, untouched on the other, is deleted", base: base,
            local: with([("stats.by", nil)]), remote: with([("stats.views", .integer(11))]),
            keepingLocal: with([("stats.by", nil), ("stats.views", .integer(11))]), conflicts: [],
            keepingRemote: with([("stats.by", nil), ("stats.views", .integer(11))])),
        Row(name: "whole map deleted here, a key of it changed there conflicts at the map", base: base,
            local: with([("stats", nil)]), remote: with([("stats.views", .integer(11))]),
            keepingLocal: with([("stats", nil)]), conflicts: ["stats"],
            keepingRemote: with([("stats.views", .integer(11))])),
        Row(name: "map against a scalar is compared whole", base: base,
            local: with([("stats.rating", .integer(5))]), remote: with([("stats", .string("n/a"))]),
            keepingLocal: with([("stats.rating", .integer(5))]), conflicts: ["stats"],
            keepingRemote: with([("stats", .string("n/a"))])),
        Row(name: "a scalar replaced by maps on both sides merges their keys", base: with([("stats", .null)]),
            local: with([("stats", .map(["a": .integer(1)]))]), remote: with([("stats", .map(["b": .integer(2)]))]),
            keepingLocal: with([("stats", .map(["a": .integer(1), "b": .integer(2)]))]), conflicts: [],
            keepingRemote: with([("stats", .map(["a": .integer(1), "b": .integer(2)]))])),
        Row(name: "maps added on both sides merge key by key", base: with([("stats", nil)]),
            local: with([("stats", .map(["a": .integer(1), "c": .integer(3)]))]), remote: with([("stats", .map(["b": .integer(2), "c": .integer(4)]))]),
            keepingLocal: with([("stats", .map(["a": .integer(1), "b": .integer(2), "c": .integer(3)]))]), conflicts: ["stats.c"],
            keepingRemote: with([("stats", .map(["a": .integer(1), "b": .integer(2), "c": .integer(4)]))])),
        Row(name: "arrays are whole values", base: base,
            local: with([("tags", .array([.string("sf"), .string("classic")]))]), remote: with([("tags", .array([.string("sf"), .string("desert")]))]),
            keepingLocal: with([("tags", .array([.string("sf"), .string("classic")]))]), conflicts: ["tags"],
            keepingRemote: with([("tags", .array([.string("sf"), .string("desert")]))])),
        Row(name: "arrays of maps are whole values too", base: with([("tags", .array([.map(["a": .integer(1)])]))]),
            local: with([("tags", .array([.map(["a": .integer(2)])]))]), remote: with([("tags", .array([.map(["a": .integer(1), "b": .integer(1)])]))]),
            keepingLocal: with([("tags", .array([.map(["a": .integer(2)])]))]), conflicts: ["tags"],
            keepingRemote: with([("tags", .array([.map(["a": .integer(1), "b": .integer(1)])]))])),
        Row(name: "tagged values inside maps are whole values", base: with([("stats.seen", ts1)]),
            local: with([("stats.seen", ts2)]), remote: with([("stats.seen", .geoPoint(latitude: 1, longitude: 2))]),
            keepingLocal: with([("stats.seen", ts2)]), conflicts: ["stats.seen"],
            keepingRemote: with([("stats.seen", .geoPoint(latitude: 1, longitude: 2))])),
        Row(name: "without a base every differing nested key conflicts, at the deepest path", base: nil,
            local: with([("stats.rating", .integer(5)), ("stats.by.ios", .integer(1))]), remote: with([("stats.views", .integer(11))]),
            keepingLocal: with([("stats.rating", .integer(5)), ("stats.by.ios", .integer(1))]),
            conflicts: ["stats.by.ios", "stats.rating", "stats.views"],
            keepingRemote: with([("stats.views", .integer(11))])),
        Row(name: "names that need quoting stay unambiguous", base: with([("stats", .map(["a.b": .integer(1), "x`y": .integer(1), "": .integer(1), "café": .integer(1)]))]),
            local: with([("stats", .map(["a.b": .integer(2), "x`y": .integer(2), "": .integer(2), "café": .integer(2)]))]),
            remote: with([("stats", .map(["a.b": .integer(3), "x`y": .integer(3), "": .integer(3), "café": .integer(3)]))]),
            keepingLocal: with([("stats", .map(["a.b": .integer(2), "x`y": .integer(2), "": .integer(2), "café": .integer(2)]))]),
            conflicts: ["stats.``", "stats.`a.b`", "stats.`café`", "stats.`x\\`y`"],
            keepingRemote: with([("stats", .map(["a.b": .integer(3), "x`y": .integer(3), "": .integer(3), "café": .integer(3)]))])),
    ]

    @Test(arguments: rows)
    func merge(_ row: Row) {
        let (merged, conflicts) = FieldMerge.mergeKeepingLocal(base: row.base, local: row.local, remote: row.remote)
        #expect(merged == row.keepingLocal)
        #expect(conflicts.map(\.description) == row.conflicts)
        let outcome = FieldMerge.merge(base: row.base, local: row.local, remote: row.remote)
        #expect(outcome == (row.conflicts.isEmpty ? .merged(row.keepingLocal) : .conflicts(conflicts)))
        let recordMerge = RecordMerge(base: row.base, local: row.local, remote: row.remote)
        #expect(recordMerge.preferring(local: true) == row.keepingLocal)
        #expect(recordMerge.preferring(local: false) == row.keepingRemote)
        // The merge is symmetric: swapping the sides swaps the preferred results.
        let swapped = RecordMerge(base: row.base, local: row.remote, remote: row.local)
        #expect(swapped.keepingLocal == row.keepingRemote)
        #expect(swapped.conflicts == conflicts)
    }

    /// `diff` names the same conflicting paths as the merge, at the same depth.
    @Test(arguments: rows.filter { $0.base != nil })
    func diffAgreesWithMerge(_ row: Row) {
        let differences = FieldDiff.compare(base: row.base, local: row.local, remote: row.remote)
        #expect(differences.filter { $0.change == .conflict }.map(\.name) == row.conflicts)
        #expect(differences.map(\.path) == differences.map(\.path).sorted(by: FieldPath.utf8Less))
        for difference in differences {
            #expect(difference.local == difference.path.value(in: row.local))
            #expect(difference.remote == difference.path.value(in: row.remote))
            #expect(difference.local != difference.base || difference.remote != difference.base)
        }
    }

    @Test func diffShowsOneSidedNestedChangesByPath() {
        let differences = FieldDiff.compare(base: Self.base, local: Self.with([("stats.rating", .integer(5))]),
                                            remote: Self.with([("stats.by.web", .integer(8))]))
        #expect(differences.map(\.name) == ["stats.by.web", "stats.rating"])
        #expect(differences.map(\.change) == [.remote, .local])
        #expect(differences.map(\.base) == [.integer(7), .integer(4)])
    }

    /// A deleted record is compared whole per top-level field, as before.
    @Test func diffOfADeletedRecordStaysTopLevel() {
        let differences = FieldDiff.compare(base: Self.base, local: nil, remote: Self.with([("stats.views", .integer(11))]))
        #expect(differences.map(\.name) == ["id", "stats", "tags", "title"])
    }
}

/// Firestore's field path notation, checked against Google's own renderer
/// (`render_field_path` in google-cloud-firestore 2.x, run on this machine:
/// each `expected` below is its output for `segments`).
@Suite struct FieldPathTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let segments: [String]
        let expected: String
        var testDescription: String { expected }
    }

    static let rows: [Row] = [
        Row(segments: ["stats", "rating"], expected: "stats.rating"),
        Row(segments: ["a.b"], expected: "`a.b`"),
        Row(segments: ["x`y"], expected: "`x\\`y`"),
        Row(segments: [""], expected: "``"),
        Row(segments: ["café"], expected: "`café`"),
        Row(segments: ["a\\b"], expected: "`a\\\\b`"),
        Row(segments: ["_ok9", "9lives"], expected: "_ok9.`9lives`"),
        Row(segments: ["a b", "\u{202E}"], expected: "`a b`.`\u{202E}`"),
        Row(segments: ["tags", "with-dash"], expected: "tags.`with-dash`"),
    ]

    @Test(arguments: rows)
    func rendersLikeFirestore(_ row: Row) {
        #expect(FieldPath(row.segments).description == row.expected)
    }

    /// Different paths never render alike, even when a name holds the separator.
    @Test func distinctPathsRenderDistinctly() {
        let paths = [["a", "b"], ["a.b"], ["a", "b.c"], ["a.b", "c"], ["a", "b", "c"], ["a`", "b"], ["a", "`b"], [""], ["", ""]].map { FieldPath($0) }
        #expect(Set(paths.map(\.description)).count == paths.count)
    }

    @Test func setCreatesAndRemovesNestedValues() {
        var fields: Fields = ["a": .integer(1)]
        FieldPath(["m", "n", "o"]).set(.integer(2), in: &fields)
        #expect(fields == ["a": .integer(1), "m": .map(["n": .map(["o": .integer(2)])])])
        #expect(FieldPath(["m", "n", "o"]).value(in: fields) == .integer(2))
        #expect(FieldPath(["a", "x"]).value(in: fields) == nil)
        FieldPath(["m", "n", "o"]).set(nil, in: &fields)
        #expect(fields == ["a": .integer(1), "m": .map(["n": .map([:])])])
    }
}
