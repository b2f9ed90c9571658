import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@testable import BooksyncKit

/// The stored remote side of conflicts and when it counts as settled: only
/// once the saved base records it, so a resolve killed at any moment neither
/// loses a resolution nor leaves one that looks unresolved.
@Suite struct ConflictStoreTests {
    static func collection(in scratch: ScratchDirectory) throws -> CollectionDirectory {
        try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
    }

    static func record(_ title: String, rules: RecordRules) throws -> Record {
        try rules.load(Array(#"{"id": "dune", "title": "\#(title)", "author": "Herbert", "genre": "sf"}"#.utf8), id: RecordID("dune")).get()
    }

    /// The base entry each stored side is compared with, and whether that side is then settled.
    static let cases: [(stored: String?, entry: BaseEntry?, settled: Bool)] = [
        ("2026-01-02T00:00:00Z", BaseEntry(hash: "sha256:00", revision: "2026-01-01T00:00:00Z"), false),  // the base pull saw: unresolved
        ("2026-01-02T00:00:00Z", BaseEntry(hash: "sha256:00", revision: "2026-01-02T00:00:00Z"), true),   // resolve saved it, then was killed
        ("2026-01-02T00:00:00Z", nil, false),  // deleted locally, changed remotely: unresolved
        (nil, BaseEntry(hash: "sha256:00", revision: "2026-01-01T00:00:00Z"), false),  // deleted remotely: unresolved
        (nil, nil, true),  // the remote delete was settled and saved
    ]

    @Test(arguments: cases)
    func aStoredSideIsSettledExactlyWhenTheBaseRecordsIt(_ row: (stored: String?, entry: BaseEntry?, settled: Bool)) throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(in: scratch)
        let store = ConflictStore(paths: collection.paths)
        let id = try RecordID("dune")
        let remote = try Self.record("Dune Messiah", rules: collection.rules)
        try store.save(id, record: row.stored == nil ? nil : remote, revision: row.stored)
        var manifest = Manifest()
        manifest.entries[id] = row.entry
        #expect(store.load(id, rules: collection.rules) != nil, "without the base, the stored side is what pull saw")
        let loaded = store.load(id, rules: collection.rules, base: manifest)
        #expect((loaded == nil) == row.settled)
        // A settled side is cleared; an unresolved one stays for resolve.
        #expect((store.load(id, rules: collection.rules) == nil) == row.settled)
        if !row.settled { #expect(loaded?.record == (row.stored == nil ? nil : remote)) }
    }

    /// Resolve clears a stored conflict only with the save that records its
    /// new base: until then a failure or a kill leaves it stored.
    @Test func aSettledConflictIsClearedOnlyByTheSaveThatRecordsIt() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(in: scratch)
        let store = ConflictStore(paths: collection.paths)
        let id = try RecordID("dune")
        let remote = try Self.record("Dune Messiah", rules: collection.rules)
        try store.save(id, record: remote, revision: "2026-01-02T00:00:00Z")
        var base = BaseState(copies: collection.baseCopies, manifest: Manifest(), configFingerprint: collection.configFingerprint)
        base.record(remote, revision: "2026-01-02T00:00:00Z")
        #expect(store.load(id, rules: collection.rules) != nil, "not cleared before the manifest is saved")
        try base.save()
        #expect(store.load(id, rules: collection.rules) == nil, "cleared once the manifest records it")
        #expect(try collection.loadManifest().entries[id]?.revision == "2026-01-02T00:00:00Z")
    }
}
