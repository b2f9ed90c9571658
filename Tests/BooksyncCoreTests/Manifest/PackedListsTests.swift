import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// The packed lists (`PackedRecordIDs`, `SyncEvents`) behave as the arrays
/// they replace: same elements, same order, byte order of ids when sorted.
@Suite struct PackedListsTests {
    /// Ids that sort differently by bytes than by Swift's `String` order, and
    /// repeat, so order and stability are both tested.
    static let ids: [RecordID] = ["b", "a", "é", "e\u{301}", "Z", "a", "book-10", "book-9", "dune", "%", "b"].map { try! RecordID($0) }
        + [RecordID(validated: "dune/reviews/r1")]

    @Test func packedIDsKeepEveryIDInOrder() {
        // Past several restarts, with prefixes shared and not, and lengths past one LEB128 byte.
        let long = String(repeating: "x", count: 200)
        let ids = (0..<5).flatMap { _ in Self.ids } + [long, long + "y", long, "x", long + "z"].map { try! RecordID($0) }
        var packed = PackedRecordIDs()
        for id in ids { packed.append(id) }
        #expect(packed.count == ids.count)
        #expect(Array(packed) == ids)
        #expect(packed.indices.map { packed[$0] } == ids)
        #expect(packed.map(\.encodedName) == ids.map(\.encodedName))
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func sortingGivesByteOrderAndThePermutation(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let ids = (0..<500).map { _ in Self.ids[random.below(Self.ids.count)] }
        var packed = PackedRecordIDs()
        for id in ids { packed.append(id) }
        let order = packed.sort() ?? Array(0..<UInt32(ids.count))
        #expect(Array(packed) == ids.sorted())
        #expect(packed.sort() == nil)
        #expect(order.map { ids[Int($0)] } == Array(packed))
        // Stable: equal ids keep their original order.
        for i in 1..<order.count where packed[i] == packed[i - 1] { #expect(order[i - 1] < order[i]) }
        for id in Self.ids { #expect(packed.sortedIndex(of: id).map { packed[$0] } == id) }
        #expect(packed.sortedIndex(of: try! RecordID("not-there")) == nil)
    }

    /// The order noted while appending is exact: ids in order (repeats
    /// included) are left as they are, and one swap anywhere (across a
    /// restart, or an id after one it is a prefix of) is sorted.
    @Test func oneSwapAnywhereIsFound() {
        let inOrder = (["a", "a", "ab", "abc", "abd", "b", "b0", "c"] + (0..<30).map { "d-" + String($0 + 10) }).map { try! RecordID($0) }
        var packed = PackedRecordIDs()
        for id in inOrder { packed.append(id) }
        #expect(packed.sort() == nil && Array(packed) == inOrder)
        for i in 0..<(inOrder.count - 1) where inOrder[i] != inOrder[i + 1] {
            var ids = inOrder
            ids.swapAt(i, i + 1)
            var swapped = PackedRecordIDs()
            for id in ids { swapped.append(id) }
            #expect(swapped.sort() != nil && Array(swapped) == inOrder, "swap at \(i)")
        }
    }

    @Test func sortedIndexOfAnEmptyListIsNil() {
        var empty = PackedRecordIDs()
        empty.sort()
        #expect(empty.isEmpty && empty.sortedIndex(of: Self.ids[0]) == nil)
    }

    /// Every kind, the one-byte ones and those kept whole.
    static let kinds: [SyncEventKind] = [
        .pulled(.write), .pulled(.delete), .pulled(.adopt), .pulled(.forget), .pulled(.keepLocal), .pulled(.conflict(.bothAdded)),
        .pushed(.create), .pushed(.update(baseRevision: "r1")), .pushed(.delete(baseRevision: "r2")), .pushed(.adopt), .pushed(.forget),
        .conflict(.remoteContentUnknown), .remoteChangedSincePull, .invalidLocal([RecordDiagnostic(message: "x: bad")]),
        .invalidRemote([RecordDiagnostic(message: "y: bad")]), .rejected("no"), .changedDuringSync,
    ]

    @Test(arguments: [1, 2] as [UInt64])
    func eventsReadBackAsAppendedAndSortStablyByID(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let events = (0..<400).map { _ in SyncEvent(id: Self.ids[random.below(Self.ids.count)], kind: Self.kinds[random.below(Self.kinds.count)]) }
        var packed = SyncEvents()
        packed += events.prefix(150)
        for event in events.dropFirst(150) { packed.append(event) }
        #expect(Array(packed) == events)
        var same = SyncEvents()
        same += events
        #expect(packed == same)
        same.append(events[0])
        #expect(packed != same)
        packed.sortByID()
        // The standard library's sort is not promised to be stable; this is the stable order.
        let expected = events.enumerated().sorted { ($0.element.id, $0.offset) < ($1.element.id, $1.offset) }.map(\.element)
        #expect(Array(packed) == expected)
    }
}
