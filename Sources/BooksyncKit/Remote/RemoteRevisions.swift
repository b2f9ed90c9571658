import BooksyncCore

/// The revision of every listed document by record id: a dictionary in
/// behaviour, about 40 bytes a document in memory instead of about 200.
///
/// A listing of a million names is held while a pull plans and applies
/// them. A key set twice keeps the second revision, as a dictionary's
/// subscript does (there is no `uniqueKeysWithValues` trap). A
/// `[RecordID: String]` keeps each 27-character revision on the heap beside
/// a dictionary bucket; here each id is a slot of `PackedIDSlots` and its
/// revision 16 bytes (`PackedRevision`, exact). A revision without that form
/// (a test's `r1`, `FirestoreRemote.missingRevision`) is kept as written in
/// a side table.
///
/// Keyed like a base (`init(keyedLike:)`), an id the base holds is not
/// stored again: its revision goes in an array by the base's slot (17 bytes
/// a base slot, listed or not, allocated with the first such id), and the
/// base's id table is shared, never changed here. Nearly every listed name
/// is one the base holds.
@_spi(Remote) public struct RemoteRevisions: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// The base's ids, when keyed like a base.
    private var baseIDs: PackedIDSlots?
    /// By the slot in `baseIDs`; empty until one of its ids is set.
    private var revisionsByBaseSlot: [PackedRevision] = []
    private var listedBaseSlots: [Bool] = []
    /// The ids the base does not hold (every id when not keyed).
    private var ownIDs = PackedIDSlots()
    private var ownRevisions: [PackedRevision] = []
    /// Revisions without a packed form, by `Slot.key`.
    private var verbatim: [Int32: String] = [:]
    /// How many documents are listed.
    public private(set) var count = 0

    /// Where one id's revision is kept.
    private enum Slot {
        case base(Int), own(Int)

        var key: Int32 {
            switch self {
            case .base(let slot): Int32(-1 - slot)
            case .own(let slot): Int32(slot)
            }
        }
    }

    /// No documents.
    public init() {}

    /// No documents yet, keyed like `entries`: 17 bytes for each of their
    /// slots once one of their ids is set, instead of about 40 an id.
    package init(keyedLike entries: ManifestEntries) {
        if entries.slotCount > 0 { baseIDs = entries.idSlots }
    }

    /// The revisions of a dictionary literal.
    public init(dictionaryLiteral elements: (RecordID, String)...) {
        for (id, revision) in elements { self[id] = revision }
    }

    /// The revisions of a dictionary, or of any id and revision pairs.
    public init(_ pairs: some Sequence<(key: RecordID, value: String)>) {
        ownIDs.reserveCapacity(pairs.underestimatedCount)
        ownRevisions.reserveCapacity(pairs.underestimatedCount)
        for (id, revision) in pairs { self[id] = revision }
    }

    /// Whether `id` is listed (without building its revision).
    public func contains(_ id: RecordID) -> Bool { slot(of: id) != nil }

    /// True when no document is listed.
    public var isEmpty: Bool { count == 0 }

    /// The revision of `id`; setting nil removes it.
    public subscript(id: RecordID) -> String? {
        get { slot(of: id).map(revision(at:)) }
        set {
            if let baseIDs, let slot = baseIDs.find(id) {
                setForBaseSlot(newValue, at: slot, slots: baseIDs.count)
                return
            }
            switch ownIDs.place(id, present: newValue != nil) {
            case .existing(let slot):
                if let newValue { store(newValue, at: .own(slot)) }
            case .appended(let slot):
                ownRevisions.append(PackedRevision())
                if let newValue { store(newValue, at: .own(slot)) }
                count += 1
            case .removed(let slot):
                verbatim[Slot.own(slot).key] = nil
                count -= 1
            case .absent:
                break
            }
        }
    }

    /// Sets or removes the revision of the base's id in `slot` (of `slots`).
    private mutating func setForBaseSlot(_ revision: String?, at slot: Int, slots: Int) {
        if revisionsByBaseSlot.isEmpty {
            guard revision != nil else { return }
            revisionsByBaseSlot = [PackedRevision](repeating: PackedRevision(), count: slots)
            listedBaseSlots = [Bool](repeating: false, count: slots)
        }
        let wasListed = listedBaseSlots[slot]
        if let revision {
            store(revision, at: .base(slot))
            if !wasListed { count += 1 }
        } else if wasListed {
            verbatim[Slot.base(slot).key] = nil
            count -= 1
        }
        listedBaseSlots[slot] = revision != nil
    }

    /// The ids, in no particular order.
    public var keys: some Sequence<RecordID> {
        slots.lazy.map { self.id(at: $0) }
    }

    /// Every id and revision, in no particular order.
    public func makeIterator() -> some IteratorProtocol<(key: RecordID, value: String)> {
        slots.lazy.map { (key: self.id(at: $0), value: self.revision(at: $0)) }.makeIterator()
    }

    /// The documents `isIncluded` keeps (keyed as this is).
    public func filter(_ isIncluded: ((key: RecordID, value: String)) throws -> Bool) rethrows -> RemoteRevisions {
        var kept = RemoteRevisions()
        kept.baseIDs = baseIDs
        for element in self where try isIncluded(element) { kept[element.key] = element.value }
        return kept
    }

    /// Adds `other`'s documents; for an id both list, `combine` picks the revision.
    public mutating func merge(_ other: RemoteRevisions, uniquingKeysWith combine: (String, String) throws -> String) rethrows {
        for (id, revision) in other { self[id] = try self[id].map { try combine($0, revision) } ?? revision }
    }

    /// Equal when both list the same ids at the same revisions.
    public static func == (lhs: RemoteRevisions, rhs: RemoteRevisions) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { rhs[$0.key] == $0.value }
    }

    private func slot(of id: RecordID) -> Slot? {
        if let baseIDs, let slot = baseIDs.find(id) {
            return listedBaseSlots.isEmpty || !listedBaseSlots[slot] ? nil : .base(slot)
        }
        return ownIDs.find(id).map(Slot.own)
    }

    /// The listed slots: the base's in slot order, then the others.
    private var slots: Slots { Slots(listedBaseSlots: listedBaseSlots, ownIDs: ownIDs) }

    private struct Slots: Sequence, IteratorProtocol {
        let listedBaseSlots: [Bool]
        let ownIDs: PackedIDSlots
        var position = (base: 0, own: 0)

        mutating func next() -> Slot? {
            while position.base < listedBaseSlots.count {
                position.base += 1
                if listedBaseSlots[position.base - 1] { return .base(position.base - 1) }
            }
            while position.own < ownIDs.count {
                position.own += 1
                if ownIDs.isLive(position.own - 1) { return .own(position.own - 1) }
            }
            return nil
        }
    }

    private func id(at slot: Slot) -> RecordID {
        switch slot {
        case .base(let slot): baseIDs!.id(at: slot)  // base slots exist only with baseIDs
        case .own(let slot): ownIDs.id(at: slot)
        }
    }

    private func revision(at slot: Slot) -> String {
        if let kept = verbatim[slot.key] { return kept }
        switch slot {
        case .base(let slot): return revisionsByBaseSlot[slot].text
        case .own(let slot): return ownRevisions[slot].text
        }
    }

    private mutating func store(_ revision: String, at slot: Slot) {
        guard let compact = PackedRevision(revision) else {
            verbatim[slot.key] = revision
            return
        }
        switch slot {
        case .base(let slot): revisionsByBaseSlot[slot] = compact
        case .own(let slot): ownRevisions[slot] = compact
        }
        verbatim[slot.key] = nil
    }
}
