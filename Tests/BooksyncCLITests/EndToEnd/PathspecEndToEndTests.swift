import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// Pathspecs on status, pull and push: what each selects, what a narrowed
/// command leaves alone, and what it costs.
@Suite struct PathspecEndToEndTests {
    /// A collection with top-level records, a dash id and reviews, all new.
    static func collection(host: String = "127.0.0.1:9") throws -> Workspace {
        let ws = try Workspace(project: Emulator.uniqueProject("pathspec"), host: host)
        try ws.initialize("--subcollection", "reviews")
        for id in ["dune", "emma", "sci-a", "sci-b", "-Nq1"] { try ws.write("\(id).json", bookFile(id)) }
        try FileManager.default.createDirectory(atPath: ws.root + "/dune/reviews", withIntermediateDirectories: true)
        for id in ["r1", "r2"] { try ws.write("dune/reviews/\(id).json", bookFile(id)) }
        return ws
    }

    @Test(arguments: [
        (["dune"], "A  dune\n"),
        (["dune.json"], "A  dune\n"),
        (["./-Nq1.json"], "A  -Nq1\n"),
        (["--", "-Nq1"], "A  -Nq1\n"),
        (["dune/reviews/"], "A  dune/reviews/r1\nA  dune/reviews/r2\n"),
        (["dune/"], "A  dune/reviews/r1\nA  dune/reviews/r2\n"),
        (["dune/reviews"], "A  dune/reviews/r1\nA  dune/reviews/r2\n"),
        (["dune/reviews/r1"], "A  dune/reviews/r1\n"),
        (["dune/reviews/r2.json"], "A  dune/reviews/r2\n"),
        (["sci-*"], "A  sci-a\nA  sci-b\n"),
        (["**/r1.json"], "A  dune/reviews/r1\n"),
        (["emma", "sci-?.json"], "A  emma\nA  sci-a\nA  sci-b\n"),
        (["."], "A  -Nq1\nA  dune\nA  dune/reviews/r1\nA  dune/reviews/r2\nA  emma\nA  sci-a\nA  sci-b\n"),
    ])
    func eachPathspecSelects(pathspecs: [String], expected: String) throws {
        let ws = try Self.collection()
        let status = try ws.run(["status", "--offline", "--short"] + pathspecs)
        #expect(status.status == 0, "\(pathspecs): \(status.stderr)")
        #expect(status.stdout == expected, "\(pathspecs)")
    }

    @Test(arguments: [
        (["nothing"], "pathspec 'nothing' matches no record"),
        (["*.txt"], "pathspec '*.txt' matches no record"),
        (["../outside.json"], "not a record file of the collection"),
        (["/etc/passwd.json"], "not a record file of the collection"),
        // The file system's root is outside the collection like /tmp, never "the current folder".
        (["/"], "'/': not a record file of the collection"),
        (["//"], "'//': not a record file of the collection"),
        (["../*"], "a glob is relative to the collection"),
        (["dune/likes/x"], "pathspec 'dune/likes/x'"),
    ])
    func aPathspecThatSelectsNothingIsAnError(pathspecs: [String], message: String) throws {
        let ws = try Self.collection()
        let status = try ws.run(["status", "--offline"] + pathspecs)
        #expect(status.status == 2, "\(pathspecs): \(status.stdout) \(status.stderr)")
        #expect(status.stderr.contains(message), "\(pathspecs): \(status.stderr)")
    }

