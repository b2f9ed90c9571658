import Testing
@testable import BooksyncCore

/// One row per line of <doc:ThreeWaySync>, plus the merge cases: the rules at the
/// core level, without I/O.
@Suite struct SyncRulesTests {
    static let base = BaseEntry(hash: "sha256:base", revision: "r1")
    static let baseFields: Fields = ["id": .string("x"), "title": .string("T"), "author": .string("A"), "genre": .string("g"), "year": .integer(1),
                                    "stats": .map(["rating": .integer(4), "views": .integer(1)])]
    static let problem = RecordDiagnostic(position: SourcePosition(line: 2, column: 3), message: "expected ',' or '}'")

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let base: BaseEntry?
        let local: LocalVersion
        let remote: RemoteVersion
        /// Local and remote fields for the merge (only used when both modified).
        let localFields: Fields?
        let remoteFields: Fields?
        let expected: SyncState
        /// Whether the local record matches the collection's scope (config `"scope"`).
        var localInScope = true
        var testDescription: String { name }
    }

    static func with(_ changes: Fields) -> Fields { baseFields.merging(changes) { _, new in new } }
    static func without(_ key: String) -> Fields { baseFields.filter { $0.key != key } }

    static let rows: [Row] = [
        // same | same → clean
        Row(name: "clean", base: base, local: .present(hash: "sha256:base"), remote: .present(revision: "r1", hash: nil), localFields: nil, remoteFields: nil, expected: .clean),
        Row(name: "clean offline", base: base, local: .present(hash: "sha256:base"), remote: .notChecked, localFields: nil, remoteFields: nil, expected: .clean),
        // added/modified/deleted | same → local change
        Row(name: "local added", base: nil, local: .present(hash: "sha256:new"), remote: .absent, localFields: nil, remoteFields: nil, expected: .localChange(.added)),
        Row(name: "local added offline", base: nil, local: .present(hash: "sha256:new"), remote: .notChecked, localFields: nil, remoteFields: nil, expected: .localChange(.added)),
        Row(name: "local modified", base: base, local: .present(hash: "sha256:l"), remote: .present(revision: "r1", hash: nil), localFields: nil, remoteFields: nil, expected: .localChange(.modified)),
        Row(name: "local deleted", base: base, local: .absent, remote: .present(revision: "r1", hash: nil), localFields: nil, remoteFields: nil, expected: .localChange(.deleted)),
        // same | added/modified/deleted → remote change
        Row(name: "remote added", base: nil, local: .absent, remote: .present(revision: "r9", hash: nil), localFields: nil, remoteFields: nil, expected: .remoteChange(.added)),
        Row(name: "remote modified", base: base, local: .present(hash: "sha256:base"), remote: .present(revision: "r2", hash: nil), localFields: nil, remoteFields: nil, expected: .remoteChange(.modified)),
        Row(name: "remote deleted", base: base, local: .present(hash: "sha256:base"), remote: .absent, localFields: nil, remoteFields: nil, expected: .remoteChange(.deleted)),
        // changed | changed, same content → converged
        Row(name: "both modified alike", base: base, local: .present(hash: "sha256:same"), remote: .present(revision: "r2", hash: "sha256:same"), localFields: nil, remoteFields: nil, expected: .converged),
        Row(name: "both added alike", base: nil, local: .present(hash: "sha256:same"), remote: .present(revision: "r2", hash: "sha256:same"), localFields: nil, remoteFields: nil, expected: .converged),
        Row(name: "both deleted", base: base, local: .absent, remote: .absent, localFields: nil, remoteFields: nil, expected: .converged),
        // modified | modified, different fields → mergeable
        Row(name: "one-sided fields merge", base: base, local: .present(hash: "sha256:l"), remote: .present(revision: "r2", hash: "sha256:r"),
            localFields: with(["title": .string("Local")]), remoteFields: with(["year": .integer(2)]),
            expected: .mergeable(merged: with(["title": .string("Local"), "year": .integer(2)]))),
        Row(name: "both set the same field to the same value, plus one-sided", base: base, local: .present(hash: "sha256:l"), remote: .present(revision: "r2", hash: "sha256:r"),
            localFields: with(["title": .string("Same"), "year": .integer(5)]), remoteFields: with(["title": .string("Same")]),
            expected: .mergeable(merged: with(["title": .string("Same"), "year": .integer(5)]))),
        Row(name: "field removed on one side, added on the other", base: base, local: .present(hash: "sha256:l"), remote: .present(revision: "r2", hash: "sha256:r"),
            localFields: without("year"), remoteFields: with(["isbn": .string("1")]),
            expected: .mergeable(merged: without("year").merging(["isbn": .string("1")]) { a, _ in a })),
        // modified | modified, same field differs → conflict
        Row(name: "same field differs", base: base, local: .present(hash: "sha256:l"), remote: .present(revision: "r2", hash: "sha256:r"),
            localFields: with(["title": .string("L"), "genre": .string("x")]), remoteFields: with(["title": .string("R"), "genre": .string("x"), "year": .integer(3)]),
            expected: .conflict(.bothModified(fields: [FieldPath(field: "title")]))),
        Row(name: "removed on one side, changed on the other", base: base, local: .present(hash: "sha256:l"), remote: .present(revision: "r2", hash: "sha256:r"),
            localFields: without("year"), remoteFields: with(["year": .integer(9)]),
            expected: .conflict(.bothModified(fields: [FieldPath(field: "year")]))),
        Row(name: "arrays compare as whole values", base: base, local: .present(hash: "sha256:l"), remote: .present(revision: "r2", hash: "sha256:r"),
            localFields: with(["tags": .array([.string("a")])]), remoteFields: with(["tags": .array([.string("b")])]),
            expected: .conflict(.bothModified(fields: [FieldPath(field: "tags")]))),
        Row(name: "nested keys changed on different sides merge", base: base, local: .present(hash: "sha256:l"), remote: .present(revision: "r2", hash: "sha256:r"),
            localFields: with(["stats": .map(["rating": .integer(5), "views": .integer(1)])]), remoteFields: with(["stats": .map(["rating": .integer(4), "views": .integer(2)])]),
            expected: .mergeable(merged: with(["stats": .map(["rating": .integer(5), "views": .integer(2)])]))),
        Row(name: "same nested key differs", base: base, local: .present(hash: "sha256:l"), remote: .present(revision: "r2", hash: "sha256:r"),
            localFields: with(["stats": .map(["rating": .integer(5), "views": .integer(1)])]), remoteFields: with(["stats": .map(["rating": .integer(3), "views": .integer(1)])]),
            expected: .conflict(.bothModified(fields: [FieldPath(["stats", "rating"])]))),
        // added | added, different content → conflict
        Row(name: "both added differently", base: nil, local: .present(hash: "sha256:l"), remote: .present(revision: "r2", hash: "sha256:r"), localFields: nil, remoteFields: nil, expected: .conflict(.bothAdded)),
        // modified | deleted, and the reverse → conflict
        Row(name: "modified here, deleted there", base: base, local: .present(hash: "sha256:l"), remote: .absent, localFields: nil, remoteFields: nil, expected: .conflict(.modifiedLocallyDeletedRemotely)),
        Row(name: "deleted here, modified there", base: base, local: .absent, remote: .present(revision: "r2", hash: "sha256:r"), localFields: nil, remoteFields: nil, expected: .conflict(.deletedLocallyModifiedRemotely)),
        Row(name: "both changed, remote body unknown", base: base, local: .present(hash: "sha256:l"), remote: .present(revision: "r2", hash: nil), localFields: nil, remoteFields: nil, expected: .conflict(.remoteContentUnknown)),
        // invalid file | any → invalid
        Row(name: "invalid file, remote same", base: base, local: .invalid([problem]), remote: .present(revision: "r1", hash: nil), localFields: nil, remoteFields: nil, expected: .invalidLocal([problem])),
        Row(name: "invalid file, remote changed", base: base, local: .invalid([problem]), remote: .present(revision: "r2", hash: "sha256:r"), localFields: nil, remoteFields: nil, expected: .invalidLocal([problem])),
        Row(name: "invalid new file", base: nil, local: .invalid([problem]), remote: .absent, localFields: nil, remoteFields: nil, expected: .invalidLocal([problem])),
        Row(name: "invalid remote document", base: base, local: .present(hash: "sha256:base"), remote: .invalid(revision: "r2", [problem]), localFields: nil, remoteFields: nil, expected: .invalidRemote([problem])),
        // scopes (config "scope"): nothing is deleted on either side
        Row(name: "left the scope, file unchanged", base: base, local: .present(hash: "sha256:base"), remote: .outsideScope, localFields: nil, remoteFields: nil, expected: .leftScope),
        Row(name: "left the scope, file modified", base: base, local: .present(hash: "sha256:l"), remote: .outsideScope, localFields: nil, remoteFields: nil, expected: .leftScope),
        Row(name: "left the scope, file deleted", base: base, local: .absent, remote: .outsideScope, localFields: nil, remoteFields: nil, expected: .leftScope),
        Row(name: "document outside the scope, no file", base: nil, local: .absent, remote: .outsideScope, localFields: nil, remoteFields: nil, expected: .clean),
        Row(name: "file of a document outside the scope", base: nil, local: .present(hash: "sha256:l"), remote: .outsideScope, localFields: nil, remoteFields: nil, expected: .outsideScope),
        Row(name: "new record outside the scope", base: nil, local: .present(hash: "sha256:new"), remote: .absent, localFields: nil, remoteFields: nil, expected: .outsideScope, localInScope: false),
        Row(name: "new record outside the scope offline", base: nil, local: .present(hash: "sha256:new"), remote: .notChecked, localFields: nil, remoteFields: nil, expected: .outsideScope, localInScope: false),
        Row(name: "synced record edited out of the scope is pushed", base: base, local: .present(hash: "sha256:l"), remote: .present(revision: "r1", hash: nil), localFields: nil, remoteFields: nil, expected: .localChange(.modified), localInScope: false),
        Row(name: "new on both sides, outside the scope here", base: nil, local: .present(hash: "sha256:l"), remote: .present(revision: "r2", hash: "sha256:r"), localFields: nil, remoteFields: nil, expected: .conflict(.bothAdded), localInScope: false),
    ]

    @Test(arguments: rows)
    func classify(_ row: Row) {
        let state = SyncRules.classify(base: row.base, local: row.local, remote: row.remote, localInScope: { row.localInScope }) {
            guard let local = row.localFields, let remote = row.remoteFields else { return nil }
            return FieldMerge.merge(base: Self.baseFields, local: local, remote: remote)
        }
        #expect(state == row.expected)
    }

    @Test(arguments: [(3, 4, false), (4, 4, true), (4, 7, true), (4, 8, false), (50, 100, false), (51, 100, true), (1, 2, false), (2, 2, false)])
    func massDeleteGuard(deletes: Int, base: Int, refused: Bool) {
        #expect(DeleteGuard().refuses(deletes: deletes, baseCount: base) == refused)
    }
}
