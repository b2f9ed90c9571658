import BooksyncCore
import Synchronization

/// Two targets' documents compared by content (`booksync compare A B`):
/// which records only one holds, which both hold with different content
/// (field by field), how many are identical, and which documents cannot be
/// compared. Read only: no file, base or lock of any collection is touched.
///
/// Same content means the same `CanonicalRecord.hash`; revisions say nothing
/// here, as the two targets share no base.
public struct TargetComparison: Sendable, Equatable {
    /// Which of the two targets: `a` is the first named, `b` the second.
    public enum Side: String, Sendable, Equatable {
        /// The first target.
        case a
        /// The second target.
        case b
    }

    /// One field whose value differs, at any depth of nested maps; nil where
    /// the field is absent on that side.
    public struct Field: Sendable, Equatable {
        /// Where the field is: a top-level name, or map keys below one.
        public let path: FieldPath
        /// Its value on the first target.
        public let a: Value?
        /// Its value on the second target.
        public let b: Value?

        /// A difference at `path`.
        public init(path: FieldPath, a: Value?, b: Value?) {
            self.path = path
            self.a = a
            self.b = b
        }

        /// The path in Firestore's dotted notation (`stats.rating`, see `FieldPath`).
        public var name: String { path.description }
    }

    /// A record both targets hold, with different content.
    public struct Difference: Sendable, Equatable {
        /// The record.
        public let id: RecordID
        /// Every field that differs, sorted by path (maps compared key by key).
        public let fields: [Field]

        /// A differing record; see the properties.
        public init(id: RecordID, fields: [Field]) {
            self.id = id
            self.fields = fields
        }
    }

    /// A document on one side that cannot be a record file, so its record is
    /// not compared (reported on each side where it is invalid).
    public struct InvalidDocument: Sendable, Equatable {
        /// The document's record id.
        public let id: RecordID
        /// Where it is invalid.
        public let side: Side
        /// Every problem found.
        public let problems: [RecordDiagnostic]

        /// An invalid document; see the properties.
        public init(id: RecordID, side: Side, problems: [RecordDiagnostic]) {
            self.id = id
            self.side = side
            self.problems = problems
        }
    }

    /// A document on one side whose name cannot be a record id (listed only
    /// when no pathspec narrows the comparison).
    public struct UnusableDocument: Sendable, Equatable {
        /// Where it is.
        public let side: Side
        /// Its name and why it is no record id.
        public let document: UnusableRemoteDocument

        /// An unusable document; see the properties.
        public init(side: Side, document: UnusableRemoteDocument) {
            self.side = side
            self.document = document
        }
    }

    /// The documents read on one target, each one billed read on Firestore.
    public struct Reads: Sendable, Equatable {
        /// Documents read to compare: every document a listing carried (in
        /// scope or not), or each id asked for by name (found or not).
        public var compared = 0
        /// Ids read again by name to show the fields of differing records
        /// (found or not); only the first target's are read again.
        public var shown = 0

        /// Counts (zero by default).
        public init(compared: Int = 0, shown: Int = 0) {
            self.compared = compared
            self.shown = shown
        }

        /// Both counts together.
        public var total: Int { compared + shown }
    }

    /// Records only the first target holds, in id order.
    public var onlyA: [RecordID] = []
    /// Records only the second target holds, in id order.
    public var onlyB: [RecordID] = []
    /// Records both hold with different content, in id order.
    public var different: [Difference] = []
    /// Documents that cannot be records, by id, then side.
    public var invalid: [InvalidDocument] = []
    /// Documents whose names cannot be record ids.
    public var unusable: [UnusableDocument] = []
    /// How many records both hold with the same content (not listed).
    public var identical = 0
    /// What was read on the first target.
    public var readsA = Reads()
    /// What was read on the second target.
    public var readsB = Reads()

    /// An empty comparison, filled in by `compare(_:_:scope:progress:)`.
    public init() {}

    /// True when the two targets hold the same records with the same content,
    /// and nothing is invalid or unusable on either side.
    public var isSame: Bool {
        onlyA.isEmpty && onlyB.isEmpty && different.isEmpty && invalid.isEmpty && unusable.isEmpty
    }
}