    /// validate and fmt take pathspecs as well as files: a glob also selects
    /// a file whose name is no record's, so its problem is reported.
    @Test func validateAndFmtTakePathspecs() throws {
        let ws = try Self.collection()
        try ws.write("sci-Bad Name.json", bookFile("x"))
        try ws.write("emma.json", "{\"id\": \"emma\", \"title\": \"T\", \"author\": \"A\", \"genre\": \"g\"}")
        let glob = try ws.run("validate", "sci-*")
        #expect(glob.status == 1 && glob.stdout.contains("sci-Bad Name.json: ") && glob.stderr == "3 files checked, 1 invalid\n", "\(glob.stdout) [\(glob.stderr)]")
        let mixed = try ws.run("validate", "dune", "dune/reviews/", "emma.json")
        #expect(mixed.status == 0 && mixed.stderr == "4 files checked, all valid\n", "\(mixed.stdout) \(mixed.stderr)")
        let check = try ws.run("fmt", "--check", "--", "e*", "-Nq1")
        #expect(check.status == 1 && check.stdout == "emma.json\n", "\(check.stdout) \(check.stderr)")
        // `-C DIR` runs as if started there: file arguments are found from the collection too.
        let parent = (ws.root as NSString).deletingLastPathComponent
        for command in [["validate", "dune.json", "dune/reviews/r1.json"], ["fmt", "--check", "dune.json"]] {
            let fromOutside = try BinaryTests.run(["-C", "books"] + command, in: parent, environment: ws.environment)
            #expect(fromOutside.status == 0, "\(command): \(fromOutside.stdout) \(fromOutside.stderr)")
        }
        let none = try ws.run("validate", "nothing-*")
        #expect(none.status == 2 && none.stderr.contains("pathspec 'nothing-*' matches no record file"), "\(none.stderr)")
    }

    /// A refused folder is named as the user wrote it, never by a made-up file in it.
    @Test func aRefusedFolderIsNamedAsGiven() throws {
        let ws = try Self.collection()
        try FileManager.default.createSymbolicLink(atPath: ws.root + "/linked", withDestinationPath: ws.root + "/dune/reviews")
        let linked = try ws.run("status", "--offline", "linked/")
        #expect(linked.status == 2 && linked.stderr.contains("'linked/': its folder is reached through a symbolic link"), "\(linked.stderr)")
        let outside = try ws.run("status", "--offline", "../")
        #expect(outside.status == 2 && outside.stderr.contains("'../': not a record file"), "\(outside.stderr)")
        #expect(!(linked.stderr + outside.stderr).contains("x.json"))
    }

    /// A folder is named as its id reads (`café/`) as well as as its file
    /// is named (`caf%C3%A9/`), as globs are.
    @Test(arguments: ["caf\u{E9}/", "caf%C3%A9/", "caf\u{E9}/reviews/", "caf%C3%A9/reviews/"])
    func aFolderIsNamedAsItsIdReadsOrAsItIsEscaped(pathspec: String) throws {
        let ws = try Self.collection()
        try FileManager.default.createDirectory(atPath: ws.root + "/caf%C3%A9/reviews", withIntermediateDirectories: true)
        try ws.write("caf%C3%A9/reviews/r1.json", bookFile("r1"))
        let status = try ws.run("status", "--offline", "--short", pathspec)
        #expect(status.status == 0, "\(pathspec): \(status.stderr)")
        #expect(status.stdout == "A  caf\u{E9}/reviews/r1\n", "\(pathspec)")
    }

    @Test func globsAndFilesAreRelativeToTheCurrentFolder() throws {
        let ws = try Self.collection()
        let inside = try BinaryTests.run(["status", "--offline", "--short", "r*", "r2.json"], in: ws.root + "/dune/reviews", environment: ws.environment)
        #expect(inside.stdout == "A  dune/reviews/r1\nA  dune/reviews/r2\n", "\(inside.stdout) \(inside.stderr)")
    }

    /// A scoped push publishes one record: another edited record stays
    /// unpushed, its base entry byte for byte as it was.
    @Test func aScopedPushLeavesTheOtherEditAndItsBase() async throws {
        let ws = try Self.collection(host: try Emulator.requireHost())
        #expect(try ws.run("push").status == 0)
        try ws.write("dune.json", bookFile("dune", title: "Dune, revised"))
        try ws.write("emma.json", bookFile("emma", title: "Emma, draft"))
        let manifest = try #require(ws.read(".booksync/manifest.json"))
        let emmaLine = try #require(manifest.split(separator: "\n").first { $0.contains("\"emma\"") })
        let push = try ws.run("push", "dune.json")
        #expect(push.stdout == "update   dune\npushed 1\n", "\(push.stdout) \(push.stderr)")
        #expect(try ws.run("status", "--short").stdout == "M  emma\n")
        let after = try #require(ws.read(".booksync/manifest.json"))
        #expect(after.split(separator: "\n").contains(emmaLine), "emma's base entry is unchanged")
        let remote = try await ws.rest.all()
        #expect(remote["dune"]?.fields["title"] == .string("Dune, revised"))
        #expect(remote["emma"]?.fields["title"] == .string("Title"))
    }

