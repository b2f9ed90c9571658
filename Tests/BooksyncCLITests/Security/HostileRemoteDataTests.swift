import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// A collection written by others (<doc:Safety>): ids and field names that
/// differ only by Unicode normalization, ids that need escapes, documents that
/// cannot be records, and doubles at the edges, seeded into the real emulator
/// by REST and read by the built binary.
@Suite struct HostileRemoteDataTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    func workspace(_ name: String) throws -> Workspace {
        try Workspace(project: Emulator.uniqueProject(name), host: try Emulator.requireHost())
    }

    /// Commits documents given as raw wire JSON for their `fields`, so a test can
    /// send what `Fields` cannot hold (two field names equal as Swift strings).
    func commitRaw(_ ws: Workspace, _ documents: [(id: String, fieldsJSON: String)]) async throws {
        var body: [UInt8] = Array(#"{"writes": ["#.utf8)
        for (i, document) in documents.enumerated() {
            if i > 0 { body += Array(", ".utf8) }
            body += Array(#"{"update": {"name": "#.utf8)
            CanonicalJSON.writeString("\(ws.rest.root)/\(ws.collection)/\(document.id)", into: &body)
            body += Array(#", "fields": \#(document.fieldsJSON)}}"#.utf8)
        }
        body += Array("]}".utf8)
        let (status, answer) = try await ws.rest.request("POST", ws.rest.base + ":commit", body: String(decoding: body, as: UTF8.self))
        #expect(status == 200, "commit failed: \(CanonicalJSON.encodeInline(answer))")
    }

    static func wireBook(_ id: String, author: String = #"{"stringValue": "A"}"#, extra: String = "") -> String {
        var idJSON: [UInt8] = []
        CanonicalJSON.writeString(id, into: &idJSON)
        return #"{"id": {"stringValue": \#(String(decoding: idJSON, as: UTF8.self))}, "title": {"stringValue": "T"}, "author": \#(author), "genre": {"stringValue": "g"}\#(extra)}"#
    }

    func manifest(_ ws: Workspace) throws -> Manifest {
        try Manifest.decode(Array(try Data(contentsOf: URL(fileURLWithPath: ws.root + "/.booksync/manifest.json"))))
    }

    /// café (NFC) and café (NFD) are two documents, and ids with `"` and `\`
    /// need escapes in the manifest: booksync must read back what it wrote.
    @Test func idsThatDifferOnlyByNormalizationOrNeedEscapes() async throws {
        let ws = try workspace("nfcids")
        let ids = [Self.nfc, Self.nfd, "quote\"d", "back\\slash", "plain"]
        try await ws.rest.put(ids.map { (id: $0, fields: bookFields($0)) })
        try ws.initialize()
        for round in 1...2 {
            let pull = try ws.run("pull")
            #expect(pull.status == 0, "pull \(round): \(pull.stdout)\(pull.stderr)")
            if round == 2 { #expect(pull.stdout == "nothing to do\n") }
        }
        let manifest = try manifest(ws)
        #expect(Set(manifest.entries.keys) == Set(try ids.map { try RecordID($0) }))
        #expect(try ws.recordFiles().count == 5)
        let status = try ws.run("status", "--short")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.isEmpty)
        // One of the twins changes remotely: only that one is pulled.
        try await ws.rest.put([(id: Self.nfd, fields: bookFields(Self.nfd, title: "Decomposed"))])
        let short = try ws.run("status", "--short")
        #expect(short.status == 0)
        #expect(short.stdout == " M \(Self.nfd)\n")
        #expect(Array(short.stdout.utf8) == Array(" M \(Self.nfd)\n".utf8), "the NFD one, byte for byte")
        #expect(try ws.run("pull").status == 0)
        #expect(ws.read(try RecordID(Self.nfd).fileName) == bookFile(Self.nfd, title: "Decomposed"))
        #expect(ws.read(try RecordID(Self.nfc).fileName) == bookFile(Self.nfc))
        #expect(try ws.run("status", "--short").stdout.isEmpty)
    }

    /// One document with field names café (NFC) and café (NFD) among twenty good
    /// ones: the twenty are pulled, that one is reported invalid (exit 1), by the
    /// first pull (listing with bodies) and by later ones (batchGet) alike.
    @Test func equivalentFieldNamesMakeOneDocumentInvalid() async throws {
        let ws = try workspace("nfcfields")
        var documents = (0..<20).map { (id: "b\($0)", fieldsJSON: Self.wireBook("b\($0)")) }
        documents.insert((id: "odd", fieldsJSON: Self.wireBook("odd", extra: #", "stats": {"mapValue": {"fields": {"\#(Self.nfc)": {"integerValue": "1"}, "\#(Self.nfd)": {"integerValue": "2"}}}}"#)), at: 7)
        try await commitRaw(ws, documents)
        try ws.initialize()
        let pull = try ws.run("pull")
        #expect(pull.status == 1, "\(pull.stdout)\(pull.stderr)")
        let message = #"field 'stats' has two field names that differ only by Unicode normalization, "caf\u00E9" and "cafe\u0301""#
        #expect((pull.stdout + pull.stderr).contains("odd"))
        #expect((pull.stdout + pull.stderr).contains(message), "\(pull.stdout)\(pull.stderr)")
        #expect(try ws.recordFiles().count == 20)
        #expect(ws.read("odd.json") == nil)
        #expect(try manifest(ws).entries.count == 20)
        // Later commands read it through batchGet: still only that document.
        try await ws.rest.put([(id: "b3", fields: bookFields("b3", title: "Changed"))])
        let again = try ws.run("pull")
        #expect(again.status == 1, "\(again.stdout)\(again.stderr)")
        #expect(ws.read("b3.json") == bookFile("b3", title: "Changed"))
        let status = try ws.run("status", "--short")
        #expect(status.status == 1)
        #expect(status.stdout == " ! odd\n")
        let diff = try ws.run("diff")
        #expect(diff.status != 3, "\(diff.stdout)\(diff.stderr)")
        #expect(diff.stdout.contains("odd"))
    }

    /// Documents that cannot be records are invalid in `status` exactly as in
    /// `pull`: ` !` in --short, exit 1, under invalid in text and JSON.
    @Test func documentsThatCannotBeRecordsAreInvalidInStatusAsInPull() async throws {
        let ws = try workspace("invalidstatus")
        let invalid = [
            (id: "wrong-type", fieldsJSON: Self.wireBook("wrong-type", author: #"{"integerValue": "3"}"#)),
            (id: "missing-genre", fieldsJSON: #"{"id": {"stringValue": "missing-genre"}, "title": {"stringValue": "T"}, "author": {"stringValue": "A"}}"#),
            (id: "other-id", fieldsJSON: Self.wireBook("not-the-name")),
            (id: "bad-tag", fieldsJSON: Self.wireBook("bad-tag", extra: #", "when": {"mapValue": {"fields": {"$timestmap": {"stringValue": "x"}}}}"#)),
        ]
        try await commitRaw(ws, [(id: "good", fieldsJSON: Self.wireBook("good"))] + invalid)
        try ws.initialize()
        let invalidLines = invalid.map { " ! \($0.id)" }
        for round in 1...2 {
            let short = try ws.run("status", "--short")
            #expect(short.status == 1, "round \(round): \(short.stderr)")
            // Sorted by id, the one valid document among them while it is not pulled.
            let lines = (invalidLines + (round == 1 ? [" A good"] : [])).sorted { $0.dropFirst(3) < $1.dropFirst(3) }
            #expect(short.stdout == lines.map { $0 + "\n" }.joined(), "round \(round)")
            let text = try ws.run("status")
            #expect(text.status == 1)
            let invalidSection = try #require(text.stdout.range(of: "Invalid records")).upperBound
            for id in invalid.map(\.id) {
                #expect(text.stdout[invalidSection...].contains("remote \(id)"), "round \(round): \(id) in\n\(text.stdout)")
            }
            let json = try ws.run("status", "--json")
            #expect(json.status == 1)
            guard case .map(let document) = try JSONParser.parse(Array(json.stdout.utf8), decodeTags: false),
                  case .array(let records)? = document["records"] else { Issue.record("bad JSON: \(json.stdout)"); return }
            let jsonInvalid = records.compactMap { record -> String? in
                guard case .map(let r) = record, r["class"] == .string("invalid"), case .string(let id)? = r["id"] else { return nil }
                return id
            }
            #expect(jsonInvalid == invalid.map(\.id).sorted())
            // Pull agrees: the same documents, invalid, not pulled.
            let pull = try ws.run("pull")
            #expect(pull.status == 1)
            for id in invalid.map(\.id) {
                #expect(pull.stdout.contains("invalid  remote \(id)"), "round \(round): \(pull.stdout)")
                #expect(ws.read(id + ".json") == nil)
            }
            #expect(ws.read("good.json") == bookFile("good", title: "T", author: "A", genre: "g"))
        }
    }

    /// -0.0 is written 0.0 (Firestore's REST API takes -0 for 0, so booksync
    /// could never write one back; CollectionFormat says so), so a record
    /// holding it stays clean across pushes and other remote edits.
    @Test func negativeZeroStaysCleanAfterRemoteEdits() async throws {
        let ws = try workspace("negzero")
        try ws.initialize()
        try ws.write("z.json", "{\"id\": \"z\", \"title\": \"T\", \"author\": \"A\", \"genre\": \"g\", \"score\": -0.0, \"tiny\": -1e-320}\n")
        let push = try ws.run("push")
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        #expect(try ws.run("status", "--short").stdout.isEmpty)
        // What the emulator keeps: 0.0, and the subnormal as it is.
        let stored = try #require(try await ws.rest.all()["z"])
        #expect(stored.fields["score"] == .double(0.0))
        #expect(stored.fields["tiny"] == .double(-Double("1e-320")!))
        // Someone else edits another field.
        var edited = stored.fields
        edited["title"] = .string("Edited")
        try await ws.rest.put([(id: "z", fields: edited)])
        #expect(try ws.run("status", "--short").stdout == " M z\n")
        let pull = try ws.run("pull")
        #expect(pull.status == 0, "\(pull.stdout)\(pull.stderr)")
        #expect(try ws.run("status", "--short").stdout.isEmpty)
        #expect(try ws.run("pull").stdout == "nothing to do\n")
        #expect(try ws.run("push").stdout == "nothing to do\n")
        #expect(ws.read("z.json")?.contains("\"score\": 0.0,") == true)
        // Both sides make the same edit: converged, not a conflict over the zero's sign.
        try ws.write("z.json", "{\"id\": \"z\", \"title\": \"Same\", \"author\": \"A\", \"genre\": \"g\", \"score\": -0.0, \"tiny\": -1e-320}\n")
        edited["title"] = .string("Same")
        try await ws.rest.put([(id: "z", fields: edited)])
        #expect(try ws.run("status", "--short").stdout == "== z\n")
        #expect(try ws.run("pull").status == 0)
        #expect(try ws.run("status", "--short").stdout.isEmpty)
    }

    /// Local files that cannot keep what they say are refused with a clear
    /// `file:line:column`: a nonzero number that would round to 0.0 (like one
    /// too large), and keys that differ only by normalization.
    @Test func localValuesThatCannotBeKeptAreRefusedWithTheirPosition() async throws {
        let ws = try workspace("underflow")
        try ws.initialize()
        try ws.write("u.json", "{\"id\": \"u\", \"title\": \"T\", \"author\": \"A\", \"genre\": \"g\",\n  \"tiny\": 1e-400}\n")
        try ws.write("k.json", "{\"id\": \"k\", \"title\": \"T\", \"author\": \"A\", \"genre\": \"g\",\n  \"\(Self.nfc)\": 1, \"\(Self.nfd)\": 2}\n")
        let validate = try ws.run("validate")
        #expect(validate.status == 1)
        let output = validate.stdout + validate.stderr
        #expect(output.contains("u.json:2:11: number 1e-400 is too small for a double (it would become 0.0; the smallest is 5e-324)"), "\(output)")
        #expect(output.contains(#"k.json:2:14: keys "caf\u00E9" (at 2:3) and "cafe\u0301" differ only by Unicode normalization; a record cannot hold both: rename one"#), "\(output)")
        let push = try ws.run("push")
        #expect(push.status == 1)
        #expect(try await ws.rest.all().isEmpty)
    }
}
