/// A list of record ids in one byte buffer, each stored as the length of the
/// prefix it shares with the id before it and the rest of its bytes (front
/// coding, as in LevelDB's blocks): where a `[RecordID]` takes 32 bytes an id
/// (two strings, the longer ones on the heap as well), ids appended in order
/// take a few bytes each.
///
/// For the lists that grow with the collection while a command runs: the
/// records a first push creates, the events it reports. A million ids like
/// `book-000123`, in order, take about 4 MB here instead of 32.
///
/// Every `restartInterval`-th id is stored whole (a restart), so reading id
/// `i` decodes at most that many entries, and a sorted list is searched by
/// bisecting its restarts.
package struct PackedRecordIDs: RandomAccessCollection, Sendable, Equatable {
    /// Entries: shared-prefix length and suffix length (LEB128), then the suffix.
    private var bytes: [UInt8] = []
    /// Where each restart's entry starts in `bytes`.
    private var restarts: [UInt32] = []
    /// The last id's bytes, which the next one is coded against.
    private var last: [UInt8] = []
    /// How many ids there are.
    package private(set) var count = 0
    /// Whether every id was appended after one that does not sort after it:
    /// then `sort()` has nothing to do and does not decode the list.
    private var inOrder = true

    /// Ids stored between two stored whole.
    static let restartInterval = 16

    /// No ids.
    package init() {}

    /// 0.
    package var startIndex: Int { 0 }
    /// The count.
    package var endIndex: Int { count }

    /// The id at `index` (decodes from its restart: for a walk, iterate instead).
    package subscript(index: Int) -> RecordID {
        precondition(index >= 0 && index < count, "index out of range")
        var cursor = Cursor(restart: index / Self.restartInterval, in: self)
        for _ in 0..<(index % Self.restartInterval) { cursor.advance(in: bytes) }
        return cursor.id
    }

    /// Decodes the ids in order, one entry each.
    package struct Iterator: IteratorProtocol {
        private let list: PackedRecordIDs
        private var cursor: Cursor?
        private var position = 0

        init(_ list: PackedRecordIDs) { self.list = list }

        /// The next id; nil after the last.
        package mutating func next() -> RecordID? {
            guard position < list.count else { return nil }
            if cursor == nil { cursor = Cursor(restart: 0, in: list) } else { cursor!.advance(in: list.bytes) }
            position += 1
            return cursor!.id
        }
    }

    /// An iterator that decodes each id once.
    package func makeIterator() -> Iterator { Iterator(self) }

    /// The ids of `range`, in order, each decoded once (a slice would decode
    /// each from its restart).
    package func ids(in range: Range<Int>) -> [RecordID] {
        guard !range.isEmpty else { return [] }
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range out of bounds")
        var cursor = Cursor(restart: range.lowerBound / Self.restartInterval, in: self)
        for _ in 0..<(range.lowerBound % Self.restartInterval) { cursor.advance(in: bytes) }
        var result = [cursor.id]
        result.reserveCapacity(range.count)
        for _ in 1..<range.count {
            cursor.advance(in: bytes)
            result.append(cursor.id)
        }
        return result
    }

    /// Appends `id`.
    package mutating func append(_ id: RecordID) {
        var raw = id.rawValue
        raw.withUTF8 { append(bytes: $0) }
    }

    private mutating func append(bytes key: UnsafeBufferPointer<UInt8>) {
        var common = 0
        let limit = Swift.min(last.count, key.count)
        while common < limit, last[common] == key[common] { common += 1 }
        if inOrder, count > 0 {
            // Not before the last id: the first differing byte is larger, or the last is a prefix.
            inOrder = common < limit ? key[common] > last[common] : key.count >= last.count
        }
        var shared = common
        if count % Self.restartInterval == 0 {
            restarts.append(UInt32(bytes.count))
            shared = 0
        }
        Self.appendLEB128(shared, to: &bytes)
        Self.appendLEB128(key.count - shared, to: &bytes)
        bytes.append(contentsOf: key[shared...])
        last.removeAll(keepingCapacity: true)
        last.append(contentsOf: key)
        count += 1
    }

    /// Makes room for `count` more ids of about `bytesEach` coded bytes.
    package mutating func reserveCapacity(_ count: Int, bytesEach: Int = 4) {
        bytes.reserveCapacity(bytes.count + count * bytesEach)
        restarts.reserveCapacity(restarts.count + count / Self.restartInterval + 1)
    }

    /// Sorts the ids by `RecordID` order (their UTF-8 bytes), equal ids
    /// keeping their order.
    /// - Returns: nil when they already were in order (nothing was moved);
    ///   else the permutation applied: the new position `i` holds the id that
    ///   was at `result[i]`, so lists kept alongside can follow.
    @discardableResult
    package mutating func sort() -> [UInt32]? {
        if inOrder { return nil }
        // The ids whole, back to back, for the comparisons (freed when sorted).
        var flat: [UInt8] = []
        var ends: [UInt32] = []
        ends.reserveCapacity(count)
        var cursor = Cursor(restart: 0, in: self)  // count > 1: not in order
        for index in 0..<count {
            if index > 0 { cursor.advance(in: bytes) }
            flat.append(contentsOf: cursor.key)
            ends.append(UInt32(flat.count))
        }
        func span(_ i: Int) -> Range<Int> { (i == 0 ? 0 : Int(ends[i - 1]))..<Int(ends[i]) }
        var order = (0..<UInt32(count)).map { $0 }
        flat.withUnsafeBufferPointer { b in
            order.sort { i, j in
                let x = b[span(Int(i))], y = b[span(Int(j))]
                return IDByteOrder.less(x, y) || (!IDByteOrder.less(y, x) && i < j)
            }
        }
        var sorted = PackedRecordIDs()
        sorted.reserveCapacity(count)
        flat.withUnsafeBufferPointer { b in
            for i in order { sorted.append(bytes: UnsafeBufferPointer(rebasing: b[span(Int(i))])) }
        }
        self = sorted
        return order
    }

    /// The position of `id` in a list sorted by `sort()`; nil when absent.
    package func sortedIndex(of id: RecordID) -> Int? {
        var raw = id.rawValue
        return raw.withUTF8 { key -> Int? in
            // The last restart whose id is not after `key`, then a walk of its block.
            var low = 0, high = restarts.count
            while low < high {
                let mid = (low + high) / 2
                let before = Cursor(restart: mid, in: self).key.withUnsafeBufferPointer { IDByteOrder.less(key, $0) }
                if before { high = mid } else { low = mid + 1 }
            }
            guard low > 0 else { return nil }
            let block = low - 1
            var cursor = Cursor(restart: block, in: self)
            var index = block * Self.restartInterval
            while true {
                let found: Int?? = cursor.key.withUnsafeBufferPointer { current in
                    // The first id not before `key`: it is `key`, or `key` is absent.
                    guard !IDByteOrder.less(current, key) else { return .none }
                    return .some(IDByteOrder.less(key, current) ? nil : index)
                }
                if let found { return found }
                index += 1
                guard index < count, index % Self.restartInterval != 0 else { return nil }
                cursor.advance(in: bytes)
            }
        }
    }

    /// A decoding position: the id of one entry, and where the next begins.
    fileprivate struct Cursor {
        var key: [UInt8] = []
        var offset: Int

        init(restart: Int, in list: PackedRecordIDs) {
            offset = Int(list.restarts[restart])
            advance(in: list.bytes)
        }

        /// Decodes the entry at `offset` onto the previous id.
        mutating func advance(in bytes: [UInt8]) {
            let shared = PackedRecordIDs.readLEB128(bytes, at: &offset)
            let suffix = PackedRecordIDs.readLEB128(bytes, at: &offset)
            key.removeSubrange(shared...)
            key.append(contentsOf: bytes[offset..<offset + suffix])
            offset += suffix
        }

        // Stored only from valid ids, so the bytes are a valid id.
        var id: RecordID { RecordID(validated: String(decoding: key, as: UTF8.self)) }
    }

    private static func appendLEB128(_ value: Int, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    fileprivate static func readLEB128(_ bytes: [UInt8], at offset: inout Int) -> Int {
        var value = 0, shift = 0
        while true {
            let byte = bytes[offset]
            offset += 1
            value |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

}
