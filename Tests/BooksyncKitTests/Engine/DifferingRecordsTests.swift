import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Status, diff and pull classify only the records that can differ
/// (`SyncGather.eachDiffering`), one at a time: they must find exactly the
/// records, in the classes and order, that classifying every record known to
/// any side finds.
@Suite struct DifferingRecordsTests {
    static func id(_ s: String) -> RecordID { try! RecordID(s) }

    /// The sample collection (one of each local class) against random remote
    /// listings: each base record listed at its base revision, at another, or
    /// not at all, and documents only the remote has.
    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func theDifferingRecordsAreTheOnesNotClean(seed: UInt64) throws {
        let scratch = try ScratchDirectory()
        let collection = try CollectionDirectory.open(searchingFrom: try scratch.copyFixture("sample"))
        let manifest = try collection.manifestFile.load()
        let scan = try LocalScanner(for: collection, base: manifest).scan()
        let gather = SyncGather(collection: collection, manifest: manifest, scan: scan, scope: .everything)
        var random = SplitMix64(seed: seed)
        var listing = RemoteListing()
        for (id, entry) in manifest.entries {
            switch random.next() % 3 {
            case 0: listing.revisions[id] = entry.revision
            case 1: listing.revisions[id] = entry.revision + "1"
            default: break
            }
        }
        for n in 0..<Int(random.next() % 3) { listing.revisions[Self.id("remote-only-\(n)")] = "2026-01-01T00:00:00Z" }
        // A remote-only id that sorts between the others.
        listing.revisions[Self.id("hz")] = "2026-01-01T00:00:00Z"
        for snapshot in [RemoteSnapshot(listing: listing, bodies: [:]), nil] {
            let everyID = Set(scan.files.keys).union(manifest.entries.keys).union(snapshot.map { Array($0.listing.revisions.keys) } ?? [])
            let expected = gather.classify(remote: snapshot, only: Array(everyID)).records.filter { $0.state != .clean }
            var reads: [RecordID: LocalRead] = [:]
            var walked: [ClassifiedRecord] = []
            gather.eachDiffering(remote: snapshot, localReads: &reads) { walked.append($0) }
            #expect(walked.map(\.id) == expected.map(\.id), "seed \(seed), \(snapshot == nil ? "offline" : "listed")")
            #expect(walked.map(\.state) == expected.map(\.state))
            #expect(!expected.isEmpty, "the sample has local changes")
            #expect(gather.classifyDiffering(remote: snapshot).records.map(\.id) == expected.map(\.id))
        }
        withExtendedLifetime(scratch) {}
    }
}