    /// Pulling named records reads those documents by name: the billed reads
    /// are the ids named, not the collection.
    @Test func aScopedPullReadsOnlyTheNamedDocuments() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("pathspecreads"), host: try Emulator.requireHost())
        try ws.initialize()
        try await ws.rest.put((0..<40).map { (id: "b\($0)", fields: bookFields("b\($0)")) })
        #expect(try ws.run("pull").status == 0)
        try await ws.rest.put([(id: "b7", fields: bookFields("b7", title: "new")), (id: "b8", fields: bookFields("b8", title: "new"))])
        let pull = try ws.run("pull", "-v", "b7", "b30")
        #expect(pull.stdout == "pull     b7.json\npulled 1\n", "\(pull.stdout) \(pull.stderr)")
        #expect(pull.stderr.contains("2 documents read (estimated billed reads: 2)"), "\(pull.stderr)")
        #expect(pull.stderr.contains(":batchGet") && !pull.stderr.contains(":runQuery") && !pull.stderr.contains("GET projects"), "\(pull.stderr)")
        #expect(try ws.run("status", "--short").stdout == " M b8\n", "b8 is still to pull")
    }

    /// The mass-delete guard counts within the scope, and the emptied-target
    /// guard, which needs the whole collection, stays out of the way.
    @Test func theDeleteGuardCountsWithinTheScope() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("pathspecguard"), host: try Emulator.requireHost())
        try ws.initialize()
        let ids = (0..<20).map { "b\($0)" } + (0..<5).map { "sci-\($0)" }
        for id in ids { try ws.write("\(id).json", bookFile(id)) }
        #expect(try ws.run("push").status == 0)
        for id in ["sci-0", "sci-1", "sci-2", "sci-3"] { try await ws.rest.delete(id) }
        let refused = try ws.run("pull", "sci-*")
        #expect(refused.status == 4 && refused.stderr.contains("pull would delete 4 of 5 records"), "\(refused.stderr)")
        // The advice keeps the scope: without it, the forced pull would reach every record.
        #expect(refused.stderr.contains("run 'booksync pull --force 'sci-*'' (or raise --max-delete)"), "\(refused.stderr)")
        #expect(try ws.run("pull", "sci-*", "--max-delete", "90%").status == 0)
        #expect(try ws.recordFiles().count == 21)
    }

    /// A hostile review found a wiped target emptying the directory through
    /// pathspecs: `.` is no narrowing, and a folder or glob, which lists every
    /// name anyway, still sees that the target is empty.
    @Test func anEmptiedTargetIsRefusedThroughPathspecsToo() async throws {
        let ws = try Self.collection(host: try Emulator.requireHost())
        #expect(try ws.run("push").status == 0)
        for id in ["dune", "emma", "sci-a", "sci-b", "-Nq1", "dune/reviews/r1", "dune/reviews/r2"] {
            let (status, _) = try await ws.rest.request("DELETE", ws.rest.base + "/books/" + id)
            #expect(status == 200)
        }
        for pathspecs in [["."], ["sci-*"], ["dune/"], ["--max-delete", "100%", "."]] {
            let pull = try ws.run(["pull"] + pathspecs)
            #expect(pull.status == 4 && pull.stderr.contains("has no documents"), "\(pathspecs): \(pull.stdout) \(pull.stderr)")
        }
        #expect(try ws.recordFiles().count == 5)
    }

    /// A narrowed pull has not seen the whole collection: the change mark stays.
    @Test func aScopedPullDoesNotMoveTheChangeMark() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("pathspecmark"), host: try Emulator.requireHost())
        try ws.initialize("--change-field", "updatedAt")
        for id in ["a", "b"] { try ws.write("\(id).json", bookFile(id)) }
        #expect(try ws.run("push").status == 0)
        #expect(try ws.run("pull").status == 0)
        let mark = try #require(ws.read(".booksync/manifest.json")?.split(separator: "\n").first { $0.contains("changesSince") })
        try await ws.rest.put([(id: "a", fields: bookFields("a", title: "new")), (id: "b", fields: bookFields("b", title: "new"))], stamping: "updatedAt")
        #expect(try ws.run("pull", "a").stdout.contains("pull     a.json"))
        #expect(ws.read(".booksync/manifest.json")?.contains(String(mark)) == true, "the mark did not move")
        let rest = try ws.run("pull")
        #expect(rest.stdout.contains("pull     b.json") && !rest.stdout.contains("a.json"), "\(rest.stdout)")
    }

    /// A folder or glob lists only its id range: `b1*` in 40 documents reads
    /// the 11 names from `b1` to `b2` and the one body that changed.
    @Test func aGlobListsOnlyItsIdRange() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("pathspecrange"), host: try Emulator.requireHost())
        try ws.initialize()
        try await ws.rest.put((0..<40).map { (id: "b\($0)", fields: bookFields("b\($0)")) })
        #expect(try ws.run("pull").status == 0)
        try await ws.rest.put([(id: "b12", fields: bookFields("b12", title: "new")), (id: "b3", fields: bookFields("b3", title: "new"))])
        let pull = try ws.run("pull", "-v", "b1*")
        #expect(pull.stdout == "pull     b12.json\npulled 1\n", "\(pull.stdout) \(pull.stderr)")
        #expect(pull.stderr.contains("listed only the names in the pathspecs' id range (11 in scope)"), "\(pull.stderr)")
        #expect(pull.stderr.contains("12 documents read (estimated billed reads: 12)"), "\(pull.stderr)")
        #expect(try ws.run("status", "--short").stdout == " M b3\n", "b3 is still to pull")
    }

    /// Whatever the names (a prefix of another id, escapes, a dot that may be
    /// the `.json`, characters beyond the BMP, subcollection folders), a
    /// range read finds exactly what the same pathspec selects among local
    /// files: no record is outside its pattern's range.
    @Test func everyRangeHoldsWhatItsPatternSelects() async throws {
        let host = try Emulator.requireHost()
        let project = Emulator.uniqueProject("pathspecranges")
        let local = try Workspace(project: project, host: host, name: "local")
        try local.initialize("--subcollection", "reviews")
        let records = ["du", "dune", "dunes", "dunf", "dune.json", "dune.jsx", "caf\u{E9}", "caf\u{E9}s", "a\u{10FFFF}b", "a\u{10FFFF}", "b", "-Nq1", "-.x", ".hidden", "__x__y", "__x_",
                   "dune/reviews/r1", "dune/reviews/s1", "dunes/reviews/r1", "du/reviews/r9", "caf\u{E9}/reviews/r1"]
        for id in records {
            let record = try RecordID(path: id, subcollections: Subcollections.parse(paths: ["reviews"], requirements: []))
            let folder = (local.root + "/" + record.fileName as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try local.write(record.fileName, bookFile(record.documentID))
        }
        let patterns = ["du*", "dune*", "dune/", "dune/reviews/r*", "caf*", "caf%C3*", "caf%C3%A9*", "caf\u{E9}*", "dune.js*", "dune.j*", "d*/reviews/*",
                        "du*/**", "a*", "b*", "-*", "-N*", "-.*", "_*", "__x__*", "*", "**/r1.json"]
        func ids(_ output: String) -> [String] { output.split(separator: "\n").map { String($0.split(separator: " ").last!) }.sorted() }
        // Before the push every file is "added": the offline status lists what each pattern selects.
        var selected: [String: [String]] = [:]
        for pattern in patterns {
            let status = try local.run("status", "--offline", "--short", "--", pattern)
            #expect(status.status == 0, "\(pattern): \(status.stderr)")
            selected[pattern] = ids(status.stdout)
        }
        #expect(selected["dune*"] == ["dune", "dune.json", "dune.jsx", "dunes"], "the table means what it says")
        #expect(try local.run("push").status == 0)
        let fresh = try Workspace(project: project, host: host, name: "fresh", scratch: local.scratch)
        try fresh.initialize("--subcollection", "reviews")
        for pattern in patterns {
            let listed = try fresh.run("status", "--short", "-v", "--", pattern)
            #expect(listed.status == 0, "\(pattern): \(listed.stderr)")
            #expect(ids(listed.stdout) == selected[pattern], "\(pattern): \(listed.stdout)")
            let ranged = !["*", "**/r1.json"].contains(pattern)
            #expect(listed.stderr.contains("listed only the names in the pathspecs'") == ranged, "\(pattern): \(listed.stderr)")
        }
    }
}
