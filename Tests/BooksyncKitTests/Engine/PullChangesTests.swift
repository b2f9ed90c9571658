import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// A pull through the change query (`SyncEngine.pullChanges`): each answer is
/// applied as it arrives and its bodies dropped, no body is read twice, and a
/// count that disagrees lists every name for the rest without undoing or
/// redoing what the answers applied.
@Suite struct PullChangesTests {
    /// A remote with a change field whose change query hands its documents
    /// on `answerSize` at a time; its read time is fixed.
    final class StreamingRemote: RemoteCollection {
        let documents: Mutex<[RecordID: RemoteDocument]>
        let answerSize: Int
        /// Change-query answers handed on.
        let answers = Mutex(0)
        /// Listings of every name.
        let listings = Mutex(0)
        /// The ids of every fetch (each a billed read).
        let fetches = Mutex<[[RecordID]]>([])
        /// Runs each time `batch` has returned, with the answer's number (from 0).
        let afterHandingOn = Mutex<(@Sendable (Int) -> Void)?>(nil)
        var displayName: String { "streaming" }
        static let readTime = "2030-01-01T00:10:00.000000Z"

        init(_ documents: [RemoteDocument], answerSize: Int) {
            self.documents = Mutex(Dictionary(uniqueKeysWithValues: documents.map { ($0.id, $0) }))
            self.answerSize = answerSize
        }

        func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
            listings.withLock { $0 += 1 }
            return RemoteListing(revisions: RemoteRevisions(documents.withLock { $0.mapValues(\.revision) }), readTime: Self.readTime)
        }

