import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The stored remote side of conflicts and when it counts as settled: only
/// once the saved base records it, so a resolve killed at any moment neither
/// loses a resolution nor leaves one that looks unresolved.
@Suite struct ConflictStoreTests {
    static func collection(in scratch: ScratchDirectory) throws -> CollectionDirectory {
        try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
    }

    static func record(_ title: String, rules: RecordRules) throws -> CanonicalRecord {
        try rules.load(Array(#"{"id": "dune", "title": "\#(title)", "author": "Herbert", "genre": "sf"}"#.utf8), id: RecordID("dune")).get()
    }

    /// Writes a stored side as a booksync before the stored base wrote it: one line.
    static func saveInOldFormat(_ store: ConflictStore, _ id: RecordID, record: CanonicalRecord?, revision: String?) throws {
        try store.save(id, record: record, revision: revision, baseRevision: nil)
        try FileSystem.writeAtomically(Array((revision ?? ConflictStore.deletedMarker).utf8),
                                       to: store.paths.conflicts + "/revisions/" + store.paths.stateFileName(id))
    }

    /// A conflict stored without its base (by an older booksync), the base entry
    /// it is then compared with, and whether that side is settled: the guess.
    static let oldFormatCases: [(stored: String?, entry: BaseEntry?, settled: Bool)] = [
        ("2026-01-02T00:00:00Z", BaseEntry(hash: "sha256:00", revision: "2026-01-01T00:00:00Z"), false),  // the base pull saw: unresolved
        ("2026-01-02T00:00:00Z", BaseEntry(hash: "sha256:00", revision: "2026-01-02T00:00:00Z"), true),   // resolve saved it, then was killed
        ("2026-01-02T00:00:00Z", nil, false),  // deleted locally, changed remotely: unresolved
        (nil, BaseEntry(hash: "sha256:00", revision: "2026-01-01T00:00:00Z"), false),  // deleted remotely: unresolved
        (nil, nil, true),  // the remote delete was settled and saved
    ]

    @Test(arguments: oldFormatCases)
    func aStoredSideWithoutItsBaseIsSettledWhenTheBaseRecordsIt(_ row: (stored: String?, entry: BaseEntry?, settled: Bool)) throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(in: scratch)
        let store = ConflictStore(paths: collection.paths)
        let id = try RecordID("dune")
        let remote = try Self.record("Dune Messiah", rules: collection.rules)
        try Self.saveInOldFormat(store, id, record: row.stored == nil ? nil : remote, revision: row.stored)
        try Self.expectLoad(store, id, remote: row.stored == nil ? nil : remote, revision: row.stored, entry: row.entry, settled: row.settled,
                            rules: collection.rules)
    }

    /// Loads the stored side of `id` against a manifest holding `entry`, and
    /// checks that it is settled (and then cleared) or live as expected.
    static func expectLoad(_ store: ConflictStore, _ id: RecordID, remote: CanonicalRecord?, revision: String?, entry: BaseEntry?, settled: Bool,
                           rules: RecordRules, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var manifest = Manifest()
        manifest.entries[id] = entry
        #expect(store.load(id, rules: rules) == ConflictStore.RemoteSide(record: remote, revision: revision),
                "without the base, the stored side is what pull saw", sourceLocation: sourceLocation)
        let loaded = store.load(id, rules: rules, base: manifest)
        #expect((loaded == nil) == settled, sourceLocation: sourceLocation)
        // A settled side is cleared; an unresolved one stays for resolve.
        #expect((store.load(id, rules: rules) == nil) == settled, sourceLocation: sourceLocation)
        if !settled { #expect(loaded == ConflictStore.RemoteSide(record: remote, revision: revision), sourceLocation: sourceLocation) }
    }

    static let r0 = "2026-01-00T00:00:00Z", r1 = "2026-01-01T00:00:00Z", r2 = "2026-01-02T00:00:00Z", r3 = "2026-01-03T00:00:00Z"

    /// The base a conflict was found against (nil: no entry), the remote side
    /// (nil: deleted), the base entry's revision now, and whether the stored
    /// side is then settled.
    static let cases: [(base: String?, remote: String?, now: String?, settled: Bool)] = [
        (r1, r2, r1, false),  // the base pull saw: unresolved
        (r1, r2, r2, true),   // resolve or pull recorded the remote side, then was killed
        (r1, r2, nil, true),  // deleted locally, changed remotely: resolve --ours forgot it
        (r1, r2, r3, true),   // the base moved on elsewhere (a merged manifest, a later pull)
        (r1, r2, r0, true),
        (nil, r2, nil, false),  // added on both sides: unresolved
        (nil, r2, r2, true),
        (nil, r2, r3, true),
        (r1, nil, r1, false),  // deleted remotely: unresolved
        (r1, nil, nil, true),  // the remote delete was settled and saved
        (r1, nil, r3, true),
    ]

    /// A stored side is live exactly while the base is the one it was found
    /// against. Guessing from the remote side alone kept a conflict whose
    /// base had moved to a third revision (resolve would move the base back)
    /// and one whose local deletion resolve had already kept.
    @Test(arguments: cases)
    func aStoredSideIsLiveExactlyWhileTheBaseIsTheOneItWasFoundAgainst(_ row: (base: String?, remote: String?, now: String?, settled: Bool)) throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(in: scratch)
        let store = ConflictStore(paths: collection.paths)
        let id = try RecordID("dune")
        let remote = try Self.record("Dune Messiah", rules: collection.rules)
        try store.save(id, record: row.remote == nil ? nil : remote, revision: row.remote, baseRevision: row.base)
        try Self.expectLoad(store, id, remote: row.remote == nil ? nil : remote, revision: row.remote,
                            entry: row.now.map { BaseEntry(hash: "sha256:00", revision: $0) }, settled: row.settled, rules: collection.rules)
    }

