import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The change-field path against the emulator, with count_proxy.py counting
/// the billed reads on the wire (<doc:Firestore> ("What a command costs")): an app that
/// follows the convention stamps `updatedAt` with the server time on every
/// write; booksync's own writes do the same.
@Suite struct ChangeFieldEndToEndTests {
    static let documents = 1_234
    /// One read per started 1,000 counted documents.
    static let countReads = 2

    /// Books an app wrote long ago: their `updatedAt` is far before any mark.
    static func oldBooks(_ count: Int) -> [(id: String, fields: Fields)] {
        let longAgo = Value.timestamp(try! Timestamp(rfc3339: "2020-01-01T00:00:00Z"))
        return (0..<count).map { i in
            let id = String(format: "b%05d", i)
            return (id, bookFields(id, extra: ["updatedAt": longAgo]))
        }
    }

    @Test func statusAndPullReadOnlyTheChangesAndTheCount() async throws {
        let upstream = try Emulator.requireHost()
        let proxy = try CountProxy(upstream: upstream)
        let ws = try Workspace(project: Emulator.uniqueProject("changes"), host: proxy.host)
        let app = try Workspace(project: ws.project, host: upstream, name: "app-unused", scratch: ws.scratch)
        try await app.rest.put(Self.oldBooks(Self.documents))
        try ws.initialize("--change-field", "updatedAt")
        _ = try proxy.takeBilledReads()

        // The first pull lists everything (no mark yet) and records a mark.
        let pull = try ws.run("-v", "pull")
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(pull.stderr.contains("listed every name: no change mark for 'updatedAt' yet"), "\(pull.stderr)")
        try proxy.expectBilled(Self.documents, by: pull)
        #expect(ws.read(".booksync/manifest.json")?.contains("\"changesSince\": {\"field\": \"updatedAt\", \"time\": ") == true)
        // The change field is metadata: record files leave it out.
        #expect(ws.read("b00000.json") == bookFile("b00000"))

        // Unchanged: one empty query (billed as one read) and the count.
        let unchanged = try ws.run("-v", "status", "--short")
        #expect(unchanged.status == 0, "\(unchanged.stderr)")
        #expect(unchanged.stdout.isEmpty)
        #expect(unchanged.stderr.contains("read the 0 documents whose 'updatedAt' is at or after"), "\(unchanged.stderr)")
        try proxy.expectBilled(1 + Self.countReads, by: unchanged)
        #expect(BilledReadsEndToEndTests.estimate(unchanged.stderr) == 1 + Self.countReads)

        // An app changes 10 books the conventional way: they are found, and only they are read.
        let changed = (0..<10).map { String(format: "b%05d", $0 * 100) }
        try await app.rest.put(changed.map { ($0, bookFields($0, title: "Changed by the app")) }, stamping: "updatedAt")
        let status = try ws.run("-v", "status", "--short")
        #expect(status.stdout == changed.map { " M \($0)\n" }.joined(), "\(status.stdout)")
        try proxy.expectBilled(10 + Self.countReads, by: status)
        let pulled = try ws.run("-v", "pull")
        #expect(pulled.status == 0, "\(pulled.stderr)")
        try proxy.expectBilled(10 + Self.countReads, by: pulled)
        #expect(ws.read("b00100.json") == bookFile("b00100", title: "Changed by the app"))

        // A deletion does not show in the query; the count gives it away and
        // every name is listed.
        try await app.rest.delete("b00001")
        let deleted = try ws.run("-v", "status", "--short")
        #expect(deleted.stdout == " D b00001\n", "\(deleted.stdout)")
        #expect(deleted.stderr.contains("listed every name: the collection holds 1233 documents, but the base and the changes account for 1234 "
            + "(a deletion, or a document written without 'updatedAt')"), "\(deleted.stderr)")
        #expect(try ws.run("pull").status == 0)

        // A mark later than the server's clock (a damaged or forged manifest
        // in a clone) is not believed: every name is listed.
        let manifest = try #require(ws.read(".booksync/manifest.json"))
        let forged = manifest.replacingOccurrences(of: #"("changesSince": \{"field": "updatedAt", "time": ")[^"]*"#, with: "$12999-01-01T00:00:00.000000Z",
                                                   options: .regularExpression)
        #expect(forged != manifest)
        try ws.write(".booksync/manifest.json", forged)
        try await app.rest.put([("b00003", bookFields("b00003", title: "Changed after the forged mark"))], stamping: "updatedAt")
        let distrusted = try ws.run("-v", "status", "--short")
        #expect(distrusted.stdout == " M b00003\n", "\(distrusted.stdout)")
        #expect(distrusted.stderr.contains("listed every name: the base's change mark (2999-01-01T00:00:00.000000Z) is later than the server's time"), "\(distrusted.stderr)")
        #expect(try ws.run("pull").status == 0)

        // A write without the change field is what the convention cannot see:
        // status misses it (<doc:Firestore> says so); --full finds it.
        try await app.rest.put([("b00002", bookFields("b00002", title: "Written without updatedAt"))])
        #expect(try ws.run("status", "--short").stdout == "")
        #expect(try ws.run("status", "--short", "--full").stdout == " M b00002\n")
    }

    @Test func pushStampsEveryWriteAndFilesCannotHoldTheField() async throws {
        let host = try Emulator.requireHost()
        let ws = try Workspace(project: Emulator.uniqueProject("stamps"), host: host)
        try ws.initialize("--change-field", "updatedAt")
        try ws.write("dune.json", bookFile("dune", title: "Dune"))
        let push = try ws.run("push")
        #expect(push.status == 0, "\(push.stderr)")
        let remote = try await ws.rest.all()
        guard case .timestamp(let stamped)? = remote["dune"]?.fields["updatedAt"] else {
            Issue.record("push did not set updatedAt: \(String(describing: remote["dune"]?.fields))")
            return
        }
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        #expect(abs(stamped.microsecondsSinceEpoch - now) < 600 * 1_000_000, "updatedAt is the server's time of the write")
        #expect(ws.read("dune.json") == bookFile("dune", title: "Dune"), "the file is unchanged by the push")

        // A record file holding the change field is invalid, named, and not pushed.
        try ws.write("dune.json", bookFile("dune", title: "Dune", extra: ["updatedAt": .timestamp(Timestamp(microsecondsSinceEpoch: 0))]))
        let refused = try ws.run("push")
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("field 'updatedAt' cannot be in a record file: it is this collection's change field"), "\(refused.stdout)")
        #expect(try await ws.rest.all()["dune"]?.fields["title"] == .string("Dune"))
    }
}
