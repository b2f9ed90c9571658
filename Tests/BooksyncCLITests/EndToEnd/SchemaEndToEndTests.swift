import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// `init --require` and `--id-field` against the real emulator: any
/// collection pulls cleanly, and documents keep the id where the app wants it.
@Suite struct SchemaEndToEndTests {
    func workspace(_ name: String, collection: String = "users") throws -> Workspace {
        try Workspace(project: Emulator.uniqueProject(name), host: try Emulator.requireHost(), collection: collection, name: collection)
    }

    func initialize(_ ws: Workspace, _ options: String...) throws {
        let result = try BinaryTests.run(["init", "-q", "--firestore", ws.project, "--collection", ws.collection] + options, in: ws.root, environment: ws.environment)
        #expect(result.status == 0, "init: \(result.stderr)")
    }

    /// A user document as an app writes it: no title, author or genre, no `id` field.
    static func user(_ n: Int) -> Fields {
        [
            "name": .string("User \(n)"), "email": .string("u\(n)@example.com"), "age": .integer(Int64(20 + n)),
            "joined": .timestamp(Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000 + Int64(n))),
            "prefs": .map(["theme": .string("dark"), "stats": .map(["views": .integer(Int64(n))])]),
            "tags": .array([.string("a"), .integer(1)]),
        ]
    }

    /// A record file as booksync writes it for a user: `id` first, the rest sorted.
    static func userFile(_ id: String, _ fields: Fields, schema: RecordSchema = RecordSchema(requiredFields: [])) -> String {
        var all = fields
        all["id"] = .string(id)
        return String(decoding: CanonicalJSON.encode(all, leadingKeys: schema.leadingKeys), as: UTF8.self)
    }

    @Test func usersPullCleanlyWithRequireNone() async throws {
        let ws = try workspace("requirenone")
        try await ws.rest.put((0..<5).map { (id: "u\($0)", fields: Self.user($0)) })
        // With the Book schema every user is invalid: the reason --require exists.
        let books = try Workspace(project: ws.project, host: ws.host, collection: "users", name: "as-books", scratch: ws.scratch)
        try initialize(books)
        let refused = try books.run("pull")
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("invalid  remote u0: missing required field 'title' (string)"), "\(refused.stdout)")

        try initialize(ws, "--require", "none")
        let pull = try ws.run("pull")
        #expect(pull.status == 0, "\(pull.stdout)\(pull.stderr)")
        #expect(pull.stdout.hasSuffix("pulled 5\n"))
        #expect(ws.read("u3.json") == Self.userFile("u3", Self.user(3)))
        #expect(try ws.run("status", "--short").stdout.isEmpty)
        #expect(try ws.run("validate").status == 0)
        // The default idField stores the id: documents gain it only when pushed.
        #expect(try ws.run("push").stdout == "nothing to do\n")
    }

    @Test func requiredFieldsAndTypesAreEnforcedOnBothSides() async throws {
        let ws = try workspace("requiretyped")
        var wrong = Self.user(1)
        wrong["age"] = .string("old")
        try await ws.rest.put([(id: "ok", fields: Self.user(0)), (id: "wrong", fields: wrong)])
        try initialize(ws, "--require", "name:string", "--require", "age:integer")
        let pull = try ws.run("pull")
        #expect(pull.status == 1)
        #expect(pull.stdout.contains("invalid  remote wrong: field 'age' must be integer, found string (not pulled)"), "\(pull.stdout)")
        // Required fields come first in the files, in the order given.
        let schema = RecordSchema(requiredFields: [FieldRequirement(name: "name", type: .string), FieldRequirement(name: "age", type: .integer)])
        #expect(ws.read("ok.json") == Self.userFile("ok", Self.user(0), schema: schema))
        #expect(ws.read("ok.json")?.hasPrefix("{\n  \"id\": \"ok\",\n  \"name\": \"User 0\",\n  \"age\": 20,\n") == true)
        try ws.write("local.json", #"{"id": "local", "name": "L"}"#)
        let validate = try ws.run("validate", "local.json")
        #expect(validate.status == 1)
        #expect(validate.stdout.contains("missing required field 'age' (integer)") || validate.stderr.contains("missing required field 'age' (integer)"))
    }

    /// The app-compatibility promise of `--id-field none`: documents written by
    /// an app that reads the id from the name come back through pull, edit and
    /// push unchanged except the edited field, and never gain an `id` field.
    @Test func idFieldNoneRoundTripsWithoutAnIDField() async throws {
        let ws = try workspace("idfieldnone")
        try await ws.rest.put((0..<3).map { (id: "u\($0)", fields: Self.user($0)) })
        try initialize(ws, "--require", "none", "--id-field", "none")
        let pull = try ws.run("pull")
        #expect(pull.status == 0, "\(pull.stdout)\(pull.stderr)")
        // The record file keeps its id.
        #expect(ws.read("u1.json") == Self.userFile("u1", Self.user(1)))
        #expect(try ws.run("status", "--short").stdout.isEmpty)
        #expect(try ws.run("push").stdout == "nothing to do\n")
        let before = try await ws.rest.all()

        var edited = Self.user(1)
        edited["name"] = .string("Renamed")
        try ws.write("u1.json", Self.userFile("u1", edited))
        try ws.write("new.json", Self.userFile("new", Self.user(9)))
        let push = try ws.run("push")
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        #expect(push.stdout.hasSuffix("pushed 2\n"))
        let after = try await ws.rest.all()
        #expect(after["u1"]?.fields == edited, "only the edited field changed, and no id was added")
        #expect(after["new"]?.fields == Self.user(9))
        #expect(after["u0"]?.revision == before["u0"]?.revision)
        #expect(after.values.allSatisfy { $0.fields["id"] == nil })
        #expect(try ws.run("status", "--short").stdout.isEmpty)

        // Converged detection is unchanged: the same edit on both sides is recorded, not sent.
        var both = Self.user(2)
        both["age"] = .integer(99)
        try ws.write("u2.json", Self.userFile("u2", both))
        try await ws.rest.put([(id: "u2", fields: both)])
        #expect(try ws.run("status", "--short").stdout == "== u2\n")
        let converge = try ws.run("push")
        #expect(converge.status == 0)
        #expect(try ws.run("status", "--short").stdout.isEmpty)

        // A second clone pulls the same files.
        let other = try Workspace(project: ws.project, host: ws.host, collection: "users", name: "other", scratch: ws.scratch)
        try initialize(other, "--require", "none", "--id-field", "none")
        #expect(try other.run("pull").status == 0)
        #expect(try other.recordFiles() == ws.recordFiles())
    }

    /// Under `none`, a document that has an `id` field anyway is reported
    /// and left alone on both sides, never pulled or rewritten.
    @Test func idFieldNoneRefusesADocumentWithAnIDField() async throws {
        let ws = try workspace("idfieldnoneclash")
        var clash = Self.user(1)
        clash["id"] = .string("u1")
        try await ws.rest.put([(id: "u0", fields: Self.user(0)), (id: "u1", fields: clash)])
        let before = try await ws.rest.all()
        try initialize(ws, "--require", "none", "--id-field", "none")
        let pull = try ws.run("pull")
        #expect(pull.status == 1)
        #expect(pull.stdout.contains("invalid  remote u1: the document has a field 'id', but this collection keeps the record id out of documents"), "\(pull.stdout)")
        #expect(ws.read("u0.json") != nil)
        #expect(ws.read("u1.json") == nil)
        // A local file for it is never sent over the document either.
        try ws.write("u1.json", Self.userFile("u1", Self.user(1)))
        _ = try ws.run("push")
        let after = try await ws.rest.all()
        #expect(after["u1"]?.revision == before["u1"]?.revision)
        #expect(after["u1"]?.fields == clash)
    }

    /// `--id-field docId`: documents carry the id as `docId`, record files as `id`.
    @Test func idFieldNamedRoundTrips() async throws {
        let ws = try workspace("idfielddocid")
        try initialize(ws, "--require", "name:string", "--id-field", "docId")
        let schema = RecordSchema(requiredFields: [FieldRequirement(name: "name", type: .string)])
        for n in 0..<3 { try ws.write("u\(n).json", Self.userFile("u\(n)", Self.user(n), schema: schema)) }
        #expect(try ws.run("push").status == 0)
        let remote = try await ws.rest.all()
        for n in 0..<3 {
            var expected = Self.user(n)
            expected["docId"] = .string("u\(n)")
            #expect(remote["u\(n)"]?.fields == expected)
        }
        let other = try Workspace(project: ws.project, host: ws.host, collection: "users", name: "other", scratch: ws.scratch)
        try initialize(other, "--require", "name:string", "--id-field", "docId")
        #expect(try other.run("pull").status == 0)
        #expect(try other.recordFiles() == ws.recordFiles())
        #expect(try other.run("push").stdout == "nothing to do\n")

        // A document whose docId disagrees with its name is invalid, not pulled.
        var wrong = Self.user(5)
        wrong["docId"] = .string("someone-else")
        try await ws.rest.put([(id: "u5", fields: wrong)])
        let pull = try other.run("pull")
        #expect(pull.status == 1)
        #expect(pull.stdout.contains("invalid  remote u5: field 'docId' holds the record id (config \"idField\") and must be \"u5\", the document's name; found \"someone-else\""), "\(pull.stdout)")
        // A record file may not carry docId itself.
        try ws.write("x.json", #"{"id": "x", "name": "X", "docId": "y"}"#)
        let validate = try ws.run("validate", "x.json")
        #expect(validate.status == 1)
        #expect((validate.stdout + validate.stderr).contains("field 'docId' cannot be in a record file"))
    }
}