    /// Resolve clears a stored conflict only with the save that records its
    /// new base: until then a failure or a kill leaves it stored.
    @Test func aSettledConflictIsClearedOnlyByTheSaveThatRecordsIt() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(in: scratch)
        let store = ConflictStore(paths: collection.paths)
        let id = try RecordID("dune")
        let remote = try Self.record("Dune Messiah", rules: collection.rules)
        try store.save(id, record: remote, revision: "2026-01-02T00:00:00Z", baseRevision: nil)
        var base = BaseState(copies: collection.baseCopies, manifest: Manifest(), configFingerprint: collection.configFingerprint)
        base.record(remote, revision: "2026-01-02T00:00:00Z")
        #expect(store.load(id, rules: collection.rules) != nil, "not cleared before the manifest is saved")
        try base.save()
        #expect(store.load(id, rules: collection.rules) == nil, "cleared once the manifest records it")
        #expect(try collection.manifestFile.load().entries[id]?.revision == "2026-01-02T00:00:00Z")
    }

    /// Pull stores the base it found a conflict against; a later save that
    /// moved the base elsewhere, killed before clearing the conflict, leaves
    /// it stale: resolve finds nothing to settle (and clears it) instead of
    /// moving the base back to the remote side pull saw then.
    @Test func pullStoresTheBaseAndAConflictWhoseBaseMovedOnIsStale() async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await PullPipelineTests.synced(records: 2, in: scratch)
        let id = try RecordID("b0000")
        documents[id] = try PullPipelineTests.document(collection, "b0000", #"{"id": "b0000", "title": "Theirs", "author": "A", "genre": "g"}"#, revision: "r2")
        try scratch.write("b0000.json", #"{"id": "b0000", "title": "Ours", "author": "A", "genre": "g"}"#)
        let report = try await collection.pull(remote: ScriptedRemote(documents: Array(documents.values)))
        #expect(report.events.map(\.id) == [id])
        let store = ConflictStore(paths: collection.paths)
        let stored = try FileSystem.readFile(collection.paths.conflicts + "/revisions/" + collection.paths.stateFileName(id))
        #expect(ConflictStore.decode(stored) == ConflictStore.Revisions(remote: "r2", base: .revision("r1")))
        #expect(store.load(id, rules: collection.rules, base: try collection.manifestFile.load())?.revision == "r2", "live while the base is r1")

        var moved = try collection.manifestFile.load()
        moved.entries[id] = BaseEntry(hash: try #require(moved.entries[id]).hash, revision: "r3")
        try ManifestFile.write(moved, to: collection.paths.manifest)
        // The advice after a push asks against the base: a conflict it moved past is none.
        #expect(collection.unresolvedConflict(id) != nil, "without the base, the stored side looks live")
        #expect(collection.unresolvedConflicts()(id) == nil, "against the base it is stale")
        #expect(try collection.resolve([id], choice: .theirs).map(\.1) == [.noConflict])
        #expect(store.load(id, rules: collection.rules) == nil, "the stale conflict is cleared")
        #expect(try collection.manifestFile.load().entries[id]?.revision == "r3", "the base is not moved back")
        #expect(try scratch.read("b0000.json").contains("Ours"))
    }

    /// Every prefix of `save`'s writes (a kill after each) reads as the
    /// conflict stored before or the one being stored, never as none:
    /// removing the content of a remote deletion before writing its marker
    /// lost the conflict to a kill in between. Replacing one document with
    /// another may pair the new content with the old revision, which only
    /// makes push's precondition fail (see `ConflictStore.writes`), never
    /// the old content with the new revision.
    @Test(arguments: ["none", "document", "deletion"], ["document", "deletion"])
    func aKillBetweenTheWritesOfASaveLeavesTheOldOrTheNewConflict(before: String, after: String) throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(in: scratch)
        let store = ConflictStore(paths: collection.paths)
        let id = try RecordID("dune")
        let old = try Self.record("Dune Messiah", rules: collection.rules)
        let new = try Self.record("Children of Dune", rules: collection.rules)
        let r1 = "2026-01-01T00:00:00Z", r2 = "2026-01-02T00:00:00Z", r3 = "2026-01-03T00:00:00Z"
        var previous: ConflictStore.RemoteSide?
        switch before {
        case "document":
            try store.save(id, record: old, revision: r2, baseRevision: r1)
            previous = ConflictStore.RemoteSide(record: old, revision: r2)
        case "deletion":
            try store.save(id, record: nil, revision: nil, baseRevision: r1)
            previous = ConflictStore.RemoteSide(record: nil, revision: nil)
        default:
            try FileSystem.createDirectory(collection.paths.conflicts)
            try FileSystem.createDirectory(collection.paths.conflicts + "/revisions")
        }
        let next = after == "document" ? ConflictStore.RemoteSide(record: new, revision: r3) : ConflictStore.RemoteSide(record: nil, revision: nil)
        let writes = store.writes(id, record: next.record, revision: next.revision, baseRevision: r1)
        var manifest = Manifest()
        manifest.entries[id] = BaseEntry(hash: "sha256:00", revision: r1)
        for (done, write) in writes.enumerated() {
            try write.perform()
            let loaded = store.load(id, rules: collection.rules, base: manifest)
            let newerContent = previous?.revision.map { ConflictStore.RemoteSide(record: next.record, revision: $0) }
            #expect(loaded == previous || loaded == next || (next.record != nil && loaded == newerContent),
                    "\(before) then \(after), killed after write \(done + 1) of \(writes.count): \(String(describing: loaded))")
        }
        #expect(store.load(id, rules: collection.rules, base: manifest) == next)
    }
}
