import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit
@testable import BooksyncCLI

/// Record ids that start with `-`, as Firebase push ids do (`-Nq1abc`): git's
/// merge drivers get them after `--`, drivers an older booksync installed
/// without it are named with the command that updates them, and every
/// command booksync suggests for such a record works pasted into a shell.
@Suite struct DashIDTests {
    static let pushID = "-Nq1abc"
    static var pushFile: String { pushID + ".json" }

    static func book(title: String = "Dune", pages: Int64 = 412) -> String {
        bookFile(pushID, title: title, extra: ["year": .integer(1965), "pages": .integer(pages)])
    }

    // MARK: git merges

    /// The collection is the repository's top folder, so git's `%P` is the
    /// record's file name itself, `-Nq1abc.json`: both branches' changes
    /// arrive, without conflict markers.
    @Test func branchesEditingDifferentFieldsOfADashRecordMergeCleanly() throws {
        let repo = try GitScratchRepository(collectionFolder: nil)
        let initialize = try repo.booksync("init", "-q", "--firestore", "p", "--collection", "books", "--git")
        #expect(initialize.status == 0, "\(initialize.stderr)")
        #expect(try repo.git("config", "merge.booksync.driver").stdout == "booksync merge-file -- %O %A %B %P\n")
        try repo.write(Self.pushFile, Self.book())
        try repo.commitAll("base")
        try repo.git("checkout", "-qb", "other")
        try repo.write(Self.pushFile, Self.book(title: "Dune (1965)"))
        try repo.commitAll("title")
        try repo.git("checkout", "-q", "main")
        try repo.write(Self.pushFile, Self.book(pages: 896))
        try repo.commitAll("pages")

        let merge = try repo.git("merge", "--no-edit", "other")
        #expect(merge.status == 0, "git merge failed: \(merge.stdout)\(merge.stderr)")
        let merged = try repo.read(Self.pushFile)
        #expect(merged == Self.book(title: "Dune (1965)", pages: 896))
        #expect(!merged.contains("<<<<<<<"))
    }

    /// A collection folder whose name starts with `-` makes git's `%P` of the
    /// manifest `-books/.booksync/manifest.json`: branches that synced
    /// different records still merge it by record.
    @Test func manifestOfADashFolderMergesByRecord() throws {
        let repo = try GitScratchRepository(collectionFolder: "-books")
        let initialize = try repo.booksync("init", "-q", "--firestore", "p", "--collection", "books", "--git")
        #expect(initialize.status == 0, "\(initialize.stderr)")
        try GitMergeScenarioTests.divergingBranches(repo)

        let merge = try repo.git("merge", "--no-edit", "other")
        #expect(merge.status == 0, "git merge failed: \(merge.stdout)\(merge.stderr)")
        #expect(Set(try repo.manifest().entries.keys.map(\.rawValue)) == ["base", "alpha", "beta"])
    }

    /// The driver's operands through the whole command line: after `--` a
    /// file name starting with `-` is an operand; without `--` it is an
    /// unknown option, which is why the drivers are installed with it.
    @Test func mergeDriverTakesItsOperandsAfterDoubleDash() async throws {
        let scratch = try ScratchDirectory()
        let (base, ours, theirs) = (scratch.path + "/.merge_file_a", scratch.path + "/.merge_file_b", scratch.path + "/.merge_file_c")
        try Self.book().write(toFile: base, atomically: true, encoding: .utf8)
        try Self.book(pages: 896).write(toFile: ours, atomically: true, encoding: .utf8)
        try Self.book(title: "Dune (1965)").write(toFile: theirs, atomically: true, encoding: .utf8)

        let withoutDoubleDash = await runBooksync(["merge-file", base, ours, theirs, Self.pushFile], in: scratch.path)
        #expect(withoutDoubleDash.exitCode == 2)
        #expect(withoutDoubleDash.stderr.contains("unknown option '\(Self.pushFile)'"), "\(withoutDoubleDash.stderr)")

        let merged = await runBooksync(["merge-file", "--", base, ours, theirs, Self.pushFile], in: scratch.path)
        #expect(merged.exitCode == 0, "\(merged.stderr)")
        #expect(try String(contentsOfFile: ours, encoding: .utf8) == Self.book(title: "Dune (1965)", pages: 896))
    }

    /// What `init` installs and what it prints for the user to copy both put `--` first.
    @Test func driversAndTheirInstructionsPutDoubleDashFirst() {
        #expect(GitCommand.drivers.map(\.command) == ["booksync merge-file -- %O %A %B %P", "booksync merge-manifest -- %O %A %B %P"])
        let lines = GitCommand.instructions(collectionRoot: "books")
        #expect(lines.contains("  git config merge.booksync.driver 'booksync merge-file -- %O %A %B %P'"), "\(lines)")
        #expect(lines.contains("  git config merge.booksync-manifest.driver 'booksync merge-manifest -- %O %A %B %P'"), "\(lines)")
    }

