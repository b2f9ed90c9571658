import Testing
import BooksyncTestSupport
import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// A listing's compact revisions behave as the dictionary they replaced, and
/// every revision reads back exactly as it was listed.
@Suite struct RemoteRevisionsTests {
    static let revisions = ["2024-01-01T00:00:00.123456Z", "2024-01-01T00:00:00Z", "", "(no updateTime)", "r1",
                            "2024-01-01T00:00:00.1234567890123456789012Z"]

    /// Random sets, removals and re-additions against a `Dictionary` model;
    /// keyed like a base that holds half the ids (one of them removed, its
    /// slot dead), the others kept apart.
    @Test(arguments: [1, 2, 3], [false, true])
    func behavesAsADictionary(seed: UInt64, keyed: Bool) throws {
        var random = SplitMix64(seed: seed)
        var model: [RecordID: String] = [:]
        var base = ManifestEntries()
        for n in 0..<150 { base[try RecordID("d\(n * 2)")] = BaseEntry(hash: "sha256:00", revision: "r") }
        base[try RecordID("d4")] = nil
        var table = keyed ? RemoteRevisions(keyedLike: base) : RemoteRevisions()
        for _ in 0..<3000 {
            let id = try RecordID("d\(random.next() % 300)")
            if random.next() % 4 == 0 {
                model[id] = nil
                table[id] = nil
            } else {
                let revision = Self.revisions[Int(random.next() % UInt64(Self.revisions.count))]
                model[id] = revision
                table[id] = revision
            }
            #expect(table[id] == model[id] && table.contains(id) == (model[id] != nil))
        }
        #expect(table.count == model.count && table.isEmpty == model.isEmpty)
        #expect(Set(table.keys) == Set(model.keys))
        #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }) == model)
        #expect(table == RemoteRevisions(model))
        let kept = table.filter { $0.value.hasPrefix("2024") }
        #expect(kept == RemoteRevisions(model.filter { $0.value.hasPrefix("2024") }))
        var merged = kept
        let other: RemoteRevisions = [try RecordID("d1"): "2025-01-01T00:00:00Z", try RecordID("new"): "x"]
        merged.merge(other) { _, new in new }
        #expect(merged == RemoteRevisions(model.filter { $0.value.hasPrefix("2024") }.merging([try RecordID("d1"): "2025-01-01T00:00:00Z", try RecordID("new"): "x"]) { _, new in new }))
        var changed = table
        changed[try RecordID("d0")] = "changed"
        #expect(changed != table && table == RemoteRevisions(model), "a copy's change leaves the original")
    }
}