        func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                           progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
            listings.withLock { $0 += 1 }
            let all = documents.withLock { $0 }
            batch(RemoteListing(revisions: RemoteRevisions(all.mapValues(\.revision)), readTime: Self.readTime), all)
        }

        func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument] {
            fetches.withLock { $0.append(ids) }
            return documents.withLock { all in ids.reduce(into: [:]) { $0[$1] = all[$1] } }
        }

        func changes(since mark: ChangeMark, counting: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteChanges? {
            Issue.record("a pull reads the changes answer by answer")
            return nil
        }

        func changes(since mark: ChangeMark, counting: Bool, batch: (RemoteListing, [RecordID: RemoteDocument]) async -> Void,
                     progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteChanges? {
            let all = documents.withLock { $0 }
            let changed = all.values.filter { document in
                document.changeTime.flatMap { Timestamp(serverTime: $0) }.map { $0 >= mark.time } ?? true
            }.sorted { $0.id < $1.id }
            var start = 0
            repeat {
                let answer = changed[start..<min(start + answerSize, changed.count)]
                let number = answers.withLock { count in
                    defer { count += 1 }
                    return count
                }
                await batch(RemoteListing(revisions: RemoteRevisions(answer.map { (key: $0.id, value: $0.revision) }),
                                          readTime: start == 0 ? Self.readTime : nil),
                            Dictionary(uniqueKeysWithValues: answer.map { ($0.id, $0) }))
                afterHandingOn.withLock { $0 }?(number)
                start += answerSize
            } while start < changed.count
            return RemoteChanges(documents: [:], count: counting ? all.count : nil, readTime: Self.readTime)
        }

        func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
            Issue.record("a pull writes nothing remotely: \(writes)")
            return [:]
        }
    }

    static func name(_ i: Int) -> String { String(format: "b%04d", i) }

    static func document(_ collection: CollectionDirectory, _ i: Int, title: String, revision: String, changed: String) throws -> RemoteDocument {
        let id = try RecordID(name(i))
        let json = #"{"id": "\#(name(i))", "title": "\#(title)", "author": "A", "genre": "g"}"#
        return RemoteDocument(id: id, revision: revision, content: .record(try collection.rules.load(Array(json.utf8), id: id).get()), changeTime: changed)
    }

    /// `records` records with a change field, pushed (base at r1) and pulled
    /// once from a remote holding the same, which records a change mark.
    static func synced(records: Int, in scratch: ScratchDirectory) async throws -> (CollectionDirectory, [RecordID: RemoteDocument]) {
        _ = try PushPipelineTests.collection(records: records, in: scratch)
        let configPath = scratch.path + "/.booksync/config.json"
        var config = try CollectionConfig.decode(try FileSystem.readFile(configPath))
        config.changeField = "updatedAt"
        try FileSystem.writeAtomically(config.encoded(), to: configPath)
        let collection = try CollectionDirectory.open(searchingFrom: scratch.path)
        _ = try await collection.push(remote: ScriptedRemote())
        var documents: [RecordID: RemoteDocument] = [:]
        for i in 0..<records {
            let document = try Self.document(collection, i, title: "T\(i)", revision: "r1", changed: "2030-01-01T00:00:00.000000Z")
            documents[document.id] = document
        }
        let report = try await collection.pull(remote: StreamingRemote(Array(documents.values), answerSize: 300))
        #expect(report.events.isEmpty)
        #expect(try collection.manifestFile.load().changesSince != nil, "the listing recorded a change mark")
        return (collection, documents)
    }

    @Test func eachAnswerIsAppliedAsItArrivesAndNoBodyIsReadAgain() async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.synced(records: 1_300, in: scratch)
        let mark = try #require(try collection.manifestFile.load().changesSince)
        for i in 0..<1_200 {
            let document = try Self.document(collection, i, title: "New\(i)", revision: "r2", changed: "2030-01-01T00:20:00.000000Z")
            documents[document.id] = document
        }
        let remote = StreamingRemote(Array(documents.values), answerSize: 300)
        let report = try await collection.pull(remote: remote)
        #expect(report.events.count == 1_200 && report.events.allSatisfy { $0.kind == .pulled(.write) })
        #expect(report.events.map(\.id) == report.events.map(\.id).sorted(), "reported in id order")
        #expect(report.remoteRead == .changes(since: mark, documents: 1_200, counted: true))
        #expect(remote.answers.withLock { $0 } == 4)
        #expect(remote.fetches.withLock { $0 }.isEmpty, "the bodies came with the query")
        #expect(remote.listings.withLock { $0 } == 0)
        #expect(try PullPipelineTests.localFields(collection, "b1199")?["title"] == .string("New1199"))
        let manifest = try collection.manifestFile.load()
        #expect(manifest.entries.values.filter { $0.revision == "r2" }.count == 1_200)
        #expect(manifest.changesSince != nil, "a mark is recorded again")
    }

    /// The query's reader is at most one answer ahead of the pull: once it
    /// may read the answer after answer k, answer k − 1 was taken, so answer
    /// k − 2 is written. A pull that applies more slowly than it reads holds
    /// a few answers, never all of them.
    @Test func theReaderWaitsForThePullToCatchUp() async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.synced(records: 1_200, in: scratch)
        for i in 0..<1_200 {
            let document = try Self.document(collection, i, title: "New\(i)", revision: "r2", changed: "2030-01-01T00:20:00.000000Z")
            documents[document.id] = document
        }
        let remote = StreamingRemote(Array(documents.values), answerSize: 100)
        let behind = Mutex<[Int]>([])
        let pulling = collection
        remote.afterHandingOn.withLock {
            $0 = { number in
                guard number >= 2 else { return }
                // Answers hold the changed records in id order, 100 each.
                let unwritten = ((number - 2) * 100..<(number - 1) * 100).filter { i in
                    (try? PullPipelineTests.localFields(pulling, Self.name(i)))?["title"] != .string("New\(i)")
                }
                if !unwritten.isEmpty { behind.withLock { $0.append(number) } }
            }
        }
        let report = try await pulling.pull(remote: remote)
        #expect(report.events.count == 1_200)
        #expect(remote.answers.withLock { $0 } == 12)
        #expect(behind.withLock { $0 }.isEmpty, "answers read while the one two before was not yet written: \(behind.withLock { $0 })")
    }

    /// Two documents deleted remotely: the count disagrees once the query has
    /// ended, after its answers were applied. Every name is listed for the
    /// rest: the deletions are pulled, the answers' records are not planned
    /// or read again, and every record is reported once.
    @Test(arguments: [false, true])
    func aCountThatDisagreesListsEveryNameForTheRest(dryRun: Bool) async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await Self.synced(records: 1_300, in: scratch)
        for i in 0..<600 {
            let document = try Self.document(collection, i, title: "New\(i)", revision: "r2", changed: "2030-01-01T00:20:00.000000Z")
            documents[document.id] = document
        }
        documents[try RecordID("b1250")] = nil
        documents[try RecordID("b1251")] = nil
        let remote = StreamingRemote(Array(documents.values), answerSize: 250)
        var options = SyncOptions()
        options.dryRun = dryRun
        let report = try await collection.pull(remote: remote, options: options)
        #expect(report.events.count == 602)
        #expect(report.events.filter { $0.kind == .pulled(.write) }.count == 600)
        #expect(report.events.filter { $0.kind == .pulled(.delete) }.map(\.id.rawValue) == ["b1250", "b1251"])
        #expect(report.events.map(\.id) == report.events.map(\.id).sorted(), "reported in id order")
        #expect(report.remoteRead == .everyName(because: .countDiffers(field: "updatedAt", accounted: 1_300, counted: 1_298)))
        #expect(remote.listings.withLock { $0 } == 1)
        #expect(remote.fetches.withLock { $0 }.isEmpty, "no body is read twice, and a deletion needs none")
        let manifest = try collection.manifestFile.load()
        if dryRun {
            #expect(manifest.entries.count == 1_300)
            #expect(try PullPipelineTests.localFields(collection, "b0000")?["title"] == .string("T0"))
        } else {
            #expect(manifest.entries.count == 1_298)
            #expect(manifest.entries.values.filter { $0.revision == "r2" }.count == 600)
            #expect(try PullPipelineTests.localFields(collection, "b0599")?["title"] == .string("New599"))
            #expect(try PullPipelineTests.localFields(collection, "b1250") == nil)
            // The next pull finds nothing left, through the change query again.
            let next = try await collection.pull(remote: StreamingRemote(Array(documents.values), answerSize: 250))
            #expect(next.events.isEmpty)
            if case .changes = next.remoteRead {} else { Issue.record("the next pull listed every name: \(next.remoteRead)") }
        }
    }
}
