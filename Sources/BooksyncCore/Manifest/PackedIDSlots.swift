/// Record ids numbered by slot, found by id: the key half of the compact
/// maps that hold one entry per record of a collection (`ManifestEntries`,
/// a remote listing's revisions), about 20 bytes an id where a
/// `[RecordID: …]` dictionary spends about 50 before its values.
///
/// - the ids' UTF-8 bytes, back to back in one buffer, and where each ends (4 bytes);
/// - whether each slot is live (a removed id keeps its dead slot);
/// - a 4-byte slot number a bucket in an open-addressing table, hashed with
///   `Hasher` (randomly seeded, so ids chosen by whoever wrote a cloned
///   state file or named remote documents cannot make every lookup collide).
///
/// The owner keeps its values in arrays indexed by the same slots.
package struct PackedIDSlots: Sendable {
    private var idBytes: [UInt8] = []
    /// Where each slot's id ends in `idBytes`; it starts where the previous one ends.
    private var idEnds: [UInt32] = []
    /// False for the slot of a removed id (its bytes stay in `idBytes`).
    private var live: [Bool] = []
    /// Open addressing: slot number + 1, 0 for an empty bucket; a removed
    /// id keeps its bucket (its slot is dead), so probe chains stay intact.
    private var table: [UInt32] = []
    /// True while slots were added in strictly increasing id order (UTF-8 bytes).
    package private(set) var inIDOrder = true

    /// No slots.
    package init() {}

    /// Slot numbers run from 0 to `count`, dead ones included.
    package var count: Int { idEnds.count }

    /// Makes room for `n` ids without regrowing the table.
    package mutating func reserveCapacity(_ n: Int) {
        idBytes.reserveCapacity(n * 12)
        idEnds.reserveCapacity(n)
        live.reserveCapacity(n)
        if Self.tableSize(for: n) > table.count { rehash(size: Self.tableSize(for: n)) }
    }

    /// Whether `slot` holds a live id.
    package func isLive(_ slot: Int) -> Bool { live[slot] }

    /// The live slots, in slot order, found as they are walked.
    package var liveSlots: LiveSlots { LiveSlots(live: live) }

    /// The live slots as a sequence of their own: a `lazy.filter` is not
    /// `Sendable`, and asked to be, the type checker picked the eager
    /// `filter`, an array of every slot built at each manifest save.
    package struct LiveSlots: Sequence, IteratorProtocol, Sendable {
        fileprivate let live: [Bool]
        private var position = 0

        fileprivate init(live: [Bool]) { self.live = live }

        package mutating func next() -> Int? {
            while position < live.count {
                position += 1
                if live[position - 1] { return position - 1 }
            }
            return nil
        }
    }

    /// The id in `slot`.
    package func id(at slot: Int) -> RecordID {
        let text = idBytes.withUnsafeBufferPointer { String(decoding: span($0, slot), as: UTF8.self) }
        // Stored only from valid ids, so the bytes are a valid id.
        return RecordID(validated: text)
    }

    /// Whether the id in slot `a` sorts before the one in `b` (UTF-8 bytes).
    package func idLess(_ a: Int, _ b: Int) -> Bool {
        idBytes.withUnsafeBufferPointer { IDByteOrder.less(span($0, a), span($0, b)) }
    }

    /// The live slot of `id`, if it has one.
    package func find(_ id: RecordID) -> Int? {
        guard !table.isEmpty else { return nil }
        var raw = id.rawValue
        return raw.withUTF8 { key in
            idBytes.withUnsafeBufferPointer { b -> Int? in
                let mask = table.count - 1
                var bucket = bucketHash(key) & mask
                while true {
                    let stored = table[bucket]
                    if stored == 0 { return nil }
                    let slot = Int(stored) - 1
                    if IDByteOrder.equal(span(b, slot), key) { return live[slot] ? slot : nil }
                    bucket = (bucket + 1) & mask
                }
            }
        }
    }

    /// A new live slot for `id`, which has none; the owner appends its values.
    package mutating func append(_ id: RecordID) -> Int {
        if Self.tableSize(for: idEnds.count + 1) > table.count { rehash(size: Self.tableSize(for: idEnds.count + 1)) }
        let slot = idEnds.count
        var raw = id.rawValue
        raw.withUTF8 { bytes in
            if inIDOrder, slot > 0 {
                inIDOrder = idBytes.withUnsafeBufferPointer { IDByteOrder.less(span($0, slot - 1), bytes) }
            }
            idBytes.append(contentsOf: bytes)
        }
        idEnds.append(UInt32(idBytes.count))
        live.append(true)
        insertIntoTable(slot)
        return slot
    }

    /// Removes the id in `slot`; the slot stays, dead.
    package mutating func kill(_ slot: Int) {
        live[slot] = false
    }

    /// Where setting or removing an id lands (`place(_:present:)`).
    package enum Placement {
        /// Its live slot: the owner stores the new value there.
        case existing(Int)
        /// A new live slot: the owner appends room for its values, then stores.
        case appended(Int)
        /// Its slot, now dead: the owner forgets what it kept beside it.
        case removed(Int)
        /// A removal of an id without a slot: nothing to do.
        case absent
    }

    /// The slot a set (`present`) or a removal of `id` lands in, the way
    /// a dictionary's subscript setter would: the one map logic the owners
    /// share, each storing its own values.
    package mutating func place(_ id: RecordID, present: Bool) -> Placement {
        if let slot = find(id) {
            guard present else {
                kill(slot)
                return .removed(slot)
            }
            return .existing(slot)
        }
        return present ? .appended(append(id)) : .absent
    }

    private func span(_ b: UnsafeBufferPointer<UInt8>, _ slot: Int) -> UnsafeBufferPointer<UInt8> {
        let start = slot == 0 ? 0 : Int(idEnds[slot - 1])
        return UnsafeBufferPointer(rebasing: b[start..<Int(idEnds[slot])])
    }

    private static func tableSize(for slots: Int) -> Int {
        var size = 8
        while size * 3 < slots * 4 + 4 { size <<= 1 }  // load at most 3/4
        return size
    }

    private func bucketHash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return hasher.finalize()
    }

    /// Puts a slot in the table. A re-added id (removed, then set again) gets a
    /// new slot, which takes over the bucket of its dead one.
    private mutating func insertIntoTable(_ slot: Int) {
        let mask = table.count - 1
        let bucket = idBytes.withUnsafeBufferPointer { b -> Int in
            let key = span(b, slot)
            var bucket = bucketHash(key) & mask
            while table[bucket] != 0 {
                if IDByteOrder.equal(span(b, Int(table[bucket]) - 1), key) { break }
                bucket = (bucket + 1) & mask
            }
            return bucket
        }
        table[bucket] = UInt32(slot + 1)
    }

    private mutating func rehash(size: Int) {
        table = [UInt32](repeating: 0, count: size)
        for slot in 0..<idEnds.count where live[slot] { insertIntoTable(slot) }
    }
}
