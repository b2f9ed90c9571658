import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// `apply` after its checks passed, when a document changes in the moment
/// before the write: the precondition fails for that write only, or, with
/// `--atomic`, the whole commit is refused and nothing is written.
@Suite struct ApplyRaceTests {
    /// An in-memory remote that honours preconditions as Firestore does (an
    /// atomic commit applies all writes or none) and runs `beforeFirstWrite`
    /// once, just before it applies anything: the race.
    final class PreconditionRemote: RemoteCollection {
        let documents = Mutex<[RecordID: RemoteDocument]>([:])
        let clock = Mutex(0)
        let beforeFirstWrite: Mutex<(@Sendable (PreconditionRemote) -> Void)?>
        var displayName: String { "precondition remote" }
        var identity: TargetIdentity? { TargetIdentity(endpoint: "https://example.test/v1/", collection: "projects/p/databases/(default)/documents/books") }

        init(beforeFirstWrite: (@Sendable (PreconditionRemote) -> Void)? = nil) {
            self.beforeFirstWrite = Mutex(beforeFirstWrite)
        }

        func nextRevision() -> String { clock.withLock { $0 += 1; return "r\($0)" } }

        func put(_ record: CanonicalRecord) {
            let revision = nextRevision()
            documents.withLock { $0[record.id] = RemoteDocument(id: record.id, revision: revision, content: .record(record)) }
        }

        func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
            RemoteListing(revisions: RemoteRevisions(documents.withLock { $0.mapValues(\.revision) }))
        }

        func documentCount() async throws(RemoteError) -> Int? { documents.withLock { $0.count } }

        func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                           progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
            let all = documents.withLock { $0 }
            batch(RemoteListing(revisions: RemoteRevisions(all.mapValues(\.revision))), all)
        }

        func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument] {
            documents.withLock { documents in documents.filter { ids.contains($0.key) } }
        }

        func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
            if let race = beforeFirstWrite.withLock({ hook in defer { hook = nil }; return hook }) { race(self) }
            return documents.withLock { documents in
                func holds(_ write: RemoteWrite) -> Bool {
                    switch write {
                    case .create(let record): documents[record.id] == nil
                    case .update(let record, let revision): documents[record.id]?.revision == revision
                    case .delete(let id, let revision): documents[id]?.revision == revision
                    case .overwrite, .remove: true
                    }
                }
                if atomic, !writes.allSatisfy(holds) { return Dictionary(uniqueKeysWithValues: writes.map { ($0.id, .preconditionFailed) }) }
                var outcomes: [RecordID: WriteOutcome] = [:]
                for write in writes {
                    guard holds(write) else { outcomes[write.id] = .preconditionFailed; continue }
                    switch write {
                    case .create(let record), .update(let record, _), .overwrite(let record):
                        let revision = clock.withLock { $0 += 1; return "r\($0)" }
                        documents[record.id] = RemoteDocument(id: record.id, revision: revision, content: .record(record))
                        outcomes[write.id] = .written(revision: revision)
                    case .delete(let id, _), .remove(let id):
                        documents[id] = nil
                        outcomes[id] = .written(revision: nil)
                    }
                }
                return outcomes
            }
        }

        func changes(since mark: ChangeMark, counting: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteChanges? { nil }
        func atomicRequestSize(_ writes: [RemoteWrite]) -> (bytes: Int, limit: Int)? { nil }
    }

    /// A synced collection of b1 and b2 whose files were then edited, and its plan.
    static func planned(_ remote: PreconditionRemote, in scratch: ScratchDirectory) async throws -> (CollectionDirectory, SavedPlan) {
        let collection = try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
        for id in ["b1", "b2"] { try scratch.write("\(id).json", #"{"id": "\#(id)", "title": "Old", "author": "A", "genre": "g"}"#) }
        _ = try await collection.push(remote: remote)
        for id in ["b1", "b2"] { try scratch.write("\(id).json", #"{"id": "\#(id)", "title": "New", "author": "A", "genre": "g"}"#) }
        let plan = try await collection.makePlan(remote: remote, remoteName: "origin", pathspecs: [], options: SyncOptions())
        #expect(plan.writes.map(\.action) == [.update, .update])
        return (collection, plan)
    }

    /// Someone else's edit of b1, made as the writes go out.
    static let race: @Sendable (PreconditionRemote) -> Void = { remote in
        let id = try! RecordID("b1")
        let record = try! CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")).rules
            .load(Array(#"{"id": "b1", "title": "Theirs", "author": "A", "genre": "g"}"#.utf8), id: id).get()
        remote.put(record)
    }

    static func title(_ remote: PreconditionRemote, _ id: String) -> Value? {
        remote.documents.withLock { $0[try! RecordID(id)]?.record?.fields["title"] }
    }

    @Test func aRaceFailsOnlyThatWrite() async throws {
        let scratch = try ScratchDirectory()
        let remote = PreconditionRemote()
        let (collection, plan) = try await Self.planned(remote, in: scratch)
        remote.beforeFirstWrite.withLock { $0 = Self.race }
        let outcome = try await collection.apply(plan, planName: "plan.json", remote: remote)
        #expect(outcome.report.events.map(\.kind) == [.remoteChangedSincePull, .pushed(.update(baseRevision: plan.writes[1].remoteRevision!))])
        #expect(Self.title(remote, "b1") == .string("Theirs") && Self.title(remote, "b2") == .string("New"))
        let base = try collection.manifestFile.load()
        #expect(base.entries[try RecordID("b2")]?.revision == remote.documents.withLock { $0[try! RecordID("b2")]?.revision })
    }

    @Test func aRaceRefusesAnAtomicApplyWhole() async throws {
        let scratch = try ScratchDirectory()
        let remote = PreconditionRemote()
        let (collection, plan) = try await Self.planned(remote, in: scratch)
        let baseBefore = try collection.manifestFile.load()
        remote.beforeFirstWrite.withLock { $0 = Self.race }
        var options = SyncOptions()
        options.atomic = true
        let outcome = try await collection.apply(plan, planName: "plan.json", remote: remote, options: options)
        #expect(outcome.report.events.map(\.kind) == [
            .remoteChangedSincePull,
            .rejected("not written: the --atomic commit was refused because another record in it changed remotely"),
        ])
        #expect(Self.title(remote, "b1") == .string("Theirs") && Self.title(remote, "b2") == .string("Old"))
        #expect(try collection.manifestFile.load().entries == baseBefore.entries)
    }
}
