import Foundation
import Testing
import BooksyncTestSupport
import BooksyncURLSession
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// One record the server will not take never blocks a push, and is named:
/// a field path past 1,500 bytes is refused by `validate` and by push before
/// anything is sent; a record the emulator refuses whole-request (400
/// INVALID_ARGUMENT, naming no document) is narrowed down, the others written.
@Suite struct RefusedRecordEndToEndTests {
    /// A book whose map `m` holds one key of `keyBytes` bytes: its field path `m.<key>` is 2 bytes longer.
    static func book(_ id: String, keyBytes: Int) -> String {
        bookFile(id, extra: ["m": .map([String(repeating: "k", count: keyBytes): .integer(1)])])
    }

    func workspace(_ name: String) throws -> Workspace {
        try Workspace(project: Emulator.uniqueProject(name), host: try Emulator.requireHost())
    }

    /// 1,500 bytes is the limit, and the whole dotted path counts.
    @Test func validateRefusesAFieldPathPast1500BytesNamingFileAndField() throws {
        let scratch = try ScratchDirectory()
        let initialize = try BinaryTests.run(["init", "--firestore", "p", "--collection", "books"], in: scratch.path)
        #expect(initialize.status == 0, "\(initialize.stderr)")
        try Self.book("edge", keyBytes: 1_498).write(toFile: scratch.path + "/edge.json", atomically: true, encoding: .utf8)
        let accepted = try BinaryTests.run(["validate", "edge.json"], in: scratch.path)
        #expect(accepted.status == 0, "\(accepted.stdout)\(accepted.stderr)")

        try Self.book("long", keyBytes: 1_499).write(toFile: scratch.path + "/long.json", atomically: true, encoding: .utf8)
        let refused = try BinaryTests.run(["validate"], in: scratch.path)
        #expect(refused.status == 1)
        let line = (refused.stdout + refused.stderr).split(separator: "\n").first { $0.hasPrefix("long.json: ") }.map(String.init)
        #expect(line == "long.json: field path 'm.\(String(repeating: "k", count: 38))…' is 1501 bytes (the names down to the field, "
            + "joined by dots); Firestore allows at most 1500", "\(refused.stdout)\(refused.stderr)")
        #expect(!(refused.stdout + refused.stderr).contains("edge.json:"))
    }

    /// The issue's case: the long path is named as invalid before anything is
    /// sent, and the good records are pushed (exit 1, not 3).
    @Test func aLongFieldPathIsNamedAndTheOthersArePushed() async throws {
        let ws = try workspace("longpath")
        try ws.initialize()
        for id in ["a", "b", "c"] { try ws.write(id + ".json", bookFile(id)) }
        try ws.write("long.json", Self.book("long", keyBytes: 1_499))
        let push = try ws.run("push")
        #expect(push.status == 1, "\(push.stdout)\(push.stderr)")
        #expect(push.stdout.contains("invalid  long.json: field path 'm.kkk"), "\(push.stdout)\(push.stderr)")
        #expect(push.stdout.hasSuffix("pushed 3, 1 invalid\n"), "\(push.stdout)")
        #expect(try await ws.rest.all().keys.sorted() == ["a", "b", "c"])
    }

    /// A record that passes booksync's checks but that the emulator refuses
    /// for the whole request (a reference to a reserved id): `--atomic`
    /// writes nothing and says so for every record; without it the batch is
    /// narrowed down, the good records are written, and the bad one is
    /// rejected by name (exit 1, not 3, as before).
    @Test func aRecordTheEmulatorRefusesWholeRequestIsRejectedAndTheOthersPushed() async throws {
        let ws = try workspace("refusedbatch")
        try ws.initialize()
        let ids = (0..<12).map { "g\($0)" }
        for id in ids { try ws.write(id + ".json", bookFile(id)) }
        try ws.write("bad.json", bookFile("bad", extra: ["r": .reference("authors/__x__")]))
        #expect(try ws.run("validate").status == 0)

        let atomic = try ws.run("push", "--atomic")
        #expect(atomic.status == 1, "\(atomic.stdout)\(atomic.stderr)")
        let notWritten = atomic.stdout.split(separator: "\n").filter { $0.contains(": not written: Firestore refused the --atomic commit") }
        #expect(notWritten.count == 13, "\(atomic.stdout)")
        #expect(atomic.stdout.contains("push without --atomic to have that record named"), "\(atomic.stdout)")
        #expect(try await ws.rest.all().isEmpty)

        let push = try ws.run("push")
        #expect(push.status == 1, "\(push.stdout)\(push.stderr)")
        #expect(push.stdout.contains(#"rejected bad: Firestore refused this record: 400 INVALID_ARGUMENT: Resource id "__x__" is invalid"#),
                "\(push.stdout)\(push.stderr)")
        #expect(try await ws.rest.all().keys.sorted() == ids.sorted())
        // The next push sends the bad record alone, and rejects it again.
        let again = try ws.run("push")
        #expect(again.status == 1)
        #expect(again.stdout.contains("rejected bad: "), "\(again.stdout)")
        #expect(!again.stdout.contains("g1"), "\(again.stdout)")
    }

    /// The remote alone, past booksync's own checks, against what the
    /// emulator counts: a 1,501-byte field path among good writes is
    /// rejected alone; in an atomic commit, nothing is written.
    @Test func theEmulatorsWholeRequestRefusalOfALongFieldPathIsNarrowedDown() async throws {
        let host = try Emulator.requireHost()
        let project = Emulator.uniqueProject("pathremote")
        let target = FirestoreTarget(project: project, collectionPath: "books")
        let endpoint = try FirestoreEndpoint.resolve(environment: ["FIRESTORE_EMULATOR_HOST": host], transport: nil)
        let remote = FirestoreRemote(target: target, endpoint: endpoint, rules: CollectionConfig(remote: target).rules,
                                     transport: URLSessionTransport.make(requestTimeout: .seconds(60)))
        func record(_ id: String, keyBytes: Int = 1) throws -> CanonicalRecord {
            var fields = bookFields(id)
            fields["m"] = .map([String(repeating: "k", count: keyBytes): .integer(1)])
            return CanonicalRecord(id: try RecordID(id), fields: fields, leadingKeys: RecordSchema.books.leadingKeys)
        }
        let rest = RESTClient(host: host, project: project, collection: "books")

        let atomic = [try record("x1"), try record("long", keyBytes: 1_499), try record("x2")].map { RemoteWrite.create($0) }
        let refused = try await remote.write(atomic, atomic: true) { _ in }
        #expect(refused.count == 3 && refused.values.allSatisfy {
            if case .rejected(let message) = $0 { message.hasPrefix("not written: ") } else { false }
        }, "\(refused)")
        #expect(try await rest.all().isEmpty, "an atomic commit is all or nothing")

        let good = (0..<6).map { "w\($0)" }
        var writes = try good.map { RemoteWrite.create(try record($0)) }
        writes.insert(.create(try record("long", keyBytes: 1_499)), at: 3)
        writes.append(.create(try record("edge", keyBytes: 1_498)))
        let outcomes = try await remote.write(writes, atomic: false) { _ in }
        guard case .rejected(let message)? = outcomes[try RecordID("long")] else {
            Issue.record("long: \(String(describing: outcomes[try RecordID("long")]))")
            return
        }
        #expect(message == "Firestore refused this record: 400 INVALID_ARGUMENT: Property m contains an invalid nested entity.")
        #expect(try await rest.all().keys.sorted() == (good + ["edge"]).sorted())
    }
}