    // MARK: drivers from an older booksync

    /// The warning's command, in single quotes after "run".
    static func fix(in stderr: String) throws -> [String] {
        let line = try #require(stderr.split(separator: "\n").first { $0.hasPrefix("booksync: warning: the git merge driver") }, "no warning in \(stderr)")
        let quoted = try #require(line.split(separator: "'").dropFirst().first, "\(line)")
        #expect(line.contains("run '\(quoted)' to update"), "\(line)")
        return quoted.split(separator: " ").map(String.init)
    }

    /// Status names both old drivers in one line, with the command that
    /// updates them; that command, word for word (`-C` included, as status
    /// ran from outside the collection), updates them, and says so.
    @Test func statusNamesOlderDriversAndItsFixWorksWordForWord() throws {
        let repo = try GitScratchRepository()
        try repo.initializeAsOldInstall()
        try repo.git("config", "merge.booksync-manifest.driver", "booksync merge-manifest %O %A %B %P")
        let env = GitScratchRepository.environment

        let status = try BinaryTests.run(["-C", "books", "status", "--offline"], in: repo.path, environment: env, cleanEnvironment: true)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stderr.contains("booksync: warning: the git merge drivers merge.booksync.driver and merge.booksync-manifest.driver are from an older booksync: "
            + "they take a file named -….json for an option and git then keeps our side whole, dropping their changes"), "\(status.stderr)")
        let fix = try Self.fix(in: status.stderr)
        #expect(fix == ["booksync", "-C", "books", "init", "--git"])

        let upgrade = try BinaryTests.run(Array(fix.dropFirst()), in: repo.path, environment: env, cleanEnvironment: true)
        #expect(upgrade.status == 0, "\(upgrade.stderr)")
        #expect(upgrade.stderr.contains("booksync: note: updated the git merge drivers merge.booksync.driver and merge.booksync-manifest.driver from an older booksync"), "\(upgrade.stderr)")
        #expect(try repo.git("config", "merge.booksync.driver").stdout == "booksync merge-file -- %O %A %B %P\n")
        #expect(try repo.git("config", "merge.booksync-manifest.driver").stdout == "booksync merge-manifest -- %O %A %B %P\n")

