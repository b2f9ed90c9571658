/// The base entries of a manifest by record id: a dictionary in behaviour,
/// about 70 bytes per record in memory instead of about 250.
///
/// A million-record collection has a million entries, and every command holds
/// them. A `[RecordID: BaseEntry]` keeps two strings per entry on the heap (the
/// 71-character hash and the revision) plus a dictionary bucket; here each
/// entry is one slot in a few flat arrays:
///
/// - the id, in `PackedIDSlots` (its bytes in one buffer, found by a table);
/// - the content hash as its 32 raw bytes;
/// - the revision packed four bits a character (16 bytes): Firestore's
///   `2024-01-01T00:00:00.123456Z` uses only digits and `-:T.Z`.
///
/// A hash or revision without that form (a hand-edited manifest) is kept as
/// written in a side table: the compact form is an encoding, never a
/// normalisation, so every value reads back exactly as it was stored.
///
/// Changes to a copy whose arrays are shared (a sync records a few entries
/// in the manifest it also planned against) go to a small overlay instead of
/// copying every array: a push of ten records into a million keeps one copy.
/// Past `overlayLimit` changes the copy takes arrays of its own.
package struct ManifestEntries: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    private var ids = PackedIDSlots()
    private var digests: [ContentDigest] = []
    private var revisions: [PackedRevision] = []
    /// Entries whose hash or revision has no compact form, by slot.
    private var verbatim: [Int32: BaseEntry] = [:]
    /// How many slots are live.
    package private(set) var count = 0
    /// Whether the entries were added in strictly increasing id order, as a
    /// manifest booksync wrote decodes (a hand-edited one may not be sorted).
    package var isInIDOrder: Bool { ids.inIDOrder && overlay.isEmpty && removed.isEmpty }
    /// Shared by copies: while it is, the arrays are shared too, and changes
    /// go to `overlay` and `removed`, which take precedence over the slots.
    private var owner = Owner()
    private var overlay: [RecordID: BaseEntry] = [:]
    private var removed: Set<RecordID> = []
    private final class Owner: Sendable {}

    /// No entries.
    package init() {}

    /// The entries of a dictionary literal.
    package init(dictionaryLiteral elements: (RecordID, BaseEntry)...) {
        for (id, entry) in elements { self[id] = entry }
    }

    /// The entries of a dictionary.
    package init(_ dictionary: [RecordID: BaseEntry]) {
        reserveCapacity(dictionary.count)
        for (id, entry) in dictionary { self[id] = entry }
    }

    /// True when there are no entries.
    package var isEmpty: Bool { count == 0 }

    /// Makes room for `n` entries without regrowing the table.
    package mutating func reserveCapacity(_ n: Int) {
        ids.reserveCapacity(n)
        digests.reserveCapacity(n)
        revisions.reserveCapacity(n)
    }

    /// The entry of `id`; setting nil removes it.
    package subscript(id: RecordID) -> BaseEntry? {
        get {
            if !overlay.isEmpty || !removed.isEmpty {
                if removed.contains(id) { return nil }
                if let entry = overlay[id] { return entry }
            }
            return ids.find(id).map(entry(at:))
        }
        set {
            let old = self[id]
            count += (newValue == nil ? 0 : 1) - (old == nil ? 0 : 1)
            guard isKnownUniquelyReferenced(&owner) else {
                overlay[id] = newValue
                if newValue == nil { removed.insert(id) } else { removed.remove(id) }
                if overlay.count + removed.count > Self.overlayLimit(slots: ids.count) { foldOverlay() }
                return
            }
            overlay[id] = nil
            removed.remove(id)
            switch ids.place(id, present: newValue != nil) {
            case .existing(let slot):
                if let newValue { store(newValue, at: slot) }
            case .appended(let slot):
                appendValues()
                if let newValue { store(newValue, at: slot) }
            case .removed(let slot):
                verbatim[Int32(slot)] = nil
            case .absent:
                break
            }
        }
    }

    /// Overlay entries at most before a shared copy takes arrays of its own:
    /// the overlay costs about 350 bytes an entry, the slots about 70, so a
    /// pull that records 100,000 new records into the manifest it classified
    /// against copies the slots once instead of growing a dictionary.
    static func overlayLimit(slots: Int) -> Int { Swift.max(4_096, slots / 8) }

    /// Ends sharing: this copy gets arrays of its own (copied on their next
    /// change) and the overlay's changes move into its slots.
    private mutating func foldOverlay() {
        owner = Owner()
        let (changed, gone) = (overlay, removed)
        overlay = [:]
        removed = []
        for id in gone {
            guard let slot = ids.find(id) else { continue }
            ids.kill(slot)
            verbatim[Int32(slot)] = nil
        }
        for (id, entry) in changed {
            if let slot = ids.find(id) {  // live slots only; a removed id gets a new one
                store(entry, at: slot)
            } else {
                add(id, entry)
            }
        }
    }

    /// The ids, in no particular order (without building their entries).
    package var keys: some Sequence<RecordID> {
        let shadowed = overlay.isEmpty && removed.isEmpty ? nil : (overlay, removed)
        let fromSlots = ids.liveSlots.lazy.map { self.ids.id(at: $0) }
            .filter { id in shadowed.map { $0.0[id] == nil && !$0.1.contains(id) } ?? true }
        return [AnySequence(fromSlots), AnySequence(overlay.keys)].joined()
    }

    /// Whether the entry of `id` has exactly `revision`: what a listing of a
    /// million names asks of each, answered without building the entry.
    package func holds(revision: String, for id: RecordID) -> Bool {
        if !overlay.isEmpty || !removed.isEmpty {
            if removed.contains(id) { return false }
            if let entry = overlay[id] { return entry.revision == revision }
        }
        guard let slot = ids.find(id) else { return false }
        if let kept = verbatim[Int32(slot)] { return kept.revision == revision }
        // Packing is exact: equal packs are equal texts, and a text without a pack is not this slot's.
        return PackedRevision(revision) == revisions[slot]
    }

    /// The entries, in no particular order.
    package var values: some Sequence<BaseEntry> { pairs.lazy.map(\.value) }

    /// Every id and entry: the slots not overridden, then the overlay.
    private var pairs: some Sequence<(key: RecordID, value: BaseEntry)> {
        let shadowed = overlay.isEmpty && removed.isEmpty ? nil : (overlay, removed)
        let fromSlots = ids.liveSlots.lazy.map { (key: self.ids.id(at: $0), value: self.entry(at: $0)) }
            .filter { pair in shadowed.map { $0.0[pair.key] == nil && !$0.1.contains(pair.key) } ?? true }
        return [AnySequence(fromSlots), AnySequence(overlay.lazy.map { (key: $0.key, value: $0.value) })].joined()
    }

    /// The ids and entries sorted by id (UTF-8 bytes), as the manifest file lists them.
    package var sorted: some Sequence<(key: RecordID, value: BaseEntry)> {
        // Slots added in id order are walked as they are; otherwise in an order
        // of 4-byte slot numbers (4 MB for a million, sorted in place).
        var order: [UInt32] = []
        if !ids.inIDOrder {
            order = ids.liveSlots.map { UInt32($0) }
            order.sort { a, b in ids.idLess(Int(a), Int(b)) }
        }
        let slots = ids.inIDOrder ? AnySequence(ids.liveSlots) : AnySequence(order.lazy.map { Int($0) })
        let (overlay, removed) = (self.overlay, self.removed)
        let fromSlots = slots.lazy.map { (key: self.ids.id(at: $0), value: self.entry(at: $0)) }
            .filter { overlay[$0.key] == nil && !removed.contains($0.key) }
        let changed = overlay.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
        return MergedByID(AnyIterator(fromSlots.makeIterator()), AnyIterator(changed.makeIterator()))
    }

    /// A dictionary of one property of every entry.
    package func mapValues<T>(_ transform: (BaseEntry) -> T) -> [RecordID: T] {
        var out: [RecordID: T] = [:]
        out.reserveCapacity(count)
        for (id, entry) in pairs { out[id] = transform(entry) }
        return out
    }

    package func makeIterator() -> some IteratorProtocol<(key: RecordID, value: BaseEntry)> {
        pairs.makeIterator()
    }

    package static func == (lhs: ManifestEntries, rhs: ManifestEntries) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { rhs[$0.key] == $0.value }
    }

    // MARK: Slots

    /// Slot numbers run from 0 to `slotCount`; a removed entry's slot is not
    /// live, and an id changed in a shared copy has no slot (`slot(of:)` is
    /// nil; the slot still shows the old entry). Callers that keep one bit per record (the local scan's clean set)
    /// index it by slot instead of holding ids.
    package var slotCount: Int { ids.count }

    /// The id table, shared (copy on write): a listing keyed by it stores a
    /// name the base holds by its slot (`RemoteRevisions(keyedLike:)`).
    package var idSlots: PackedIDSlots { ids }

    /// The slots' ids and hashes as they are now (see `ManifestSlots`).
    package var slots: ManifestSlots {
        ManifestSlots(ids: ids, digests: digests, verbatimHashes: verbatim.mapValues(\.hash),
                      shadowed: Set(overlay.keys).union(removed), count: count)
    }

    /// The slot of `id`'s entry, if it has one.
    package func slot(of id: RecordID) -> Int? {
        if !overlay.isEmpty || !removed.isEmpty, overlay[id] != nil || removed.contains(id) { return nil }
        return ids.find(id)
    }

    /// The id in a live slot.
    package func id(atSlot slot: Int) -> RecordID { ids.id(at: slot) }

    /// The entry in a live slot.
    package func entry(atSlot slot: Int) -> BaseEntry { entry(at: slot) }

    /// The content hash in a live slot (without building its revision).
    package func hash(atSlot slot: Int) -> ContentHash { verbatim[Int32(slot)]?.hash ?? digests[slot].contentHash }

    /// The content hash in a live slot as a digest; nil when it has no compact form.
    package func digest(atSlot slot: Int) -> ContentDigest? { verbatim[Int32(slot)] == nil ? digests[slot] : nil }

    private func entry(at slot: Int) -> BaseEntry {
        if let kept = verbatim[Int32(slot)] { return kept }
        return BaseEntry(hash: digests[slot].contentHash, revision: revisions[slot].text)
    }

    private mutating func store(_ entry: BaseEntry, at slot: Int) {
        if let digest = ContentDigest(contentHash: entry.hash), let revision = PackedRevision(entry.revision) {
            digests[slot] = digest
            revisions[slot] = revision
            verbatim[Int32(slot)] = nil
        } else {
            verbatim[Int32(slot)] = entry
        }
    }

    /// Adds an entry for an id that has none, in compact form (the canonical decoder's path).
    mutating func add(_ id: RecordID, digest: ContentDigest, revision: PackedRevision) {
        let slot = appendSlot(id)
        digests[slot] = digest
        revisions[slot] = revision
        count += 1
    }

    private mutating func add(_ id: RecordID, _ entry: BaseEntry) {
        store(entry, at: appendSlot(id))
    }

    /// A new live slot for an id that has none; its values still to store.
    private mutating func appendSlot(_ id: RecordID) -> Int {
        let slot = ids.append(id)
        appendValues()
        return slot
    }

    /// Room for the values of the slot just appended.
    private mutating func appendValues() {
        digests.append(ContentDigest())
        revisions.append(PackedRevision())
    }
}

/// Two sequences sorted by id merged into one; ids are in one or the other.
private struct MergedByID: Sequence, IteratorProtocol {
    typealias Element = (key: RecordID, value: BaseEntry)
    private var a: AnyIterator<Element>, b: AnyIterator<Element>
    private var nextA: Element?, nextB: Element?

    init(_ a: AnyIterator<Element>, _ b: AnyIterator<Element>) {
        self.a = a
        self.b = b
        nextA = self.a.next()
        nextB = self.b.next()
    }

    mutating func next() -> Element? {
        switch (nextA, nextB) {
        case (nil, nil): return nil
        case (let x?, nil):
            nextA = a.next()
            return x
        case (nil, let y?):
            nextB = b.next()
            return y
        case (let x?, let y?):
            if x.key < y.key {
                nextA = a.next()
                return x
            }
            nextB = b.next()
            return y
        }
    }
}
