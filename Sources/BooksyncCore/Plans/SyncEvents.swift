/// The events of a pull or push, in the order added: a collection of
/// `SyncEvent` that keeps a few bytes an event instead of 56.
///
/// A first push of a million records reports a million `created` events;
/// held as `SyncEvent`s they were a seventh of its memory. Here the ids are
/// packed (`PackedRecordIDs`) and the kinds without a payload, nearly all of
/// them, are a byte each; the others (a revision, a diagnostic, a merge)
/// are kept whole beside them.
public struct SyncEvents: RandomAccessCollection, Sendable, Equatable, ExpressibleByArrayLiteral {
    private var ids = PackedRecordIDs()
    /// Per event: 1 + the kind's index in `plainKinds`, or 0 when the kind is in `payloads`.
    private var codes: [UInt8] = []
    private var payloads: [Int: SyncEventKind] = [:]

    /// The kinds kept as one byte.
    private static let plainKinds: [SyncEventKind] = [
        .pulled(.write), .pulled(.delete), .pulled(.adopt), .pulled(.forget), .pulled(.keepLocal),
        .pushed(.create), .pushed(.adopt), .pushed(.forget), .remoteChangedSincePull, .changedDuringSync,
        .pulled(.leaveScope), .outsideScope,
    ]

    /// No events.
    public init() {}

    /// The events of an array literal.
    public init(arrayLiteral elements: SyncEvent...) {
        self.init()
        append(contentsOf: elements)
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// The count.
    public var endIndex: Int { codes.count }

    /// The event at `index`.
    public subscript(index: Int) -> SyncEvent {
        SyncEvent(id: ids[index], kind: kind(at: index))
    }

    /// The events in order, each id decoded once (`PackedRecordIDs.Iterator`).
    public struct Iterator: IteratorProtocol {
        private let events: SyncEvents
        private var ids: PackedRecordIDs.Iterator
        private var index = 0

        init(_ events: SyncEvents) {
            self.events = events
            ids = events.ids.makeIterator()
        }

        /// The next event; nil after the last.
        public mutating func next() -> SyncEvent? {
            guard let id = ids.next() else { return nil }
            defer { index += 1 }
            return SyncEvent(id: id, kind: events.kind(at: index))
        }
    }

    /// An iterator that decodes each id once.
    public func makeIterator() -> Iterator { Iterator(self) }

    private func kind(at index: Int) -> SyncEventKind {
        let code = Int(codes[index])
        return code == 0 ? payloads[index]! : Self.plainKinds[code - 1]
    }

    /// The events of `ids`, each with the kind `kinds` holds for it.
    package init(ids: PackedRecordIDs, kinds: some Sequence<SyncEventKind>) {
        self.ids = ids
        codes.reserveCapacity(ids.count)
        for kind in kinds { appendKind(kind) }
        precondition(codes.count == ids.count, "one kind an id")
    }

    /// Appends `event`.
    package mutating func append(_ event: SyncEvent) {
        ids.append(event.id)
        appendKind(event.kind)
    }

    private mutating func appendKind(_ kind: SyncEventKind) {
        if let plain = Self.plainKinds.firstIndex(of: kind) {
            codes.append(UInt8(plain + 1))
        } else {
            payloads[codes.count] = kind
            codes.append(0)
        }
    }

    /// Appends `events`, in order.
    package mutating func append(contentsOf events: some Sequence<SyncEvent>) {
        for event in events { append(event) }
    }

    /// Appends `events`, in order.
    package static func += (lhs: inout SyncEvents, rhs: some Sequence<SyncEvent>) {
        lhs.append(contentsOf: rhs)
    }

    /// Sorts the events by record id; events of the same record keep their order.
    package mutating func sortByID() {
        guard let order = ids.sort() else { return }
        codes = order.map { codes[Int($0)] }
        var moved: [Int: SyncEventKind] = [:]
        for (new, old) in order.enumerated() where codes[new] == 0 { moved[new] = payloads[Int(old)] }
        payloads = moved
    }

    public static func == (lhs: SyncEvents, rhs: SyncEvents) -> Bool {
        lhs.elementsEqual(rhs)
    }
}
