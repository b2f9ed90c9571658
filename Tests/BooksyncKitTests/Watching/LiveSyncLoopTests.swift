import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The live sync's loop itself, on a virtual clock, with a scripted file
/// watcher and an in-memory remote that keeps what is written: when each
/// save is pushed, when an app's write is pulled, what a lost-events round
/// does, how a conflict made on both sides between rounds is reported, and
/// how a failing remote is retried (backing off) and told once.
@Suite(.hangGuard) struct LiveSyncLoopTests {
    /// A remote that keeps its documents and every write's virtual time.
    final class MemoryRemote: RemoteCollection {
        let documents: Mutex<[RecordID: RemoteDocument]>
        let writeTimes = Mutex<[Duration]>([])
        let listings = Mutex(0)
        /// Writes fail (unreachable) while this is above zero, one less each time.
        let failuresLeft = Mutex(0)
        private let serial = Mutex(0)
        let clock: VirtualClock
        var displayName: String { "memory" }

        init(_ documents: [RemoteDocument], clock: VirtualClock) {
            self.documents = Mutex(Dictionary(uniqueKeysWithValues: documents.map { ($0.id, $0) }))
            self.clock = clock
        }

        func nextRevision() -> String {
            serial.withLock { $0 += 1; return String(format: "2030-01-01T00:00:00.%06dZ", $0) }
        }

        /// An app's write: the document's content becomes `record`.
        func appWrites(_ record: CanonicalRecord) {
            let revision = nextRevision()
            documents.withLock { $0[record.id] = RemoteDocument(id: record.id, revision: revision, content: .record(record)) }
        }

        func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
            listings.withLock { $0 += 1 }
            return RemoteListing(revisions: RemoteRevisions(documents.withLock { $0.mapValues(\.revision) }))
        }

