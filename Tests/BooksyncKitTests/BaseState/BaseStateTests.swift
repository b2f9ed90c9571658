import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The base state a pull or push updates: saved often enough to keep progress,
/// seldom enough that saving stays linear, and compacted only when that can
/// shrink the pack.
@Suite struct BaseStateTests {
    /// A record of about 1 kB whose content depends on `version`.
    static func record(_ number: Int, version: Int, rules: RecordRules) throws -> CanonicalRecord {
        let id = "book-\(number)"
        let text = #"{"id": "\#(id)", "title": "v\#(version) \#(String(repeating: "x", count: 1_000))", "author": "A", "genre": "g"}"#
        return try rules.load(Array(text.utf8), id: try RecordID(id)).get()
    }

    /// Enough records (well over `compactionSlack` bytes of pack lines) to make a
    /// pack "grown" twice over its first save.
    static let many = 3 * BaseCopyStore.compactionSlack / 1_000

    /// A first pull or a push of new records adds copies only: nothing in the
    /// pack is stale, so `finish` must not rewrite it (at 100,000 records that
    /// rewrite was a whole extra pass over the pack). Replacing or forgetting a
    /// recorded copy makes the grown pack compactable again.
    @Test(arguments: [
        ("only new records", false, false),
        ("a recorded copy replaced", true, false),
        ("a recorded copy forgotten", false, true),
    ])
    func finishCompactsOnlyWhenCopiesWentStale(_ label: String, replace: Bool, forget: Bool) throws {
        let scratch = try ScratchDirectory()
        let collection = try BaseCopyStoreTests.store(in: scratch)
        let rules = collection.rules
        var base = BaseState(copies: collection.baseCopies, manifest: Manifest(), configFingerprint: "sha256:c")
        base.record(try Self.record(0, version: 1, rules: rules), revision: "r0")
        try base.save()  // the first batch: the pack's header says "compacted at this size"
        for number in 1..<Self.many { base.record(try Self.record(number, version: 1, rules: rules), revision: "r") }
        try base.save()
        if replace { base.record(try Self.record(0, version: 2, rules: rules), revision: "r1") }
        if forget { base.forget(try RecordID("book-0")) }
        try base.finish()

        let path = collection.baseCopies.packPath
        let size = Int(try FileSystem.stat(path).size)
        let compacted = try #require(BaseCopyStore.compactedSize(path))
        if replace || forget {
            #expect(compacted == size, "\(label): the grown pack is compacted")
        } else {
            #expect(compacted < size / 2, "\(label): the pack is left as appended")
        }
        // Either way every current copy is still there.
        for number in 1..<Self.many {
            let record = try Self.record(number, version: 1, rules: rules)
            #expect(collection.baseCopies.fields(record.id, hash: record.hash) == record.fields)
        }
    }

    /// Copies recorded between saves are appended once they pass
    /// `pendingCopiesLimit`, before a save is due, and the manifest is not
    /// written then (a copy it does not name yet is harmless): a first pull
    /// of 100,000 documents held 40 MB of pack lines between rare saves.
    @Test func copiesPastTheLimitAreAppendedBeforeTheSave() throws {
        let scratch = try ScratchDirectory()
        let collection = try BaseCopyStoreTests.store(in: scratch)
        let rules = collection.rules
        // Built first, so that recording them takes far less than the second before a save is due.
        let big = String(repeating: "y", count: 20_000)
        let recorded = try (1...(BaseState.pendingCopiesLimit / 20_000 + 2)).map { number in
            let text = #"{"id": "big-\#(number)", "title": "\#(big)", "author": "A", "genre": "g"}"#
            return try rules.load(Array(text.utf8), id: try RecordID("big-\(number)")).get()
        }
        let half = recorded.count / 2
        var base = BaseState(copies: collection.baseCopies, manifest: Manifest(), configFingerprint: "sha256:c")
        base.record(try Self.record(0, version: 1, rules: rules), revision: "r0")
        try base.save()  // a save just happened: the next is not due for a second
        let manifestBefore = try scratch.read(".booksync/manifest.json")
        let packBefore = try FileSystem.stat(collection.baseCopies.packPath).size
        for record in recorded[..<half] { base.record(record, revision: "r") }
        try base.saveIfDue()
        #expect(try FileSystem.stat(collection.baseCopies.packPath).size == packBefore, "under the limit: held")
        for record in recorded[half...] { base.record(record, revision: "r") }
        try base.saveIfDue()
        #expect(try FileSystem.stat(collection.baseCopies.packPath).size > packBefore + Int64(BaseState.pendingCopiesLimit), "past it: appended")
        #expect(try scratch.read(".booksync/manifest.json") == manifestBefore, "the manifest waits for its save")
        for record in recorded {
            #expect(collection.baseCopies.fields(record.id, hash: record.hash) == record.fields)
        }
        try base.finish()
        #expect(try Manifest.decode(Array(scratch.read(".booksync/manifest.json").utf8)).entries.count == recorded.count + 1)
    }

    /// `saveIfDue` waits at least a second, and at least ten times as long as the
    /// last save took: a manifest that takes 300 ms to write is rewritten every
    /// 3 s, not every second, so the total cost of saving stays linear.
    @Test(arguments: [
        (waited: 500, lastSave: 10, due: false),
        (waited: 1_001, lastSave: 10, due: true),
        (waited: 1_500, lastSave: 300, due: false),
        (waited: 3_001, lastSave: 300, due: true),
        (waited: 20_000, lastSave: 2_500, due: false),
        (waited: 25_001, lastSave: 2_500, due: true),
    ])
    func saveIsDueAfterASecondAndTenTimesTheLastSave(waited: Int, lastSave: Int, due: Bool) {
        #expect(BaseState.saveIsDue(waited: .milliseconds(waited), lastSaveTook: .milliseconds(lastSave)) == due)
    }
}
