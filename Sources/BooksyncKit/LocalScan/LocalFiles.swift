import BooksyncCore

/// The record files a scan found, by id: a dictionary in behaviour, about one
/// bit per record for the usual case.
///
/// Nearly every file of a large collection is a valid record whose content
/// hash is its base entry's. Those are kept as one bit per manifest slot
/// (`ManifestSlots.slot(of:)`), their hash read back from the manifest's
/// slots as the scan saw them (until a pull lets go of them,
/// `dropCleanHashes()`); only the others (changed, added, invalid, or
/// scanned without a base) are kept by id: a bit per clean record instead of an entry (<doc:Benchmarks>).
///
/// A scan that keeps no hashes (`keepsHashes` false: push, which compares a
/// file only with its base entry, and the scan already did) keeps a changed
/// file as a second bit per slot and an added one as a packed id
/// (`PackedRecordIDs`, sorted when the scan ends): a few bytes where a hashed
/// entry takes more than a hundred (<doc:Benchmarks>). Their state reads `.valid(hash: hashNotKept)`.
package struct LocalFiles: Sendable {
    /// The base the clean bits refer to: its slots as the scan saw them
    /// (shared storage, not a copy, and not the entries themselves, so a
    /// sync records into the manifest in place).
    private var base: ManifestSlots
    private var clean: [UInt64]
    private var cleanCount = 0
    private var others: [RecordID: LocalFileState] = [:]
    /// Valid files that are not clean, by id, their content hash as 32 bytes
    /// rather than a 71-byte string on the heap (scans that keep hashes).
    private var digests: [RecordID: ContentDigest] = [:]
    /// False: valid files that are not clean are kept without their hash.
    let keepsHashes: Bool
    /// Valid files whose content differs from their base entry's, a bit per
    /// base slot (scans that keep no hashes).
    private var changed: [UInt64] = []
    private var changedCount = 0
    /// Valid files without a base entry (scans that keep no hashes), sorted
    /// by `finish()`.
    private(set) var added = PackedRecordIDs()
    private var addedSorted = true

    /// The hash of a valid file that a scan without hashes did not keep: it
    /// equals no content hash, so the rules see the file as differing from its
    /// base, which the scan established.
    package static let hashNotKept = ContentHash(text: "")

    /// No files; `base` is the manifest the scan compares with.
    init(base: ManifestSlots, keepsHashes: Bool = true) {
        self.base = base
        self.keepsHashes = keepsHashes
        clean = [UInt64](repeating: 0, count: (base.slotCount + 63) / 64)
        if !keepsHashes { changed = clean }
    }

    /// How many record files are not known clean (changed, added or invalid).
    var notCleanCount: Int { others.count + digests.count + changedCount + added.count }
    /// How many record files hold their base content.
    var knownCleanCount: Int { cleanCount }

    /// How many record files there are.
    package var count: Int { cleanCount + notCleanCount }

    /// The state of the file of `id`; nil when there is none.
    package subscript(id: RecordID) -> LocalFileState? {
        state(of: id, cleanHash: nil)
    }

    /// The state of the file of `id`, a clean file's hash being `cleanHash`
    /// once `dropCleanHashes()` let go of the scan's (before that, as the
    /// subscript). Only the apply step may ask after the drop: a dropped
    /// hash read without one would be `hashNotKept`, which matches no file,
    /// so the classification would take a clean file for a local change
    /// (debug builds stop there).
    func state(of id: RecordID, cleanHash: ContentHash?) -> LocalFileState? {
        if let digest = digests[id] { return .valid(hash: digest.contentHash) }
        if let state = others[id] { return state }
        // An id with a base slot is never among the added ones: settled here,
        // without searching them (which before `finish()` is a linear walk).
        if !base.isEmpty, let slot = base.slot(of: id) {
            if isClean(slot) {
                let hash = base.hash(atSlot: slot) ?? cleanHash
                assert(hash != nil, "a clean file's hash asked for after dropCleanHashes()")
                return .valid(hash: hash ?? Self.hashNotKept)
            }
            return Self.isSet(slot, in: changed) ? .valid(hash: Self.hashNotKept) : nil
        }
        guard !added.isEmpty else { return nil }
        let found = addedSorted ? added.sortedIndex(of: id) != nil : added.contains(id)
        return found ? .valid(hash: Self.hashNotKept) : nil
    }

    /// The ids of every file, in no particular order.
    package var keys: some Sequence<RecordID> {
        cleanIDs.lazy.map { $0 }.joined(with: added).joined(with: notCleanKeptByID)
    }

    /// The ids of the files that are not clean, except the added ones a scan
    /// without hashes keeps in `added`: changed, invalid, or kept with a hash.
    var notCleanKeptByID: some Sequence<RecordID> {
        let base = self.base, changed = self.changed
        let changedIDs = (0..<(changedCount > 0 ? base.slotCount : 0)).lazy.filter { Self.isSet($0, in: changed) }.map { base.id(atSlot: $0) }
        return changedIDs.joined(with: others.keys).joined(with: digests.keys)
    }

    /// The ids of the files whose content is their base's.
    var cleanIDs: some Sequence<RecordID> {
        let base = self.base, clean = self.clean
        return (0..<base.slotCount).lazy.filter { Self.isSet($0, in: clean) }.map { base.id(atSlot: $0) }
    }

    /// True when the file of `id` is known to hold its base content.
    func isClean(_ slot: Int) -> Bool { Self.isSet(slot, in: clean) }

    private static func isSet(_ slot: Int, in bits: [UInt64]) -> Bool {
        slot >> 6 < bits.count && bits[slot >> 6] & (1 << UInt64(slot & 63)) != 0
    }

    /// Records the file of `id` (each id once, but for `others`, which a
    /// later state replaces). `baseSlot` is its base entry's slot; `clean`
    /// says the file is valid with the base's content hash (the caller
    /// compared them).
    mutating func set(_ id: RecordID, _ state: LocalFileState, baseSlot: Int?, clean isClean: Bool) {
        if isClean, let slot = baseSlot {
            if !self.isClean(slot) {
                clean[slot >> 6] |= 1 << UInt64(slot & 63)
                cleanCount += 1
            }
        } else if case .valid(let hash) = state {
            if !keepsHashes, let slot = baseSlot {
                if !Self.isSet(slot, in: changed) {
                    changed[slot >> 6] |= 1 << UInt64(slot & 63)
                    changedCount += 1
                }
            } else if !keepsHashes {
                added.append(id)
                addedSorted = added.count == 1
            } else if let digest = ContentDigest(contentHash: hash) {
                digests[id] = digest
                others[id] = nil
            } else {
                others[id] = state
                digests[id] = nil
            }
        } else {
            others[id] = state
            digests[id] = nil
        }
    }

    /// Lets go of the clean files' hashes, which are their base entries':
    /// a pull about to record new hashes into the base would otherwise copy
    /// every hash (32 bytes a record) while it applies. The caller then gives
    /// a clean file's hash (`state(of:cleanHash:)`) from the base as it is:
    /// a record's entry changes only when its own step is applied, after its
    /// state was read, so it is still the one the scan compared with.
    mutating func dropCleanHashes() {
        base.dropHashes()
    }

    /// Forgets the added files (a scan without hashes): push, once it has
    /// planned their writes, so that it does not hold their ids twice. Their
    /// state reads nil from then on.
    mutating func forgetAdded() {
        added = PackedRecordIDs()
        addedSorted = true
    }

    /// Ends the scan: sorts the added ids, for lookups and for push's walk in id order.
    mutating func finish() {
        guard !addedSorted else { return }
        added.sort()
        addedSorted = true
    }
}

private extension Sequence {
    /// This sequence, then `other`.
    func joined<Other: Sequence>(with other: Other) -> some Sequence<Element> where Other.Element == Element {
        [AnySequence(self), AnySequence(other)].joined()
    }
}
