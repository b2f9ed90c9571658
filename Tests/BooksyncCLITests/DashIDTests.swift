import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@testable import BooksyncKit
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
}
