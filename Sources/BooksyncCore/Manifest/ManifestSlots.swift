/// The ids and content hashes of a manifest's slots as they were when taken
/// (`ManifestEntries.slots`): what the local scan needs to keep one bit per
/// clean record, without the revisions.
///
/// Holding it does not make the entries count as shared, so a sync that
/// records into the manifest its scan was made against changes the manifest
/// in place: only the arrays it changes are copied (the hashes, 32 bytes a
/// record; the ids when records are added), where holding the entries
/// themselves sent every change to the overlay and then copied the whole
/// (the Benchmarks article, the pull of a million changes). This view keeps
/// the values it was taken with, whatever the manifest becomes, until
/// `dropHashes()` lets go of the hashes (a pull about to apply).
package struct ManifestSlots: Sendable {
    private let ids: PackedIDSlots
    private var digests: [ContentDigest]
    /// Hashes without a compact form, by slot.
    private var verbatimHashes: [Int32: ContentHash]
    /// Whether `dropHashes()` let go of them.
    private var hashesDropped = false
    /// Ids whose slot does not hold their entry (changed in a shared copy, or removed).
    private let shadowed: Set<RecordID>
    /// How many entries the manifest held.
    private let count: Int

    init(ids: PackedIDSlots, digests: [ContentDigest], verbatimHashes: [Int32: ContentHash], shadowed: Set<RecordID>, count: Int) {
        (self.ids, self.digests, self.verbatimHashes, self.shadowed, self.count) = (ids, digests, verbatimHashes, shadowed, count)
    }

    /// No slots.
    package init() {
        self.init(ids: PackedIDSlots(), digests: [], verbatimHashes: [:], shadowed: [], count: 0)
    }

    /// True when the manifest held no entries.
    package var isEmpty: Bool { count == 0 }

    /// As `ManifestEntries.slotCount`.
    package var slotCount: Int { ids.count }

    /// As `ManifestEntries.slot(of:)`.
    package func slot(of id: RecordID) -> Int? {
        if !shadowed.isEmpty, shadowed.contains(id) { return nil }
        return ids.find(id)
    }

    /// As `ManifestEntries.id(atSlot:)`.
    package func id(atSlot slot: Int) -> RecordID { ids.id(at: slot) }

    /// As `ManifestEntries.hash(atSlot:)`; nil once the hashes are dropped.
    package func hash(atSlot slot: Int) -> ContentHash? {
        hashesDropped ? nil : verbatimHashes[Int32(slot)] ?? digests[slot].contentHash
    }

    /// Lets go of the hashes, keeping the ids: a sync about to record new
    /// hashes into the manifest would otherwise copy its hashes array.
    package mutating func dropHashes() {
        digests = []
        verbatimHashes = [:]
        hashesDropped = true
    }
}
