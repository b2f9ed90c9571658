import BooksyncCore

/// The revision of every listed document by record id: a dictionary in
/// behaviour, about 40 bytes a document in memory instead of about 200.
///
/// A listing of a million names is held while a pull plans and applies
/// them. A key set twice keeps the second revision, as a dictionary's
/// subscript does (there is no `uniqueKeysWithValues` trap). A `[RecordID: String]` keeps each 27-character revision on the heap
/// beside a dictionary bucket; here each id is a slot of `PackedIDSlots`
/// and its revision 16 bytes (`PackedRevision`, exact). A revision without
/// that form (a test's `r1`, `FirestoreRemote.missingRevision`) is kept as
/// written in a side table.
@_spi(Remote) public struct RemoteRevisions: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    private var ids = PackedIDSlots()
    private var packed: [PackedRevision] = []
    /// Revisions without a packed form, by slot.
    private var verbatim: [Int32: String] = [:]
    /// How many documents are listed.
    public private(set) var count = 0

    /// No documents.
    public init() {}

    /// The revisions of a dictionary literal.
    public init(dictionaryLiteral elements: (RecordID, String)...) {
        for (id, revision) in elements { self[id] = revision }
    }

    /// The revisions of a dictionary, or of any id and revision pairs.
    public init(_ pairs: some Sequence<(key: RecordID, value: String)>, reservingCapacity capacity: Int = 0) {
        let capacity = Swift.max(capacity, pairs.underestimatedCount)
        ids.reserveCapacity(capacity)
        packed.reserveCapacity(capacity)
        for (id, revision) in pairs { self[id] = revision }
    }

    /// Whether `id` is listed (without building its revision).
    public func contains(_ id: RecordID) -> Bool { ids.find(id) != nil }

    /// True when no document is listed.
    public var isEmpty: Bool { count == 0 }

    /// The revision of `id`; setting nil removes it.
    public subscript(id: RecordID) -> String? {
        get { ids.find(id).map(revision(at:)) }
        set {
            switch ids.place(id, present: newValue != nil) {
            case .existing(let slot):
                if let newValue { store(newValue, at: slot) }
            case .appended(let slot):
                packed.append(PackedRevision())
                if let newValue { store(newValue, at: slot) }
                count += 1
            case .removed(let slot):
                verbatim[Int32(slot)] = nil
                count -= 1
            case .absent:
                break
            }
        }
    }

    /// The ids, in no particular order.
    public var keys: some Sequence<RecordID> {
        let ids = self.ids
        return ids.liveSlots.lazy.map { ids.id(at: $0) }
    }

    /// Every id and revision, in no particular order.
    public func makeIterator() -> some IteratorProtocol<(key: RecordID, value: String)> {
        ids.liveSlots.lazy.map { (key: self.ids.id(at: $0), value: self.revision(at: $0)) }.makeIterator()
    }

    /// The documents `isIncluded` keeps.
    public func filter(_ isIncluded: ((key: RecordID, value: String)) throws -> Bool) rethrows -> RemoteRevisions {
        var kept = RemoteRevisions()
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

    private func revision(at slot: Int) -> String {
        verbatim[Int32(slot)] ?? packed[slot].text
    }

    private mutating func store(_ revision: String, at slot: Int) {
        if let compact = PackedRevision(revision) {
            packed[slot] = compact
            verbatim[Int32(slot)] = nil
        } else {
            verbatim[Int32(slot)] = revision
        }
    }
}
