import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// A scan without hashes (push's) classifies every record as the full scan
/// does, and push walks and chunks exactly the records that differ, in id order.
@Suite struct LeanScanTests {
    static func id(_ s: String) -> RecordID { try! RecordID(s) }

    /// The sample collection (one of each local class) plus added records
    /// that sort before, between and after the others.
    static func collection() throws -> (ScratchDirectory, CollectionDirectory) {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("sample")
        for name in ["aaa", "g", "zzz"] {
            try scratch.write("sample/\(name).json", #"{"id": "\#(name)", "title": "T", "author": "A", "genre": "g"}"#)
        }
        return (scratch, try CollectionDirectory.open(searchingFrom: root))
    }

    @Test func aScanWithoutHashesClassifiesAsTheFullScan() async throws {
        let (scratch, collection) = try Self.collection()
        defer { withExtendedLifetime(scratch) {} }
        let manifest = try collection.manifestFile.load()
        let full = try LocalScanner(for: collection, base: manifest).scan()
        let lean = try LocalScanner(for: collection, base: manifest, choices: ScanChoices(keepHashes: false)).scan()
        #expect(Set(lean.files.keys) == Set(full.files.keys))
        #expect(lean.files.count == full.files.count && Array(lean.files.keys).count == full.files.count)
        #expect(lean.files[Self.id("hyperion")] == .valid(hash: LocalFiles.hashNotKept))
        #expect(lean.files[Self.id("foundation")] == .valid(hash: LocalFiles.hashNotKept))
        #expect(lean.files[Self.id("solaris")] == nil && lean.files[Self.id("nobody")] == nil)
        let fullGather = SyncGather(collection: collection, manifest: manifest, scan: full, scope: .everything)
        let leanGather = SyncGather(collection: collection, manifest: manifest, scan: lean, scope: .everything)
        for id in Set(full.files.keys).union(manifest.entries.keys).union([Self.id("nobody")]) {
            let expected = fullGather.classifiedRecord(id)
            let got = leanGather.classifiedRecord(id)
            #expect(got.state == expected.state, "\(id)")
        }
    }

    @Test(arguments: [1, 2, 4, 500])
    func pushWalksAndChunksTheDifferingRecordsInIDOrder(chunkSize: Int) async throws {
        let (scratch, collection) = try Self.collection()
        defer { withExtendedLifetime(scratch) {} }
        let manifest = try collection.manifestFile.load()
        let scan = try LocalScanner(for: collection, base: manifest, choices: ScanChoices(keepHashes: false)).scan()
        let candidates = DifferingRecords(scan: scan, manifest: manifest)
        var walked: [String] = []
        candidates.walk { id in
            walked.append(id.rawValue)
            return true
        }
        #expect(walked == ["aaa", "broken", "foundation", "g", "hyperion", "nogenre", "solaris", "zzz"])
        var plan = SyncGather(collection: collection, manifest: manifest, scan: scan, scope: .everything).planPush(chunkSize: chunkSize)
        let writes = ["aaa", "foundation", "g", "hyperion", "solaris", "zzz"]
        #expect(plan.steps == writes.count && plan.deletes == 1)
        // Each chunk holds the next `chunkSize` writes.
        let chunks = plan.chunks.map { plan.steps(in: $0).map(\.id.rawValue) }
        #expect(chunks == stride(from: 0, to: writes.count, by: chunkSize).map { Array(writes[$0..<min($0 + chunkSize, writes.count)]) })
        // The dry run's report: every record acted on or reported, in id order.
        let report = plan.takeReport()
        #expect(report.map(\.id.rawValue) == walked)
        #expect(report.filter { if case .invalidLocal = $0.kind { true } else { false } }.map(\.id.rawValue) == ["broken", "nogenre"])
    }

    /// Lookups in a scan without hashes, while it runs (the added ids not yet
    /// sorted: the blocked-folder check asks then) and after: a base id is
    /// settled by its slot, never by searching the added ids.
    @Test func lookupsBeforeAndAfterTheScanEnds() {
        let hash = ContentHash(text: "sha256:" + String(repeating: "ab", count: 32))
        let base = ManifestEntries(Dictionary(uniqueKeysWithValues: (0..<300).map { (Self.id("b\($0)"), BaseEntry(hash: hash, revision: "r")) }))
        var files = LocalFiles(base: base.slots, keepsHashes: false)
        for i in (0..<500).reversed() { files.set(Self.id("n\(i)"), .valid(hash: hash), baseSlot: nil, clean: false) }
        files.set(Self.id("b1"), .valid(hash: hash), baseSlot: base.slot(of: Self.id("b1")), clean: true)
        files.set(Self.id("b2"), .valid(hash: "sha256:other"), baseSlot: base.slot(of: Self.id("b2")), clean: false)
        for finished in [false, true] {
            if finished { files.finish() }
            #expect(files[Self.id("b0")] == nil && files[Self.id("b299")] == nil)
            #expect(files[Self.id("b1")] == .valid(hash: hash))
            #expect(files[Self.id("b2")] == .valid(hash: LocalFiles.hashNotKept))
            #expect(files[Self.id("n0")] == .valid(hash: LocalFiles.hashNotKept) && files[Self.id("n499")] != nil)
            #expect(files[Self.id("n500")] == nil)
            #expect(files.count == 502)
        }
        #expect(Array(files.added) == (0..<500).map { Self.id("n\($0)") }.sorted())
    }

    /// A pull lets go of the clean files' hashes before it records new ones
    /// into the base: a clean file's hash then comes from the caller (read
    /// without one, a debug build stops; the release build's `hashNotKept`
    /// matches no file).
    @Test func cleanHashesDroppedAreGivenByTheCaller() {
        let hash = ContentHash(text: "sha256:" + String(repeating: "ab", count: 32))
        let other = ContentHash(text: "sha256:" + String(repeating: "cd", count: 32))
        var base = ManifestEntries(Dictionary(uniqueKeysWithValues: (0..<3).map { (Self.id("b\($0)"), BaseEntry(hash: hash, revision: "r")) }))
        var files = LocalFiles(base: base.slots)
        files.set(Self.id("b0"), .valid(hash: hash), baseSlot: base.slot(of: Self.id("b0")), clean: true)
        files.set(Self.id("b1"), .valid(hash: other), baseSlot: base.slot(of: Self.id("b1")), clean: false)
        // Before the drop the scan's own hash answers, whatever the caller gives.
        let third = ContentHash(text: "sha256:" + String(repeating: "ef", count: 32))
        #expect(files.state(of: Self.id("b0"), cleanHash: third) == .valid(hash: hash))
        files.dropCleanHashes()
        base[Self.id("b0")] = BaseEntry(hash: other, revision: "r2")
        #expect(files.state(of: Self.id("b0"), cleanHash: third) == .valid(hash: third), "after it, the caller's")
        #expect(files.state(of: Self.id("b1"), cleanHash: third) == .valid(hash: other), "only clean files take the caller's hash")
        #expect(files.state(of: Self.id("b2"), cleanHash: third) == nil)
    }
}
