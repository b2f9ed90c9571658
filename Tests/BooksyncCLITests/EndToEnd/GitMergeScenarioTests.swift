import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// A git repository in a scratch directory with a collection `books/` in it,
/// driven by the real `git` and the built `booksync` (which git finds on PATH
/// when it runs the merge drivers).
struct GitScratchRepository {
    let scratch: ScratchDirectory
    /// The collection's folder in the repository; nil for the repository's top folder.
    let collectionFolder: String?
    var path: String { scratch.path }
    var books: String { collectionFolder.map { path + "/" + $0 } ?? path }

    init(collectionFolder: String? = "books") throws {
        scratch = try ScratchDirectory()
        self.collectionFolder = collectionFolder
        #expect(try git("init", "-q", "-b", "main").status == 0)
        try FileManager.default.createDirectory(atPath: books, withIntermediateDirectories: true)
    }

    /// git with no user or system configuration, so the machine's settings do not leak in.
    static var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = URL(fileURLWithPath: BinaryTests.executable).deletingLastPathComponent().path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        env["GIT_CONFIG_GLOBAL"] = "/dev/null"
        env["GIT_CONFIG_NOSYSTEM"] = "1"
        env["GIT_AUTHOR_NAME"] = "t"; env["GIT_AUTHOR_EMAIL"] = "t@example.invalid"
        env["GIT_COMMITTER_NAME"] = "t"; env["GIT_COMMITTER_EMAIL"] = "t@example.invalid"
        env["NO_COLOR"] = "1"
        // Only the tests that reach the emulator name it (`extra:`): with it set,
        // a base from before targets were recorded is not origin's to use.
        env["FIRESTORE_EMULATOR_HOST"] = nil
        return env
    }

    @discardableResult
    func git(_ args: String...) throws -> BinaryTests.Output {
        try BinaryTests.run(args, in: path, environment: Self.environment, program: "/usr/bin/git", cleanEnvironment: true)
    }

    @discardableResult
    func booksync(_ args: String..., extra: [String: String] = [:]) throws -> BinaryTests.Output {
        try BinaryTests.run(args, in: books, environment: Self.environment.merging(extra) { _, new in new }, cleanEnvironment: true)
    }

    func write(_ relativePath: String, _ text: String) throws {
        try text.write(toFile: books + "/" + relativePath, atomically: true, encoding: .utf8)
    }

    func read(_ relativePath: String) throws -> String {
        try String(contentsOfFile: books + "/" + relativePath, encoding: .utf8)
    }

    func commitAll(_ message: String) throws {
        try git("add", "-A")
        let commit = try git("commit", "-qm", message)
        #expect(commit.status == 0, "git commit: \(commit.stdout)\(commit.stderr)")
    }

    func manifest() throws -> Manifest {
        try Manifest.decode(Array(try read(".booksync/manifest.json").utf8))
    }

    /// Records `text` as synced at `revision` in the manifest, as a pull or push would.
    func recordSynced(_ id: String, _ text: String, revision: String) throws {
        try write(RecordID(id).fileName, text)
        var manifest = try manifest()
        manifest.entries[try RecordID(id)] = BaseEntry(hash: SHA256.contentHash(Array(text.utf8)), revision: revision)
        try write(".booksync/manifest.json", String(decoding: manifest.encoded(), as: UTF8.self))
    }

    /// A collection set up as by a booksync from before the manifest driver:
    /// only the record driver in `.gitattributes` and the git config.
    func initializeAsOldInstall() throws {
        #expect(try booksync("init", "-q", "--firestore", "p", "--collection", "books").status == 0)
        try write(".gitattributes", "/*.json merge=booksync\n")
        try git("config", "merge.booksync.name", "booksync field-level merge of record files")
        try git("config", "merge.booksync.driver", "booksync merge-file %O %A %B %P")
    }
}

/// git merges of a collection: the manifest merged by record, record files
/// merged into valid records only, and an unfinished merge explained.
@Suite struct GitMergeScenarioTests {
    /// Two branches each record a different record in the manifest (as two
    /// pulls or pushes of different records do), from a base with one record.
    static func divergingBranches(_ repo: GitScratchRepository) throws {
        try repo.recordSynced("base", bookFile("base"), revision: "2024-01-01T00:00:00.000001Z")
        try repo.commitAll("base")
        try repo.git("checkout", "-qb", "other")
        try repo.recordSynced("alpha", bookFile("alpha"), revision: "2024-01-02T00:00:00.000001Z")
        try repo.commitAll("alpha")
        try repo.git("checkout", "-q", "main")
        try repo.recordSynced("beta", bookFile("beta"), revision: "2024-01-03T00:00:00.000001Z")
        try repo.commitAll("beta")
    }