        let after = try repo.booksync("status", "--offline")
        #expect(after.status == 0)
        #expect(!after.stderr.contains("warning"), "\(after.stderr)")
        let again = try repo.booksync("init", "--git")
        #expect(!again.stderr.contains("note"), "\(again.stderr)")
    }

    /// pull, push and sync warn too, before the remote is reached.
    @Test(arguments: ["pull", "push", "sync"])
    func syncCommandsNameAnOlderDriver(command: String) throws {
        let repo = try GitScratchRepository()
        try repo.initializeAsOldInstall()
        let result = try BinaryTests.run(["-C", "books", command, "--dry-run"], in: repo.path, environment: GitScratchRepository.environment, cleanEnvironment: true)
        #expect(result.stderr.contains("booksync: warning: the git merge driver merge.booksync.driver is from an older booksync"), "\(command): \(result.stderr)")
    }

    /// diff warns like status (it reads the same three sides a merge would),
    /// offline too, with the fix that works from where it ran.
    @Test func diffNamesAnOlderDriver() throws {
        let repo = try GitScratchRepository()
        try repo.initializeAsOldInstall()
        let result = try BinaryTests.run(["-C", "books", "diff", "--offline"], in: repo.path, environment: GitScratchRepository.environment, cleanEnvironment: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("booksync: warning: the git merge driver merge.booksync.driver is from an older booksync"), "\(result.stderr)")
        #expect(try Self.fix(in: result.stderr) == ["booksync", "-C", "books", "init", "--git"])
    }

    /// init of another collection in a repository with an old driver warns
    /// too: the driver is the repository's, whatever collection uses it.
    @Test func initWarnsAboutAnOlderDriverInTheRepository() throws {
        let repo = try GitScratchRepository()
        try repo.initializeAsOldInstall()
        try FileManager.default.createDirectory(atPath: repo.path + "/films", withIntermediateDirectories: true)
        let initialize = try BinaryTests.run(["init", "-q", "--firestore", "p", "--collection", "films"], in: repo.path + "/films",
                                             environment: GitScratchRepository.environment, cleanEnvironment: true)
        #expect(initialize.status == 0, "\(initialize.stderr)")
        #expect(try Self.fix(in: initialize.stderr) == ["booksync", "init", "--git"])
    }

    /// In a linked worktree `.git` is a file (`gitdir: …`) and the config is
    /// the main repository's (`commondir`): status finds the old driver
    /// there, and from inside the collection the fix needs no `-C`.
    @Test func statusFindsAnOlderDriverFromALinkedWorktree() throws {
        let repo = try GitScratchRepository()
        try repo.initializeAsOldInstall()
        try repo.commitAll("collection")
        #expect(try repo.git("worktree", "add", "-q", "-b", "side", ".side").status == 0)
        let books = repo.path + "/.side/books"
        let env = GitScratchRepository.environment

        let status = try BinaryTests.run(["status", "--offline"], in: books, environment: env, cleanEnvironment: true)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stderr.contains("booksync: warning: the git merge driver merge.booksync.driver is from an older booksync: it takes a file named -….json"), "\(status.stderr)")
        let fix = try Self.fix(in: status.stderr)
        #expect(fix == ["booksync", "init", "--git"])
        #expect(try BinaryTests.run(Array(fix.dropFirst()), in: books, environment: env, cleanEnvironment: true).status == 0)
        #expect(try repo.git("config", "merge.booksync.driver").stdout == "booksync merge-file -- %O %A %B %P\n")
        #expect(!(try BinaryTests.run(["status", "--offline"], in: books, environment: env, cleanEnvironment: true).stderr.contains("warning")))
    }

    /// Which commands are outdated: booksync's with `%P` and no `--` before it.
    @Test(arguments: [
        ("booksync merge-file %O %A %B %P", true),
        ("/usr/local/bin/booksync merge-manifest %O %A %B %P", true),
        ("booksync merge-file -- %O %A %B %P", false),
        ("booksync merge-file %O %A %B", false),  // before %P: git's temporary files never start with '-'
        ("my-merge-tool %O %A %B %P", false),
    ])
    func outdatedCommands(command: String, outdated: Bool) {
        #expect(GitDriverCheck.isOutdated(command) == outdated, "\(command)")
    }

    /// The config is read as git reads it: sections by name (either
    /// spelling), keys in any case, quotes, escapes and comments; the last
    /// value wins.
    @Test func driverCommandsAreReadFromGitsConfigSyntax() {
        let config = """
            [core]
            \tdriver = not a merge driver
            [merge "booksync"]
            \tname = booksync field-level merge of record files
            \tdriver = booksync merge-file %O %A %B %P
            \tDriver = "booksync merge-file %O \\"%A\\" %B %P" # quoted ; comment
            [Merge.Booksync-Manifest] driver = booksync merge-manifest -- %O %A %B %P
            [merge "other"]
            driver = my-tool %O %A %B
            """
        let commands = GitDriverCheck.driverCommands(inConfig: config)
        #expect(commands == [
            "booksync": "booksync merge-file %O \"%A\" %B %P",
            "booksync-manifest": "booksync merge-manifest -- %O %A %B %P",
            "other": "my-tool %O %A %B",
        ])
    }

    // MARK: advice

    /// Push's advice for a conflicting record names it so that the commands
    /// work word for word, here `diff`, for a top-level id and a
    /// subcollection id that start with `-`.
    @Test func adviceForADashIDWorksWordForWord() throws {
        let scratch = try ScratchDirectory()
        let initialize = try BinaryTests.run(["init", "-q", "--firestore", "p", "--collection", "books", "--subcollection", "reviews"], in: scratch.path)
        #expect(initialize.status == 0, "\(initialize.stderr)")
        let collection = try CollectionDirectory.open(searchingFrom: scratch.path)
        for text in [Self.pushID, Self.pushID + "/reviews/-r1"] {
            let id = try collection.rules.recordID(text)
            let file = scratch.path + "/" + id.fileName
            try FileManager.default.createDirectory(atPath: FileSystem.split(file).directory, withIntermediateDirectories: true)
            try (id.isTopLevel ? bookFile(text) : "{\n  \"id\": \"-r1\"\n}\n").write(toFile: file, atomically: true, encoding: .utf8)

            let advice = SyncCommandSupport.resolveAdvice(.bothModified(fields: []), path: "p", id: id).rendered
            let commands = ConflictAdviceTests.suggestedCommands(Substring(advice))
            #expect(commands.contains(["resolve", "./" + id.fileName, "--ours"]), "\(advice)")
            let diff = try #require(commands.first { $0.first == "diff" }, "\(advice)")
            #expect(diff == ["diff", "./" + id.fileName])
            let shown = try BinaryTests.run(diff + ["--offline"], in: scratch.path)
            #expect(shown.status == 0, "\(diff): \(shown.stderr)")
            #expect(shown.stdout.hasPrefix(id.fileName + ": added locally"), "\(shown.stdout)")
        }
    }
}