extension TargetComparison {
    /// Compares the documents of `a` and `b` in `scope` by content.
    ///
    /// Reads: ids named one by one are fetched by name on both sides (one
    /// read per id). Otherwise `a` is listed with bodies keeping only each
    /// record's hash, then `b` is listed with bodies, keeping only the bodies
    /// that differ from `a`'s; finally the bodies of those records on `a` are
    /// fetched by name to show their fields (one read each). Memory holds an
    /// id and hash per record of `a`, and the bodies of differing records.
    /// A folder or glob scope lists only its id ranges where the remotes can.
    ///
    /// A record that changes on `a` between its listing and its fetch is
    /// compared as fetched: gone, it is only on `b`; now equal, identical.
    /// - Throws: `BooksyncError.remote` (or `.interrupted` when cancelled).
    @_spi(Remote)
    public static func compare(_ a: any RemoteCollection, _ b: any RemoteCollection, scope: RecordScope = .everything,
                               progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(BooksyncError) -> TargetComparison {
        if let ids = scope.namedIDs {
            return try await compareNamed(Array(Set(ids)).sorted(), a, b, progress: progress)
        }
        let first = Mutex(Tally())
        try await list(a, scope: scope, progress: progress) { listing, documents in
            first.withLock { tally in
                tally.read += listing.revisions.count + listing.unusable.count
                if scope.isEverything { tally.unusable += listing.unusable }
                for (id, document) in documents where scope.contains(id) { tally.seen[id] = Seen(document.content) }
            }
        }
        let second = Mutex(Tally())
        try await list(b, scope: scope, progress: progress) { listing, documents in
            // Each of `a`'s records is marked once found here (an id only on
            // `b` too), so a document listed twice is compared once.
            let inScope = documents.filter { scope.contains($0.key) }.sorted { $0.key < $1.key }
            let earlier = first.withLock { tally in inScope.map { tally.seen.updateValue(.matched, forKey: $0.key) } }
            second.withLock { tally in
                tally.read += listing.revisions.count + listing.unusable.count
                if scope.isEverything { tally.unusable += listing.unusable }
                for ((id, document), other) in zip(inScope, earlier) where other != .matched {
                    tally.classify(id, a: other, b: document.content)
                }
            }
        }
        var result = second.withLock { $0.result }
        let (aTally, bTally) = (first.withLock { $0 }, second.withLock { $0 })
        result.readsA.compared = aTally.read
        result.readsB.compared = bTally.read
        result.unusable = aTally.unusable.map { UnusableDocument(side: .a, document: $0) } + bTally.unusable.map { UnusableDocument(side: .b, document: $0) }
        for (id, seen) in aTally.seen {
            switch seen {
            case .record: result.onlyA.append(id)
            case .invalid(let problems): result.invalid.append(InvalidDocument(id: id, side: .a, problems: problems))
            case .matched: break
            }
        }
        // The fields of differing records: `b`'s bodies were kept, `a`'s are read again.
        let pending = bTally.differing
        result.readsA.shown = pending.count
        let fetched = try await fetch(a, ids: pending.keys.sorted(), progress: progress)
        for (id, record) in pending {
            switch fetched[id]?.content {
            case nil: result.onlyB.append(id)
            case .invalid(let problems)?: result.invalid.append(InvalidDocument(id: id, side: .a, problems: problems))
            case .record(let now)?: result.add(id, a: now, b: record)
            }
        }
        result.sort()
        return result
    }

    /// Ids named one by one: one read of each on both sides, no listing.
    private static func compareNamed(_ ids: [RecordID], _ a: any RemoteCollection, _ b: any RemoteCollection,
                                     progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> TargetComparison {
        let onA = try await fetch(a, ids: ids, progress: progress)
        let onB = try await fetch(b, ids: ids, progress: progress)
        var result = TargetComparison()
        result.readsA.compared = ids.count
        result.readsB.compared = ids.count
        for id in ids {
            switch (onA[id]?.content, onB[id]?.content) {
            case (nil, nil): break
            case (.record?, nil): result.onlyA.append(id)
            case (nil, .record?): result.onlyB.append(id)
            case (.record(let x)?, .record(let y)?): result.add(id, a: x, b: y)
            case (let x, let y):
                if case .invalid(let problems)? = x { result.invalid.append(InvalidDocument(id: id, side: .a, problems: problems)) }
                if case .invalid(let problems)? = y { result.invalid.append(InvalidDocument(id: id, side: .b, problems: problems)) }
            }
        }
        result.sort()
        return result
    }

    /// Counts `id` as identical, or as different field by field.
    private mutating func add(_ id: RecordID, a: CanonicalRecord, b: CanonicalRecord) {
        if a.hash == b.hash {
            identical += 1
        } else {
            let fields = SavedPlan.FieldChange.between(a.fields, b.fields).map { Field(path: $0.path, a: $0.before, b: $0.after) }
            different.append(Difference(id: id, fields: fields))
        }
    }

    private mutating func sort() {
        onlyA.sort()
        onlyB.sort()
        different.sort { $0.id < $1.id }
        invalid.sort { ($0.id, $0.side == .a ? 0 : 1) < ($1.id, $1.side == .a ? 0 : 1) }
    }

    /// Every document of `remote` in `scope` with its body, by id range when a pathspec allows.
    private static func list(_ remote: any RemoteCollection, scope: RecordScope, progress: @escaping @Sendable (SyncProgress) -> Void,
                             batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void) async throws(BooksyncError) {
        let counter = ProgressCounter(phase: "reading", total: nil, report: progress)
        do {
            if let prefixes = scope.listingPrefixes {
                try await remote.listDocuments(prefixes: prefixes, batch: batch) { counter.add($0) }
            } else {
                try await remote.listDocuments(batch: batch) { counter.add($0) }
            }
        } catch {
            throw .remoteFailure(error)
        }
    }

    private static func fetch(_ remote: any RemoteCollection, ids: [RecordID],
                              progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> [RecordID: RemoteDocument] {
        guard !ids.isEmpty else { return [:] }
        let counter = ProgressCounter(phase: "downloading", total: ids.count, report: progress)
        do {
            return try await remote.fetch(ids) { counter.add($0) }
        } catch {
            throw .remoteFailure(error)
        }
    }
}

/// What one side's listing left: on the first target, a hash per record;
/// on the second, the comparison so far and the bodies of its records that
/// differ from the first's.
private struct Tally: Sendable {
    /// Documents the listing carried, in scope or not.
    var read = 0
    var seen: [RecordID: Seen] = [:]
    var unusable: [UnusableRemoteDocument] = []
    var result = TargetComparison()
    var differing: [RecordID: CanonicalRecord] = [:]

    /// Sorts the second target's document `b` against what the first's
    /// listing left of it (nil: not on the first target).
    mutating func classify(_ id: RecordID, a: Seen?, b: RemoteDocument.Content) {
        if case .invalid(let problems)? = a { result.invalid.append(.init(id: id, side: .a, problems: problems)) }
        switch (a, b) {
        case (_, .invalid(let problems)):
            result.invalid.append(.init(id: id, side: .b, problems: problems))
        case (nil, .record):
            result.onlyB.append(id)
        case (.record(let hash)?, .record(let record)):
            if hash == record.hash { result.identical += 1 } else { differing[id] = record }
        case (.invalid?, .record), (.matched?, .record):
            break
        }
    }
}

/// A record of the first target as its listing left it.
private enum Seen: Sendable, Equatable {
    /// A record with this content.
    case record(ContentHash)
    /// A document that cannot be a record.
    case invalid([RecordDiagnostic])
    /// Found by the second target's listing, which compares it (or an id
    /// only the second target holds).
    case matched

    init(_ content: RemoteDocument.Content) {
        switch content {
        case .record(let record): self = .record(record.hash)
        case .invalid(let problems): self = .invalid(problems)
        }
    }
}
