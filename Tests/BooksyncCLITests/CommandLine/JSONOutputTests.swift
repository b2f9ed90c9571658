import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// `pull`, `push` and `sync --json` against the emulator: one versioned
/// document on stdout (JSONDocuments.syncReports), the same events and
/// counts as the text, the same exit codes, and ids exact but terminal-safe.
@Suite struct JSONOutputTests {
    func workspace(_ name: String) throws -> Workspace {
        try Workspace(project: Emulator.uniqueProject(name), host: try Emulator.requireHost())
    }

    /// The document on stdout, which must be exactly one JSON object.
    func document(_ output: BinaryTests.Output, sourceLocation: SourceLocation = #_sourceLocation) throws -> Fields {
        guard case .map(let fields) = try JSONParser.parse(Array(output.stdout.utf8), decodeTags: false) else {
            Issue.record("not a JSON object: \(output.stdout)", sourceLocation: sourceLocation)
            return [:]
        }
        #expect(fields["version"] == .integer(1), sourceLocation: sourceLocation)
        return fields
    }

    func phases(_ document: Fields) -> [Fields] {
        guard case .array(let phases)? = document["phases"] else { return [] }
        return phases.compactMap { if case .map(let fields) = $0 { fields } else { nil } }
    }

    /// Each event of a phase by record id.
    func events(_ phase: Fields) -> [String: Fields] {
        guard case .array(let events)? = phase["events"] else { return [:] }
        var byID: [String: Fields] = [:]
        for case .map(let event) in events {
            if case .string(let id)? = event["id"] { byID[id] = event }
        }
        return byID
    }

    func actions(_ phase: Fields) -> [String: String] {
        events(phase).compactMapValues { if case .string(let action)? = $0["action"] { action } else { nil } }
    }

    func count(_ document: Fields, _ key: String) -> Int64? {
        if case .map(let counts)? = document["counts"], case .integer(let n)? = counts[key] { return n }
        return nil
    }