        func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                           progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
            let all = documents.withLock { $0 }
            batch(RemoteListing(revisions: RemoteRevisions(all.mapValues(\.revision))), all)
        }

        func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument] {
            documents.withLock { all in ids.reduce(into: [:]) { $0[$1] = all[$1] } }
        }

        func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
            writeTimes.withLock { $0.append(clock.now) }
            let failing = failuresLeft.withLock { left -> Bool in
                defer { left = max(0, left - 1) }
                return left > 0
            }
            if failing { throw .unreachable(endpoint: "memory", detail: "down for the test", attempts: 1) }
            var outcomes: [RecordID: WriteOutcome] = [:]
            for write in writes {
                let revision = nextRevision()
                outcomes[write.id] = documents.withLock { all -> WriteOutcome in
                    switch write {
                    case .create(let record), .overwrite(let record):
                        all[record.id] = RemoteDocument(id: record.id, revision: revision, content: .record(record))
                    case .update(let record, let base):
                        guard all[record.id]?.revision == base else { return .preconditionFailed }
                        all[record.id] = RemoteDocument(id: record.id, revision: revision, content: .record(record))
                    case .delete(let id, let base):
                        guard all[id]?.revision == base else { return .preconditionFailed }
                        all[id] = nil
                    case .remove(let id):
                        all[id] = nil
                    }
                    return .written(revision: revision)
                }
            }
            return outcomes
        }
    }

    /// A watcher whose answers are scripted by time; each step may change files first.
    final class ScriptedFeed: LocalChangeFeed {
        var steps: [(at: Duration, act: () throws -> LocalChanges?)]
        init(_ steps: [(at: Duration, act: () throws -> LocalChanges?)]) { self.steps = steps }

        func take(at now: Duration) -> LocalChanges? {
            guard let first = steps.first, now >= first.at else { return nil }
            steps.removeFirst()
            return try? first.act()
        }
    }

    struct Setup {
        let scratch: ScratchDirectory
        let collection: CollectionDirectory
        let remote: MemoryRemote
        let clock: VirtualClock

        func record(_ id: String, title: String) throws -> CanonicalRecord {
            let fields: Fields = ["id": .string(id), "title": .string(title), "author": .string("A"), "genre": .string("sf")]
            let bytes = CanonicalJSON.encode(fields, leadingKeys: collection.rules.schema.leadingKeys)
            guard case .success(let record) = collection.rules.load(bytes, id: try RecordID(id)) else { throw CocoaError(.fileReadCorruptFile) }
            return record
        }

        func save(_ id: String, title: String) throws {
            try FileSystem.writeAtomically(try record(id, title: title).canonicalBytes, to: collection.paths.root + "/" + id + ".json")
        }

        func title(_ id: String) -> String? {
            guard let bytes = try? FileSystem.readFile(collection.paths.root + "/" + id + ".json"),
                  case .map(let fields)? = try? JSONParser.parse(bytes, decodeTags: false), case .string(let title)? = fields["title"] else { return nil }
            return title
        }

        func remoteTitle(_ id: String) throws -> String? {
            guard case .record(let record)? = remote.documents.withLock({ $0[try! RecordID(id)]?.content }),
                  case .string(let title)? = record.fields["title"] else { return nil }
            return title
        }
    }

    /// The "clean" fixture (dune and neuromancer, synced), and a remote holding exactly its base.
    static func setUp() throws -> Setup {
        let scratch = try ScratchDirectory()
        let collection = try CollectionDirectory.open(searchingFrom: try scratch.copyFixture("clean"))
        let clock = VirtualClock()
        let manifest = try collection.manifestFile.load()
        var documents: [RemoteDocument] = []
        for (id, entry) in manifest.entries {
            let bytes = try FileSystem.readFile(collection.paths.root + "/" + id.fileName)
            guard case .success(let record) = collection.rules.load(bytes, id: id) else { throw CocoaError(.fileReadCorruptFile) }
            documents.append(RemoteDocument(id: id, revision: entry.revision, content: .record(record)))
        }
        return Setup(scratch: scratch, collection: collection, remote: MemoryRemote(documents, clock: clock), clock: clock)
    }

    /// Runs the loop on the virtual clock until `end`; the events it reported, with their times.
    static func run(_ setup: Setup, feed: ScriptedFeed, until end: Duration,
                    configure: (inout LiveSyncSchedule.Settings) -> Void = { _ in }) async throws -> [(at: Duration, event: LiveSync.Event)] {
        var settings = LiveSyncSchedule.Settings()
        settings.pollInterval = .seconds(5)
        settings.countEvery = 1
        configure(&settings)
        let clock = setup.clock
        let timing = LiveSync.Timing(now: { clock.now }, sleep: { duration in
            guard clock.now < end else { throw CancellationError() }
            clock.advance(by: duration)
            await Task.yield()
        })
        let live = LiveSync(collection: setup.collection, remote: setup.remote, options: SyncOptions(), settings: settings, timing: timing)
        var events: [(at: Duration, event: LiveSync.Event)] = []
        try await live.run(feed: feed) { events.append((clock.now, $0)) }
        return events
    }

    static func kinds(_ event: LiveSync.Event) -> [SyncEventKind] {
        if case .round(let report) = event { return report.events.map(\.kind) }
        return []
    }

    @Test func savesArePushedAfterTheQuietTimeAndAppWritesPulledAtThePoll() async throws {
        let setup = try Self.setUp()
        let feed = ScriptedFeed([
            (.seconds(1), { try setup.save("dune", title: "saved at 1 s"); return .records([try RecordID("dune")]) }),
            (.seconds(3), { setup.remote.appWrites(try setup.record("neuromancer", title: "the app at 3 s")); return nil }),
            (.seconds(6), { .everything("the kernel's event queue overflowed") }),
            // Both sides change dune's title between rounds: the push is refused, the next poll stores the conflict.
            (.seconds(7), {
                setup.remote.appWrites(try setup.record("dune", title: "the app at 7 s"))
                try setup.save("dune", title: "saved at 7 s")
                return .records([try RecordID("dune")])
            }),
        ])
        let events = try await Self.run(setup, feed: feed, until: .seconds(12))
        // Each save went out after the 0.2 s quiet time (within the loop's 50 ms tick); the second carried
        // dune's base revision as its precondition, which the app's write had changed, so it was refused.
        let writes = setup.remote.writeTimes.withLock { $0 }
        #expect(writes.count == 2, "\(writes)")
        for (write, save) in zip(writes, [Duration.seconds(1), .seconds(7)]) {
            #expect(write >= save + .milliseconds(200) && write < save + .milliseconds(300), "\(writes)")
        }
        // The app's write reached the file at the poll of 5 s, not before.
        #expect(setup.title("neuromancer") == "the app at 3 s")
        let pulled = events.first { Self.kinds($0.event).contains(.pulled(.write)) }
        #expect(pulled.map { $0.at >= .seconds(5) && $0.at < .milliseconds(5100) } == true, "\(events.map(\.at))")
        // The overflow looked at everything and found nothing to do; the conflict was refused, then stored, and the file kept.
        #expect(events.contains { if case .lookingAtEverything = $0.event { true } else { false } })
        #expect(events.contains { Self.kinds($0.event).contains(.remoteChangedSincePull) }, "\(events.map { Self.kinds($0.event) })")
        #expect(events.contains { Self.kinds($0.event).contains { if case .conflict = $0 { true } else { false } } })
        #expect(setup.title("dune") == "saved at 7 s")
        #expect(try setup.remoteTitle("dune") == "the app at 7 s")
        // Polls at 0 (the first pull), 5 and 10 s: one listing each.
        #expect(setup.remote.listings.withLock { $0 } == 3)
    }

    @Test func aFailingRemoteIsRetriedBackingOffAndToldOnce() async throws {
        let setup = try Self.setUp()
        setup.remote.failuresLeft.withLock { $0 = 3 }
        let feed = ScriptedFeed([(.seconds(1), { try setup.save("dune", title: "saved"); return .records([try RecordID("dune")]) })])
        let events = try await Self.run(setup, feed: feed, until: .seconds(20))
        let writes = setup.remote.writeTimes.withLock { $0 }
        // 1.2 s, then 2, 4 and 8 s later; the fourth try goes through.
        let gaps = zip(writes.dropFirst(), writes).map { ($0 - $1).components.seconds }
        #expect(writes.count == 4 && gaps == [2, 4, 8], "\(writes)")
        #expect(try setup.remoteTitle("dune") == "saved")
        let failures = events.filter { if case .failed(.push, _, retrying: true) = $0.event { true } else { false } }
        #expect(failures.count == 1, "told once while it repeats: \(failures.count)")
    }

    /// A write no watcher reports (through a shared memory map) is pushed by
    /// the look at every file that comes every `fullLookInterval`, not before.
    @Test func aWriteNoWatcherReportsIsPushedAtTheNextLookAtEveryFile() async throws {
        let setup = try Self.setUp()
        let feed = ScriptedFeed([(.seconds(2), { try setup.save("dune", title: "written through a map"); return nil })])
        _ = try await Self.run(setup, feed: feed, until: .seconds(45)) { $0.fullLookInterval = .seconds(30) }
        let writes = setup.remote.writeTimes.withLock { $0 }
        #expect(writes.count == 1 && writes.allSatisfy { $0 >= .seconds(30) && $0 < .seconds(31) }, "\(writes)")
        #expect(try setup.remoteTitle("dune") == "written through a map")
    }
}
