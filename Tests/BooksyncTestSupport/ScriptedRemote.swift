import Synchronization
import BooksyncCore
@_spi(Remote) import BooksyncKit

/// An in-memory remote for the engine's pipeline tests: it holds documents
/// (listed and fetched as Firestore would), accepts writes after `delay`
/// (revision `r1`), and can refuse chunks or fail a listing part-way, so tests
/// can pin down what the base holds after each kind of failure.
package final class ScriptedRemote: RemoteCollection {
    /// Write chunks whose first id is in here are refused at once.
    package let failing: Set<String>
    package let delay: Duration
    /// The ids of every write chunk received, in order of arrival.
    package let chunks = Mutex<[[String]]>([])
    /// The documents listed and fetched (writes do not change them).
    package let documents: Mutex<[RecordID: RemoteDocument]>
    /// The ids of every fetch, in order: which bodies were read (each a billed read).
    package let fetches = Mutex<[[RecordID]]>([])
    /// Documents per `listDocuments` answer (a first pull).
    package let listingBatch: Int
    /// When set, `listDocuments` fails after this many answers.
    package let failListingAfter: Int?
    /// Runs in every fetch before it answers: a test edits local files here,
    /// as a user would while booksync works.
    package let duringFetch: @Sendable () -> Void
    /// Documents deleted by someone else between the listing and the fetch of
    /// their bodies: listed, then gone when fetched.
    package let vanishing: Set<RecordID>
    /// When set, the listing's delay passes on this clock instead of the real one.
    package let clock: VirtualClock?
    /// Whether the listing waits (up to 5 minutes of real time) until the remote's
    /// count was asked before its first answer, so the total is known by its
    /// later answers whatever the scheduler does.
    package let waitsForCount: Bool
    package var displayName: String { "scripted" }

    /// A remote holding `documents`; see the properties for the rest.
    package init(documents: [RemoteDocument] = [], failing: Set<String> = [], delay: Duration = .zero,
                listingBatch: Int = 100, failListingAfter: Int? = nil, vanishing: Set<RecordID> = [],
                clock: VirtualClock? = nil, waitsForCount: Bool = false, duringFetch: @escaping @Sendable () -> Void = {}) {
        self.clock = clock
        self.waitsForCount = waitsForCount
        self.documents = Mutex(Dictionary(uniqueKeysWithValues: documents.map { ($0.id, $0) }))
        self.failing = failing
        self.delay = delay
        self.listingBatch = listingBatch
        self.failListingAfter = failListingAfter
        self.duringFetch = duringFetch
        self.vanishing = vanishing
    }

    /// The error `listDocuments` fails with after `failListingAfter` answers.
    package static let listingFailure = RemoteError.unreachable(endpoint: "scripted", detail: "connection reset by the test", attempts: 1)

    package func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
        let revisions = documents.withLock { $0.mapValues(\.revision) }
        progress(revisions.count)
        return RemoteListing(revisions: RemoteRevisions(revisions))
    }

    package func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                              progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
        let all = documents.withLock { $0.values.sorted { $0.id < $1.id } }
        let deadline = ContinuousClock.now + .seconds(300)
        while waitsForCount, countRequests.withLock({ $0 == 0 }), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        for (answer, start) in stride(from: 0, to: all.count, by: listingBatch).enumerated() {
            if let failListingAfter, answer >= failListingAfter { throw Self.listingFailure }
            let page = all[start..<min(start + listingBatch, all.count)]
            batch(RemoteListing(revisions: RemoteRevisions(page.map { (key: $0.id, value: $0.revision) })),
                  Dictionary(uniqueKeysWithValues: page.map { ($0.id, $0) }))
            progress(page.count)
            if let clock {
                clock.advance(by: delay)
                await Task.yield()
            } else {
                try? await Task.sleep(for: delay)
            }
        }
    }

    /// How many times `documentCount` was asked (each costs billed reads on Firestore).
    package let countRequests = Mutex(0)

    /// The documents held, as Firestore's `count()` would say.
    package func documentCount() async throws(RemoteError) -> Int? {
        countRequests.withLock { $0 += 1 }
        return documents.withLock { $0.count }
    }

    package func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument] {
        fetches.withLock { $0.append(ids) }
        duringFetch()
        let found = documents.withLock { documents in
            for id in vanishing { documents[id] = nil }
            return ids.compactMap { documents[$0] }
        }
        progress(found.count)
        return Dictionary(uniqueKeysWithValues: found.map { ($0.id, $0) })
    }

    package func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        let ids = writes.map(\.id.rawValue)
        chunks.withLock { $0.append(ids) }
        if let first = ids.first, failing.contains(first) {
            throw .rejected(during: "write \(ids.count) documents", status: 400, code: "INVALID_ARGUMENT", message: "refused by the test")
        }
        try? await Task.sleep(for: delay)
        progress(writes.count)
        return Dictionary(uniqueKeysWithValues: writes.map { ($0.id, WriteOutcome.written(revision: "r1")) })
    }
}
