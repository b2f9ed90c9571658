import BooksyncCore

/// The record files a scan found, by id: a dictionary in behaviour, about one
/// bit per record for the usual case.
///
/// Nearly every file of a large collection is a valid record whose content
/// hash is its base entry's. Those are kept as one bit per manifest slot
/// (`ManifestEntries.slot(of:)`), their hash read back from the manifest; only
/// the others (changed, added, invalid, or scanned without a base) are kept
/// by id. A million clean records cost 125 KB here instead of ~150 MB.
public struct LocalFiles: Sendable {
    /// The base the clean bits refer to (shared storage, not a copy).
    private let base: ManifestEntries
    private var clean: [UInt64]
    private var cleanCount = 0
    private var others: [RecordID: LocalFileState] = [:]
    /// Valid files that are not clean, by id, their content hash as 32 bytes
    /// rather than a 71-byte string on the heap: a first push of a million
    /// new records holds a million of them.
    private var digests: [RecordID: ContentDigest] = [:]

    /// No files; `base` is the manifest the scan compares with.
    init(base: ManifestEntries) {
        self.base = base
        clean = [UInt64](repeating: 0, count: (base.slotCount + 63) / 64)
    }

    /// How many record files are not known clean (changed, added or invalid).
    var notCleanCount: Int { others.count + digests.count }
    /// How many record files hold their base content.
    var knownCleanCount: Int { cleanCount }

    /// How many record files there are.
    public var count: Int { cleanCount + others.count + digests.count }

    /// The state of the file of `id`; nil when there is none.
    public subscript(id: RecordID) -> LocalFileState? {
        if let digest = digests[id] { return .valid(hash: digest.contentHash) }
        if let state = others[id] { return state }
        guard cleanCount > 0, let slot = base.slot(of: id), isClean(slot) else { return nil }
        return .valid(hash: base.hash(atSlot: slot))
    }

    /// The ids of every file, in no particular order.
    public var keys: some Sequence<RecordID> {
        cleanIDs.lazy.map { $0 }.joined(with: others.keys).joined(with: digests.keys)
    }

    /// The ids of the files whose content is their base's.
    var cleanIDs: some Sequence<RecordID> {
        let base = self.base, clean = self.clean
        return (0..<base.slotCount).lazy.filter { clean[$0 >> 6] & (1 << UInt64($0 & 63)) != 0 }.map { base.id(atSlot: $0) }
    }


    /// True when the file of `id` is known to hold its base content.
    func isClean(_ slot: Int) -> Bool { clean[slot >> 6] & (1 << UInt64(slot & 63)) != 0 }

    /// Records the file of `id`; `cleanSlot` is its base slot when the file is
    /// valid with the base's content hash (the caller compared them).
    mutating func set(_ id: RecordID, _ state: LocalFileState, cleanSlot: Int?) {
        if let slot = cleanSlot {
            if !isClean(slot) {
                clean[slot >> 6] |= 1 << UInt64(slot & 63)
                cleanCount += 1
            }
        } else if case .valid(let hash) = state, let digest = ContentDigest(contentHash: hash) {
            digests[id] = digest
            others[id] = nil
        } else {
            others[id] = state
            digests[id] = nil
        }
    }
}

private extension Sequence {
    /// This sequence, then `other`.
    func joined<Other: Sequence>(with other: Other) -> some Sequence<Element> where Other.Element == Element {
        [AnySequence(self), AnySequence(other)].joined()
    }
}
