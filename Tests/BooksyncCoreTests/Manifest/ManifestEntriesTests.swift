import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// The compact manifest store behaves as the dictionary it replaced, and its
/// encodings of hashes and revisions are exact.
@Suite struct ManifestEntriesTests {
    static func id(_ s: String) -> RecordID { try! RecordID(s) }
    static let hashA = ContentHash(text: "sha256:" + String(repeating: "0123456789abcdef", count: 4))
    static let hashB = ContentHash(text: "sha256:" + String(repeating: "f", count: 64))

    /// Random sets, removals and re-additions against a `Dictionary` model.
    @Test(arguments: [1, 2, 3])
    func behavesAsADictionary(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var model: [RecordID: BaseEntry] = [:]
        var store = ManifestEntries()
        let values = [BaseEntry(hash: Self.hashA, revision: "2024-01-01T00:00:00.000000Z"),
                      BaseEntry(hash: Self.hashB, revision: "2024-01-01T00:00:00Z"),
                      BaseEntry(hash: "sha256:short", revision: "2024-01-01T00:00:00.000000Z"),
                      BaseEntry(hash: Self.hashA, revision: "rev with spaces"),
                      BaseEntry(hash: ContentHash(text: Self.hashA.text.uppercased()), revision: "")]
        /// Sets or removes (one in `removeOneIn`) random ids below `ids` in both, `rounds` times.
        func mutate(rounds: Int, ids: UInt64, removeOneIn: UInt64, check: (RecordID) -> Void = { _ in }) {
            for _ in 0..<rounds {
                let id = Self.id("r\(random.next() % ids)")
                if random.next() % removeOneIn == 0 {
                    model[id] = nil
                    store[id] = nil
                } else {
                    let value = values[Int(random.next() % UInt64(values.count))]
                    model[id] = value
                    store[id] = value
                }
                #expect(store[id] == model[id])
                // `holds(revision:for:)` answers as the entry would, packed, verbatim, overlaid or removed.
                for revision in values.map(\.revision) + ["2024-01-01T00:00:00.00000Z", "other"] {
                    #expect(store.holds(revision: revision, for: id) == (model[id]?.revision == revision), "\(id) \(revision)")
                }
                check(id)
            }
        }
        mutate(rounds: 3000, ids: 300, removeOneIn: 4)
        #expect(store.count == model.count)
        #expect(Set(store.keys) == Set(model.keys))
        #expect(store == ManifestEntries(model))
        for (id, entry) in store { #expect(model[id] == entry) }
        #expect(store.sorted.map(\.key) == model.keys.sorted(), "sorted by id bytes even after re-additions")
        #expect(store.mapValues(\.hash) == model.mapValues(\.hash))
        var other = ManifestEntries(model)
        other[Self.id("r0")] = BaseEntry(hash: Self.hashB, revision: "x")
        #expect(other != store)

        // A copy shares the slots: its changes go to the overlay, the original keeps its entries.
        let original = store
        let originalModel = model
        mutate(rounds: 500, ids: 400, removeOneIn: 3) { id in
            #expect(store.slot(of: id).map { store.entry(atSlot: $0) } == nil || store[id] != nil)
        }
        #expect(store.count == model.count && Set(store.keys) == Set(model.keys))
        #expect(store == ManifestEntries(model))
        #expect(store.sorted.map(\.key) == model.keys.sorted() && store.sorted.map(\.value) == model.keys.sorted().map { model[$0]! })
        #expect(original == ManifestEntries(originalModel))
        #expect(Manifest(entries: store).encoded() == Manifest(entries: model).encoded())
    }

    /// A shared copy changed past the overlay limit (a first pull recording
    /// 100,000 records into the manifest it classified against) takes slots
    /// of its own: every change is there, removals and re-additions
    /// included, and the original is untouched.
    @Test func aCopyChangedPastTheOverlayLimitTakesSlotsOfItsOwn() {
        var model: [RecordID: BaseEntry] = [:]
        for n in 0..<1_000 { model[Self.id("r\(n)")] = BaseEntry(hash: Self.hashA, revision: "2024-01-01T00:00:00.000000Z") }
        let original = ManifestEntries(model)
        var copy = original
        let limit = ManifestEntries.overlayLimit(slots: original.slotCount)
        copy[Self.id("r1")] = nil
        copy[Self.id("r2")] = nil
        var copyModel = model
        copyModel[Self.id("r1")] = nil
        copyModel[Self.id("r2")] = nil
        for n in 0..<(limit + 10) {
            let entry = BaseEntry(hash: n % 2 == 0 ? Self.hashB : ContentHash(text: "verbatim-\(n)"), revision: "2024-06-01T00:00:00.000000Z")
            copy[Self.id("new\(n)")] = entry
            copyModel[Self.id("new\(n)")] = entry
        }
        copy[Self.id("r2")] = BaseEntry(hash: Self.hashB, revision: "back")
        copyModel[Self.id("r2")] = BaseEntry(hash: Self.hashB, revision: "back")
        #expect(copy.slot(of: Self.id("new0")) != nil, "folded: the changes are in slots of the copy's own")
        #expect(copy.slot(of: Self.id("r2")) != nil)
        #expect(copy.count == copyModel.count)
        #expect(copy == ManifestEntries(copyModel))
        #expect(copy.sorted.map(\.key) == copyModel.keys.sorted())
        #expect(original == ManifestEntries(model), "the original keeps its entries")
        #expect(original.slot(of: Self.id("new0")) == nil && original[Self.id("r1")] != nil)
    }

    /// Hashes and revisions without a compact form are kept verbatim; those with one read back identically.
    @Test(arguments: [
        Self.hashA.text, Self.hashB.text, "sha256:", "sha256:" + String(repeating: "0", count: 63), "sha256:" + String(repeating: "g", count: 64),
        "SHA256:" + String(repeating: "0", count: 64), "sha256:" + String(repeating: "A", count: 64), "",
    ])
    func contentDigestIsExact(text: String) {
        let digest = ContentDigest(contentHash: ContentHash(text: text))
        #expect((digest != nil) == (text == Self.hashA.text || text == Self.hashB.text))
        if let digest { #expect(digest.contentHash.text == text) }
    }

    @Test(arguments: [
        "2024-01-01T00:00:00.000000Z", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00.123456789Z", "", "0",
        String(repeating: "9", count: 32), String(repeating: "9", count: 33), "2024-01-01 00:00:00", "2024-01-01T00:00:00.000000z", "é",
    ])
    func packedRevisionIsExact(text: String) {
        let packed = PackedRevision(text)
        let packable = text.utf8.count <= 32 && text.utf8.allSatisfy { Array("0123456789-:T.Z".utf8).contains($0) }
        #expect((packed != nil) == packable)
        if let packed { #expect(packed.text == text) }
    }

    /// The line decoder gives the same manifest however the file is cut into
    /// blocks of whole lines, and refuses every damaged line.
    @Test func canonicalDecoderTakesAnyBlocksOfLines() throws {
        var manifest = Manifest(configFingerprint: "sha256:cf")
        for k in 0..<50 { manifest.entries[Self.id("b\(k)")] = BaseEntry(hash: k % 7 == 0 ? "sha256:odd" : Self.hashA, revision: "2024-01-0\(k % 9)T00:00:00Z") }
        let bytes = manifest.encoded()
        let lineEnds = bytes.indices.filter { bytes[$0] == 0x0A }.map { $0 + 1 }
        for every in [1, 2, 7, 100] {
            var decoder = CanonicalManifestDecoder()
            var start = 0
            for (n, end) in lineEnds.enumerated() where n % every == every - 1 || end == bytes.count {
                #expect(bytes[start..<end].withUnsafeBufferPointer { decoder.feed($0) })
                start = end
            }
            #expect(decoder.finish() == manifest)
        }
        #expect(Manifest.decodeCanonical(Manifest().encoded()) == Manifest())
    }

    /// A change mark, with or without a scope, is read by the fast path as
    /// the full parser reads it; the fast path never reads one differently.
    @Test(arguments: [
        ChangeMark(field: "updatedAt", time: Self.markTime),
        ChangeMark(field: "updatedAt", time: Self.markTime, scope: #"genre == "sf""#),
        ChangeMark(field: "updatedAt", time: Self.markTime, scope: #"(pages > 100 and tags array-contains "a\b") or `odd field` in ["x", "y"]"#),
        ChangeMark(field: "updatedAt", time: Self.markTime, scope: "title == \"tab\there\""),
        ChangeMark(field: "updated \"at\"", time: Self.markTime, scope: "a == 1"),
    ])
    func aChangeMarkTakesTheFastPath(mark: ChangeMark) throws {
        var manifest = Manifest(configFingerprint: "sha256:cf")
        manifest.changesSince = mark
        manifest.entries[Self.id("a")] = BaseEntry(hash: Self.hashA, revision: "2024-01-01T00:00:00Z")
        let bytes = manifest.encoded()
        #expect(try Manifest.decode(bytes) == manifest)
        let line = try #require(String(decoding: bytes, as: UTF8.self).split(separator: "\n").first { $0.contains("changesSince") })
        let fast = Array((line + "").utf8).withUnsafeBufferPointer { CanonicalManifestDecoder.changeMark($0) }
        // A field name with an escape is the full parser's; every other mark is read here, scope and all.
        #expect(fast == (mark.field.contains("\"") ? nil : mark), "\(line)")
        #expect(Manifest.decodeCanonical(bytes) == (fast == nil ? nil : manifest))
    }

    static let markTime = try! Timestamp(rfc3339: "2024-05-01T10:00:00.123456Z")

    @Test(arguments: [
        ("\"records\": {\n", "\"records\": {\n    \"0\": {\"hash\": \"sha256:1\", \"revision\": \"r\"}\n"),  // no comma before the next
        ("\n  }\n}\n", ",\n  }\n}\n"),  // comma before the closing brace
        ("\"records\": {\n", "\"records\": {\n    \"a\": {\"hash\": \"sha256:1\", \"revision\": \"r\"},\n"),  // duplicate id
        ("  \"config\"", "  \"unknownKey\": \"x\",\n  \"config\""),  // a header key the fast path does not know
        ("\"revision\": \"r\"}\n", "\"revision\": \"r\\u0041\"}\n"),  // an escape encode never writes
        ("\n  }\n}\n", "\n  }\n}"),  // no final newline
        ("\n  }\n}\n", "\n  }\n}\n\n"),  // a line after the end
    ])
    func canonicalDecoderRefusesDamage(find: String, replace: String) throws {
        var manifest = Manifest(configFingerprint: "sha256:cf")
        manifest.entries[Self.id("a")] = BaseEntry(hash: "sha256:1", revision: "r")
        let text = String(decoding: manifest.encoded(), as: UTF8.self)
        #expect(Manifest.decodeCanonical(Array(text.utf8)) == manifest)
        let damaged = text.replacing(find, with: replace, maxReplacements: 1)
        #expect(damaged != text)
        #expect(Manifest.decodeCanonical(Array(damaged.utf8)) == nil)
    }

    /// The scan's view of the slots keeps what it was taken with, and holding
    /// it leaves the entries unshared: changes go to the slots in place, not
    /// to an overlay (which a pull of a million changes would then copy whole).
    @Test func theSlotsViewKeepsItsValuesAndLeavesTheEntriesUnshared() {
        let (a, b, c) = (Self.id("a"), Self.id("b"), Self.id("c"))
        let old = BaseEntry(hash: Self.hashA, revision: "2024-01-01T00:00:00Z")
        let new = BaseEntry(hash: Self.hashB, revision: "2024-01-02T00:00:00Z")
        var entries: ManifestEntries = [a: old, b: old]
        let view = entries.slots
        entries[a] = new
        entries[b] = nil
        entries[c] = new
        #expect(entries.isInIDOrder, "changed in place: no overlay")
        #expect(entries[a] == new && entries[b] == nil && entries[c] == new)
        #expect(view.slot(of: a).map(view.hash(atSlot:)) == Self.hashA)
        #expect(view.slot(of: b).map(view.hash(atSlot:)) == Self.hashA && view.slot(of: c) == nil)
        #expect(view.slotCount == 2 && !view.isEmpty && ManifestEntries().slots.isEmpty)

        // Taken from a shared copy, ids its overlay changed or removed have no slot.
        let shared = entries
        var copy = shared
        copy[a] = old
        copy[c] = nil
        let shadowed = copy.slots
        #expect(shadowed.slot(of: a) == nil && shadowed.slot(of: c) == nil)
        #expect(shared.slots.slot(of: a) != nil)
    }
}
