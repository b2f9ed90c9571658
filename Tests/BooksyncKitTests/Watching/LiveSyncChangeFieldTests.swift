import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The live sync's polls with a change field, on a virtual clock: a base
/// forgotten under the watch (`booksync remote forget origin` while a poll's
/// query is on its way) costs one listing of every name, and the polls go on
/// at their interval, since that listing recorded a change mark again.
@Suite(.hangGuard) struct LiveSyncChangeFieldTests {
    /// A remote with a change field: every document's change time is its
    /// revision, and a listing's read time is the virtual clock's.
    final class ChangeFieldRemote: RemoteCollection {
        let documents: Mutex<[RecordID: RemoteDocument]>
        /// Listings of every name, with or without bodies (a base forgotten is read like a first pull).
        let listings = Mutex(0)
        /// Runs once, inside the first change query (while it is "on the network").
        let duringFirstQuery: Mutex<(@Sendable () -> Void)?> = Mutex(nil)
        let clock: VirtualClock
        var displayName: String { "memory with a change field" }

        init(_ documents: [RemoteDocument], clock: VirtualClock) {
            self.documents = Mutex(Dictionary(uniqueKeysWithValues: documents.map { ($0.id, $0) }))
            self.clock = clock
        }

        /// 2030-01-01 plus the virtual time, as the server writes times.
        func serverTime() -> String {
            let micros = clock.now.components.seconds * 1_000_000 + clock.now.components.attoseconds / 1_000_000_000_000
            return Timestamp(microsecondsSinceEpoch: 1_893_456_000_000_000 + micros).rfc3339
        }

        func appWrites(_ record: CanonicalRecord) {
            let time = serverTime()
            documents.withLock { $0[record.id] = RemoteDocument(id: record.id, revision: time, content: .record(record), changeTime: time) }
        }

        func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
            listings.withLock { $0 += 1 }
            return RemoteListing(revisions: RemoteRevisions(documents.withLock { $0.mapValues(\.revision) }), readTime: serverTime())
        }

        func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                           progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
            listings.withLock { $0 += 1 }
            let all = documents.withLock { $0 }
            batch(RemoteListing(revisions: RemoteRevisions(all.mapValues(\.revision)), readTime: serverTime()), all)
        }

        func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument] {
            documents.withLock { all in ids.reduce(into: [:]) { $0[$1] = all[$1] } }
        }

        func changes(since mark: ChangeMark, counting: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteChanges? {
            duringFirstQuery.withLock { hook in
                hook?()
                hook = nil
            }
            let all = documents.withLock { $0 }
            let changed = all.filter { _, document in
                document.changeTime.flatMap { Timestamp(serverTime: $0) }.map { $0 >= mark.time } ?? true
            }
            return RemoteChanges(documents: changed, count: counting ? all.count : nil, readTime: serverTime())
        }

        func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
            Issue.record("nothing was edited, so nothing is pushed: \(writes)")
            return [:]
        }
    }

    @Test func aBaseForgottenUnderTheWatchCostsOneListingNotFiveMinutes() async throws {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("clean")
        let configPath = root + "/.booksync/config.json"
        var config = try CollectionConfig.decode(try FileSystem.readFile(configPath))
        config.changeField = "updatedAt"
        try FileSystem.writeAtomically(config.encoded(), to: configPath)
        let collection = try CollectionDirectory.open(searchingFrom: root)
        let clock = VirtualClock()
        var documents: [RemoteDocument] = []
        for (id, entry) in try collection.manifestFile.load().entries {
            guard case .success(let record) = collection.rules.load(try FileSystem.readFile(root + "/" + id.fileName), id: id) else {
                throw CocoaError(.fileReadCorruptFile)
            }
            documents.append(RemoteDocument(id: id, revision: entry.revision, content: .record(record), changeTime: "2029-01-01T00:00:00.000000Z"))
        }
        let remote = ChangeFieldRemote(documents, clock: clock)
        // `booksync remote forget origin` lands while the poll of 5 s asks for changes.
        remote.duringFirstQuery.withLock { $0 = { _ = try? collection.forgetWholeBase() } }
        let neuromancer = try RecordID("neuromancer")
        let feed = LiveSyncLoopTests.ScriptedFeed([(.seconds(12), {
            var fields = try JSONParser.parseObject(try FileSystem.readFile(root + "/neuromancer.json"))
            fields["title"] = .string("the app at 12 s")
            remote.appWrites(try collection.rules.load(collection.rules.canonicalBytes(fields, id: neuromancer), id: neuromancer).get())
            return nil
        })])
        var settings = LiveSyncSchedule.Settings()
        settings.pollInterval = .seconds(5)
        let end = Duration.seconds(30)
        let timing = LiveSync.Timing(now: { clock.now }, sleep: { duration in
            guard clock.now < end else { throw CancellationError() }
            clock.advance(by: duration)
            await Task.yield()
        })
        var pulledAt: Duration?
        let live = LiveSync(collection: collection, remote: remote, options: SyncOptions(), settings: settings, timing: timing)
        try await live.run(feed: feed) { event in
            if case .round(let report) = event, report.events.contains(where: { $0.id == neuromancer && $0.kind == .pulled(.write) }) {
                pulledAt = pulledAt ?? clock.now
            }
        }
        // Listed at 0 s (no mark yet) and once after the forget; the app's
        // write of 12 s is read by the change query of the poll at 15 s.
        let pulled = try #require(pulledAt, "the app's write was not pulled within 30 s")
        #expect(pulled >= .seconds(15) && pulled < .seconds(16), "\(pulled)")
        #expect(remote.listings.withLock { $0 } == 2)
    }
}