    @Test func branchesThatSyncedDifferentRecordsMergeCleanly() throws {
        let repo = try GitScratchRepository()
        let initialize = try repo.booksync("init", "--firestore", "p", "--collection", "books", "--git")
        #expect(initialize.status == 0, "\(initialize.stderr)")
        #expect(try repo.read(".gitattributes") == "/*.json merge=booksync\n/.booksync/manifest.json merge=booksync-manifest\n")
        #expect(try repo.git("config", "merge.booksync-manifest.driver").stdout == "booksync merge-manifest -- %O %A %B %P\n")
        try Self.divergingBranches(repo)

        let merge = try repo.git("merge", "--no-edit", "other")
        #expect(merge.status == 0, "git merge failed: \(merge.stdout)\(merge.stderr)")
        let merged = try repo.manifest()
        #expect(Set(merged.entries.keys.map(\.rawValue)) == ["base", "alpha", "beta"])
        let status = try repo.booksync("status", "--offline")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("3 records, nothing changed"), "\(status.stdout)")
    }

    /// End to end: two branches each push a different new record to the
    /// emulator; git merges them without a conflict and the merged collection
    /// is in sync with the remote.
    @Test func branchesThatPushedDifferentRecordsMergeAndStayInSync() throws {
        let host = try Emulator.requireHost()
        let project = Emulator.uniqueProject("gitpush")
        let repo = try GitScratchRepository()
        let remote = ["FIRESTORE_EMULATOR_HOST": host]
        #expect(try repo.booksync("init", "-q", "--firestore", project, "--collection", "books", "--git").status == 0)
        try repo.write("base.json", bookFile("base"))
        #expect(try repo.booksync("push", "-q", extra: remote).status == 0)
        try repo.commitAll("base")
        try repo.git("checkout", "-qb", "other")
        try repo.write("alpha.json", bookFile("alpha"))
        #expect(try repo.booksync("push", "-q", extra: remote).status == 0)
        try repo.commitAll("alpha")
        try repo.git("checkout", "-q", "main")
        try repo.write("beta.json", bookFile("beta"))
        #expect(try repo.booksync("push", "-q", extra: remote).status == 0)
        try repo.commitAll("beta")

        let merge = try repo.git("merge", "--no-edit", "other")
        #expect(merge.status == 0, "git merge failed: \(merge.stdout)\(merge.stderr)")
        #expect(Set(try repo.manifest().entries.keys.map(\.rawValue)) == ["base", "alpha", "beta"])
        let status = try repo.booksync("status", extra: remote)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("3 records, nothing changed since the last sync"), "\(status.stdout)")
    }

    /// The same merge without the manifest driver (an install from before it)
    /// conflicts in the manifest; status says what happened and what to do,
    /// and doing it finishes the merge.
    @Test func manifestWithConflictMarkersSaysHowToFinishTheMerge() throws {
        let repo = try GitScratchRepository()
        try repo.initializeAsOldInstall()
        try Self.divergingBranches(repo)
        let merge = try repo.git("merge", "--no-edit", "other")
        #expect(merge.status != 0)
        #expect(try repo.read(".booksync/manifest.json").contains("<<<<<<<"))

        for command in [["status", "--offline"], ["status", "--offline", "--json"], ["diff", "--offline"]] {
            let status = try BinaryTests.run(command, in: repo.books, environment: GitScratchRepository.environment, cleanEnvironment: true)
            #expect(status.status == 2, "\(command): \(status.stderr)")
            #expect(status.stderr.contains("manifest.json has git conflict markers: a git merge of it is unfinished"), "\(status.stderr)")
            #expect(status.stderr.contains("'booksync init --git'"))
            #expect(status.stderr.contains("'git checkout -m -- "))
            #expect(status.stderr.contains("'git checkout --ours -- "))
        }

        // The advice works: install the driver, redo the merge of the manifest.
        let upgrade = try repo.booksync("init", "--git")
        #expect(upgrade.status == 0, "\(upgrade.stderr)")
        #expect(try repo.read(".gitattributes") == "/*.json merge=booksync\n/.booksync/manifest.json merge=booksync-manifest\n")
        let redo = try repo.git("checkout", "-m", "--", "books/.booksync/manifest.json")
        #expect(redo.status == 0, "\(redo.stderr)")
        #expect(Set(try repo.manifest().entries.keys.map(\.rawValue)) == ["base", "alpha", "beta"])
        try repo.commitAll("merged")
        #expect(try repo.booksync("status", "--offline").status == 0)
    }

    /// config.json has no merge driver: markers in it get advice too, not a syntax error.
    @Test func configWithConflictMarkersSaysToFinishTheMerge() throws {
        let repo = try GitScratchRepository()
        #expect(try repo.booksync("init", "-q", "--firestore", "p", "--collection", "books").status == 0)
        let config = try repo.read(".booksync/config.json")
        try repo.write(".booksync/config.json", "<<<<<<< HEAD\n" + config + "=======\n" + config + ">>>>>>> other\n")
        let status = try repo.booksync("status", "--offline")
        #expect(status.status == 2)
        #expect(status.stderr.contains("config.json has git conflict markers: a git merge of it is unfinished. Edit it"), "\(status.stderr)")
    }

    /// The same record synced at different revisions on the two branches (the
    /// content is the same, so only the manifest conflicts): the merge stops,
    /// names the record (escaped), and leaves a manifest booksync can read.
    @Test func recordSyncedDifferentlyOnBothBranchesIsAConflict() throws {
        let repo = try GitScratchRepository()
        #expect(try repo.booksync("init", "-q", "--firestore", "p", "--collection", "books", "--git").status == 0)
        let hostile = "dune\u{1B}[2J"
        try repo.recordSynced("keep", bookFile("keep"), revision: "2024-01-01T00:00:00.000001Z")
        try repo.recordSynced(hostile, bookFile(hostile), revision: "2024-01-01T00:00:00.000001Z")
        try repo.commitAll("base")
        try repo.git("checkout", "-qb", "other")
        try repo.recordSynced(hostile, bookFile(hostile, title: "New"), revision: "2024-01-02T00:00:00.000001Z")
        try repo.commitAll("theirs")
        try repo.git("checkout", "-q", "main")
        try repo.recordSynced(hostile, bookFile(hostile, title: "New"), revision: "2024-01-03T00:00:00.000001Z")
        try repo.recordSynced("mine", bookFile("mine"), revision: "2024-01-03T00:00:00.000001Z")
        try repo.commitAll("ours")

        let merge = try repo.git("merge", "--no-edit", "other")
        #expect(merge.status != 0)
        let output = merge.stdout + merge.stderr
        #expect(output.contains("CONFLICT (content): Merge conflict in books/.booksync/manifest.json"), "\(output)")
        #expect(output.contains("booksync merge-manifest: books/.booksync/manifest.json: 1 record synced differently on the two branches"), "\(output)")
        #expect(output.contains("'dune\\x1b[2J': changed differently on both sides"), "\(output)")
        #expect(!output.contains("\u{1B}"))
        let merged = try repo.manifest()
        #expect(Set(merged.entries.keys.map(\.rawValue)) == ["keep", "mine"])
        // Without a base entry the record is compared by content: here a local addition offline.
        let status = try repo.booksync("status", "--offline", "--short")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("dune"))
    }

    struct RecordRow: CustomTestStringConvertible, Sendable {
        let name: String
        /// Their version of dune.json (ours changes the title).
        let theirs: String
        let message: String
        var testDescription: String { name }
    }

    static let recordRows: [RecordRow] = [
        RecordRow(name: "their side dropped a required field",
                  theirs: "{\n  \"id\": \"dune\",\n  \"title\": \"Dune\",\n  \"author\": \"Herbert\",\n  \"year\": 1966\n}\n",
                  message: "books/dune.json: the merged record would be invalid: missing required field 'genre' (string); kept our value of 'genre'"),
        RecordRow(name: "their side changed the id",
                  theirs: "{\n  \"id\": \"dune-messiah\",\n  \"title\": \"Dune\",\n  \"author\": \"Herbert\",\n  \"genre\": \"sf\",\n  \"year\": 1966\n}\n",
                  message: "books/dune.json: the merged record would be invalid: field 'id' is \"dune-messiah\" but the file name says \"dune\"; rename the file or fix the field; kept our value of 'id'"),
    ]

    /// A field merge that git would otherwise take cleanly, but whose result
    /// breaks the collection's rules: the merge stops, names the record's path
    /// (not git's temporary file), and the file stays a valid record with
    /// their other changes.
    @Test(arguments: recordRows)
    func recordMergeThatWouldBeInvalidIsAConflict(_ row: RecordRow) throws {
        let repo = try GitScratchRepository()
        #expect(try repo.booksync("init", "-q", "--firestore", "p", "--collection", "books", "--git").status == 0)
        let base = "{\n  \"id\": \"dune\",\n  \"title\": \"Dune\",\n  \"author\": \"Herbert\",\n  \"genre\": \"sf\",\n  \"year\": 1965\n}\n"
        try repo.write("dune.json", base)
        try repo.commitAll("base")
        try repo.git("checkout", "-qb", "other")
        try repo.write("dune.json", row.theirs)
        try repo.commitAll("theirs")
        try repo.git("checkout", "-q", "main")
        try repo.write("dune.json", base.replacingOccurrences(of: "\"Dune\"", with: "\"Dune (1965)\""))
        try repo.commitAll("ours")

        let merge = try repo.git("merge", "--no-edit", "other")
        #expect(merge.status != 0)
        let output = merge.stdout + merge.stderr
        #expect(output.contains("booksync merge-file: " + row.message), "\(output)")
        #expect(!output.contains(".merge_file"), "\(output)")
        #expect(try repo.read("dune.json")
            == "{\n  \"id\": \"dune\",\n  \"title\": \"Dune (1965)\",\n  \"author\": \"Herbert\",\n  \"genre\": \"sf\",\n  \"year\": 1966\n}\n")
        #expect(try repo.git("diff", "--name-only", "--diff-filter=U").stdout == "books/dune.json\n")
    }

    /// Parse errors and other messages of the record driver name the record,
    /// not git's temporary file; where a side breaks is said in words, since
    /// `their version:2:1` read as a file name.
    @Test func mergeFileNamesThePathGitMerges() throws {
        let scratch = try ScratchDirectory()
        let base = scratch.path + "/.merge_file_a", ours = scratch.path + "/.merge_file_b", theirs = scratch.path + "/.merge_file_c"
        try bookFile("x").write(toFile: base, atomically: true, encoding: .utf8)
        try bookFile("x", title: "Ours").write(toFile: ours, atomically: true, encoding: .utf8)
        try "{\"id\": \"x\",\n".write(toFile: theirs, atomically: true, encoding: .utf8)
        let result = try BinaryTests.run(["merge-file", base, ours, theirs, "books/x.json"], in: scratch.path)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("booksync merge-file: books/x.json: their version (line 2, column 1): unexpected end of file"), "\(result.stderr)")
        #expect(!result.stderr.contains("version:"), "\(result.stderr)")
        #expect(!result.stderr.contains(".merge_file"))
    }

    /// The editor's `$schema` is the file's, not the record's: git's merge
    /// driver merges the fields and keeps our hint first, even when theirs
    /// pointed elsewhere; `fmt` keeps it first too.
    @Test func mergeFileAndFmtKeepTheEditorHint() throws {
        let scratch = try ScratchDirectory()
        let base = scratch.path + "/base.json", ours = scratch.path + "/ours.json", theirs = scratch.path + "/theirs.json"
        func withHint(_ hint: String, _ file: String) -> String { "{\"$schema\": \"\(hint)\", " + file.dropFirst() }
        try bookFile("x").write(toFile: base, atomically: true, encoding: .utf8)
        try withHint("./.booksync/record.schema.json", bookFile("x", title: "Ours")).write(toFile: ours, atomically: true, encoding: .utf8)
        try withHint("https://example.com/other.json", bookFile("x", genre: "poetry")).write(toFile: theirs, atomically: true, encoding: .utf8)
        let result = try BinaryTests.run(["merge-file", base, ours, theirs, "books/x.json"], in: scratch.path)
        #expect(result.status == 0, "\(result.stderr)")
        let merged = try String(contentsOfFile: ours, encoding: .utf8)
        #expect(merged.hasPrefix("{\n  \"$schema\": \"./.booksync/record.schema.json\",\n  \"id\": \"x\",\n  \"title\": \"Ours\","), "\(merged)")
        #expect(merged.contains("\"genre\": \"poetry\""))
        // Only theirs changed the hint: theirs wins, as for any field.
        try withHint("./old.json", bookFile("x")).write(toFile: base, atomically: true, encoding: .utf8)
        try withHint("./old.json", bookFile("x", title: "Ours")).write(toFile: ours, atomically: true, encoding: .utf8)
        try withHint("./.booksync/record.schema.json", bookFile("x")).write(toFile: theirs, atomically: true, encoding: .utf8)
        #expect(try BinaryTests.run(["merge-file", base, ours, theirs, "books/x.json"], in: scratch.path).status == 0)
        #expect(try String(contentsOfFile: ours, encoding: .utf8).hasPrefix("{\n  \"$schema\": \"./.booksync/record.schema.json\",\n  \"id\": \"x\",\n  \"title\": \"Ours\","))

        let repo = try GitScratchRepository()
        #expect(try repo.booksync("init", "-q", "--collection", "books", "--firestore", "p").status == 0)
        try repo.write("x.json", #"{"title": "T", "id": "x", "genre": "g", "author": "A", "$schema": "./.booksync/record.schema.json"}"#)
        #expect(try repo.booksync("fmt", "-q").status == 0)
        #expect(try repo.read("x.json") == "{\n  \"$schema\": \"./.booksync/record.schema.json\",\n  \"id\": \"x\",\n  \"title\": \"T\",\n  \"author\": \"A\",\n  \"genre\": \"g\"\n}\n")
    }
}
