import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Push sends chunks of 500 writes with several requests in flight. These tests
/// drive it through an in-memory remote whose answers can be delayed or refused,
/// to pin down what the base holds when one chunk fails while others are in flight.
@Suite struct PushPipelineTests {
    static func collection(records: Int, in scratch: ScratchDirectory) throws -> CollectionDirectory {
        let collection = try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
        for i in 0..<records {
            let name = String(format: "b%04d", i)
            try scratch.write("\(name).json", #"{"id": "\#(name)", "title": "T\#(i)", "author": "A", "genre": "g"}"#)
        }
        return collection
    }

    @Test func everyChunkIsSentOnceAndRecorded() async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(records: 1_234, in: scratch)
        let remote = ScriptedRemote(delay: .milliseconds(5))
        let report = try await collection.push(remote: remote)
        let sent = remote.chunks.withLock { $0 }
        #expect(sent.map(\.count).sorted() == [234, 500, 500])
        #expect(Set(sent.joined()).count == 1_234)
        #expect(report.events.count == 1_234)
        #expect(report.events.allSatisfy { $0.kind == .pushed(.create) })
        let manifest = try collection.manifestFile.load()
        #expect(manifest.entries.count == 1_234)
        #expect(manifest.entries.values.allSatisfy { $0.revision == "r1" })
        // Base copies hold exactly what was sent, and nothing is left to push.
        let id = try RecordID("b0042")
        let base = try #require(collection.baseCopies.fields(id, hash: manifest.entries[id]?.hash))
        #expect(base["title"] == .string("T42"))
        let again = try await collection.push(remote: remote)
        #expect(again.events.isEmpty)
        #expect(remote.chunks.withLock { $0.count } == 3)
    }

    @Test func aRefusedChunkStopsNewOnesButKeepsThoseInFlight() async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(records: 2_000, in: scratch)
        // Chunks 0 and 2 answer late; chunk 1 is refused at once, before they answer.
        let remote = ScriptedRemote(failing: ["b0500"], delay: .milliseconds(300))
        await #expect(throws: BooksyncError.remote(.rejected(during: "write 500 documents", status: 400, code: "INVALID_ARGUMENT", message: "refused by the test"))) {
            try await collection.push(remote: remote)
        }
        let sent = remote.chunks.withLock { $0 }.map { $0.first ?? "" }.sorted()
        #expect(sent == ["b0000", "b0500", "b1000"], "no chunk may start after the refusal")
        let manifest = try collection.manifestFile.load()
        #expect(manifest.entries.count == 1_000)
        #expect(manifest.entries[try RecordID("b0000")] != nil)
        #expect(manifest.entries[try RecordID("b1499")] != nil)
        #expect(manifest.entries[try RecordID("b0500")] == nil)
        #expect(manifest.entries[try RecordID("b1500")] == nil)

        // The next push sends exactly what is missing.
        let retry = ScriptedRemote()
        let report = try await collection.push(remote: retry)
        #expect(report.events.count == 1_000)
        #expect(retry.chunks.withLock { $0 }.joined().sorted() == (500..<1000).map { String(format: "b%04d", $0) } + (1500..<2000).map { String(format: "b%04d", $0) })
        #expect(try collection.manifestFile.load().entries.count == 2_000)
    }

    @Test func cancellingStopsNewChunksAndRecordsThoseInFlight() async throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(records: 2_000, in: scratch)
        let remote = ScriptedRemote(delay: .milliseconds(400))
        let push = Task { try await collection.push(remote: remote) }
        // Wait until the first three chunks are in flight, then Ctrl-C.
        for _ in 0..<200 where remote.chunks.withLock({ $0.count }) < 3 { try await Task.sleep(for: .milliseconds(10)) }
        push.cancel()
        await #expect(throws: BooksyncError.interrupted) { try await push.value }
        #expect(remote.chunks.withLock { $0.count } == 3, "no chunk may start after the cancellation")
        // The answers of the chunks in flight were recorded (the fake remote applied them).
        #expect(try collection.manifestFile.load().entries.count == 1_500)
    }
}