    @Test func pushPullAndSyncPrintOneVersionedDocument() async throws {
        let ws = try workspace("jsonsync")
        try ws.initialize()
        try ws.write("a.json", bookFile("a"))
        try ws.write("b.json", bookFile("b"))
        try ws.write("bad.json", #"{"id": "bad", "title": {"$timestamp": "no"}}"#)
        try ws.write("bad%zz.json", "{}")

        // A dry run: the plan, every problem of the invalid file, nothing written.
        let plan = try ws.run("push", "--dry-run", "--json")
        #expect(plan.status == 1, "\(plan.stderr)")
        let planned = try document(plan)
        #expect(planned["command"] == .string("push"))
        #expect(planned["dryRun"] == .bool(true))
        #expect(planned["needsAttention"] == .bool(true))
        #expect(phases(planned).map { $0["command"] } == [.string("push")])
        let push = try #require(phases(planned).first)
        #expect(actions(push) == ["a": "create", "b": "create", "bad": "invalid"])
        let bad = events(push)["bad"]
        #expect(bad?["local"] == .string("invalid"))
        #expect(bad?["problems"] == .array([
            .string("1:24: $timestamp: 'no' is not an RFC 3339 timestamp like 2024-05-01T12:00:00.000000Z"),
            .string("missing required field 'author' (string)"),
            .string("missing required field 'genre' (string)"),
        ]))
        #expect(push["unusableFiles"] == .array([.map([
            "file": .string("bad%zz.json"),
            "problem": .string("file name is not a percent-encoded record id (write other bytes as %XX, uppercase hex, of their UTF-8)"),
        ])]))
        #expect(count(planned, "pushed") == 2 && count(planned, "invalid") == 2 && count(planned, "conflict") == 0)
        #expect(try await ws.rest.all().isEmpty, "a dry run writes nothing")

        let pushed = try document(try ws.run("push", "--json"))
        #expect(pushed["dryRun"] == .bool(false))
        #expect(phases(pushed).first.map(actions) == ["a": "create", "b": "create", "bad": "invalid"])
        #expect(Set(try await ws.rest.all().keys) == ["a", "b"])

        // Remote changes come back as pull events; nothing needs attention.
        try ws.remove("bad.json")
        try ws.remove("bad%zz.json")
        try await ws.rest.put([(id: "a", fields: bookFields("a", title: "Remote"))])
        try await ws.rest.delete("b")
        let pull = try ws.run("pull", "--json")
        #expect(pull.status == 0, "\(pull.stdout)\(pull.stderr)")
        let pulled = try document(pull)
        #expect(pulled["command"] == .string("pull"))
        #expect(pulled["needsAttention"] == .bool(false))
        #expect(phases(pulled).first.map(actions) == ["a": "write", "b": "delete"])
        #expect(count(pulled, "pulled") == 2)

        // A conflict: pull stores it, push refuses the record and says resolve settles it.
        try ws.write("a.json", bookFile("a", title: "Local"))
        try await ws.rest.put([(id: "a", fields: bookFields("a", title: "Other"))])
        let dryRunSync = try document(try ws.run("sync", "--dry-run", "--json"))
        #expect(phases(dryRunSync).map { $0["command"] } == [.string("pull")], "a dry-run sync cannot plan its push")
        let sync = try ws.run("sync", "--json")
        #expect(sync.status == 1)
        let synced = try document(sync)
        #expect(synced["command"] == .string("sync"))
        #expect(phases(synced).map { $0["command"] } == [.string("pull"), .string("push")])
        let conflict = events(phases(synced)[0])["a"]
        #expect(conflict?["action"] == .string("conflict"))
        #expect(conflict?["local"] == .string("modified") && conflict?["remote"] == .string("modified"))
        #expect(conflict?["conflictFields"] == .array([.string("title")]))
        let refused = events(phases(synced)[1])["a"]
        #expect(refused?["action"] == .string("remote-changed"))
        #expect(refused?["unresolvedConflict"] == .bool(true))
        #expect(synced["needsAttention"] == .bool(true))
    }

    /// `validate --json` is written a file at a time; the bytes are exactly
    /// the canonical document (`JSONDocuments.text`) of what they hold: with
    /// no file, one valid file, and valid and invalid files with several
    /// problems each; named files come in command-line order.
    @Test(arguments: [[String](), ["a"], ["a", "bad", "b", "worse"]])
    func validateJSONIsTheCanonicalDocumentWrittenAFileAtATime(files: [String]) throws {
        let scratch = try ScratchDirectory()
        let invalid: Set = ["bad", "worse"]
        let initialized = try BinaryTests.run(["init", "--firestore", "p", "--collection", "books"], in: scratch.path)
        #expect(initialized.status == 0, "\(initialized.stderr)")
        for name in files {
            let text = invalid.contains(name)
                ? #"{"id": "\#(name)", "title": 7, "genre": "g", "x": [1, "#  // type error, missing author, syntax error
                : #"{"id": "\#(name)", "title": "T", "author": "A", "genre": "g"}"#
            try scratch.write(name + ".json", text)
        }
        for arguments in [["validate", "--json"], ["validate", "--json"] + files.reversed().map { $0 + ".json" }] where !(files.isEmpty && arguments.count > 2) {
            let output = try BinaryTests.run(arguments, in: scratch.path)
            #expect(output.status == (files.contains("bad") ? 1 : 0), "\(arguments): \(output.stderr)")
            let parsed = try document(output)
            #expect(output.stdout == String(decoding: CanonicalJSON.encode(parsed, leadingKeys: ["version"]), as: UTF8.self),
                    "\(arguments): not the canonical document")
            guard case .array(let entries)? = parsed["files"] else {
                Issue.record("no files array: \(output.stdout)")
                continue
            }
            let names = entries.compactMap { entry -> String? in
                if case .map(let fields) = entry, case .string(let name)? = fields["file"] { name } else { nil }
            }
            #expect(names == (arguments.count > 2 ? files.reversed() : files.sorted()).map { $0 + ".json" })
            #expect(parsed["checked"] == .integer(Int64(files.count)))
            #expect(parsed["invalid"] == .integer(Int64(files.filter(invalid.contains).count)))
        }
    }

    /// Subcollection files are named by their path in the collection: two
    /// `r1.json` in two folders are two records, and a refused folder is named whole.
    @Test func validateJSONNamesSubcollectionFilesByPath() throws {
        let scratch = try ScratchDirectory()
        #expect(try BinaryTests.run(["init", "--firestore", "p", "--collection", "books", "--subcollection", "reviews"], in: scratch.path).status == 0)
        for folder in ["dune/reviews", "ghost"] { try FileManager.default.createDirectory(atPath: scratch.path + "/" + folder, withIntermediateDirectories: true) }
        try scratch.write("dune/reviews/r1.json", #"{"id": "r1"}"#)
        try FileManager.default.createSymbolicLink(atPath: scratch.path + "/ghost/reviews", withDestinationPath: scratch.path + "/dune/reviews")
        let output = try BinaryTests.run(["validate", "--json"], in: scratch.path)
        guard case .array(let entries)? = try document(output)["files"] else {
            Issue.record("no files array: \(output.stdout)")
            return
        }
        let names = entries.compactMap { entry -> String? in
            if case .map(let fields) = entry, case .string(let name)? = fields["file"] { name } else { nil }
        }
        #expect(names == ["dune/reviews/r1.json", "ghost/reviews"], "\(output.stdout)")
        #expect(output.status == 1)
    }

    /// Ids and messages are outside text: exact in the document, but every
    /// scalar a terminal would act on is written `\uXXXX`.
    @Test func idsAreExactButNeverRawControls() async throws {
        let ws = try workspace("jsonhostile")
        try ws.initialize()
        let hostile = "x\u{1B}]0;PWNED\u{07}\u{9B}2J\u{202E}"
        try ws.write(try RecordID(hostile).fileName, bookFile(hostile))
        try ws.write("bad.json", #"{"id": "bad", "title": "t", "author": "a", "genre": "g", "__x"# + "\u{202E}" + #"__": 1}"#)
        for arguments in [["push", "--json"], ["validate", "--json"]] {
            let output = try BinaryTests.run(arguments, in: ws.root, environment: ws.environment)
            #expect(output.status == 1, "\(arguments): \(output.stderr)")
            #expect(TerminalSafetyTests.problems(output.stdout, colored: false).isEmpty, "\(arguments): \(output.stdout)")
            #expect(output.stdout.contains(#"\u001b]0;PWNED\u0007\u009b2J\u202e"#) || arguments[0] == "validate", "\(output.stdout)")
            #expect(output.stdout.contains(#"__x\u202e__"#), "\(output.stdout)")
            let parsed = try document(output)
            if arguments[0] == "push" {
                #expect(phases(parsed).first.map(actions)?[hostile] == "create")
            }
        }
        #expect(try await ws.rest.all()[hostile] != nil)
    }
}
