import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Syncs wait while git changes the tree (`GitActivity`): the git directory is
/// found as git finds it, and each of git's markers stops a sync.
@Suite struct GitActivityTests {
    /// A collection in `books/` of a repository whose git directory is `gitDirectory`
    /// (a `.git` folder, or a worktree's `.git` file naming it).
    static func collection(in scratch: ScratchDirectory, linked: Bool) async throws -> (CollectionDirectory, String) {
        let gitDirectory: String
        if linked {
            gitDirectory = scratch.path + "/main/.git/worktrees/w"
            try FileManager.default.createDirectory(atPath: gitDirectory, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: scratch.path + "/w", withIntermediateDirectories: true)
            try "gitdir: ../main/.git/worktrees/w\n".write(toFile: scratch.path + "/w/.git", atomically: true, encoding: .utf8)
        } else {
            gitDirectory = scratch.path + "/w/.git"
            try FileManager.default.createDirectory(atPath: gitDirectory, withIntermediateDirectories: true)
        }
        let root = scratch.path + "/w/books"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let collection = try CollectionDirectory.initialize(at: root, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
        try #"{"id": "b1", "title": "T", "author": "A", "genre": "g"}"#.write(toFile: root + "/b1.json", atomically: true, encoding: .utf8)
        return (collection, gitDirectory)
    }

    @Test(arguments: [false, true])
    func everyMarkerOfGitsWorkIsFound(linked: Bool) async throws {
        let scratch = try ScratchDirectory()
        let (collection, gitDirectory) = try await Self.collection(in: scratch, linked: linked)
        #expect(GitActivity.inProgress(at: collection.paths.root) == nil)
        for (marker, meaning) in GitActivity.markers {
            _ = FileManager.default.createFile(atPath: gitDirectory + "/" + marker, contents: Data())
            #expect(GitActivity.inProgress(at: collection.paths.root)?.hasPrefix(meaning) == true, "\(marker)")
            try FileManager.default.removeItem(atPath: gitDirectory + "/" + marker)
        }
    }

    /// A merge left unfinished refuses push and pull at once (exit 4 in the
    /// CLI), before anything is read or written.
    @Test func anUnfinishedMergeRefusesPushAndPull() async throws {
        let scratch = try ScratchDirectory()
        let (collection, gitDirectory) = try await Self.collection(in: scratch, linked: false)
        _ = FileManager.default.createFile(atPath: gitDirectory + "/MERGE_HEAD", contents: Data())
        let remote = ScriptedRemote()
        await #expect(throws: BooksyncError.gitBusy(activity: "a git merge is in progress (\(gitDirectory)/MERGE_HEAD)")) {
            _ = try await collection.push(remote: remote)
        }
        await #expect(throws: BooksyncError.self) { _ = try await collection.pull(remote: remote) }
        #expect(remote.chunks.withLock { $0 }.isEmpty)
        try FileManager.default.removeItem(atPath: gitDirectory + "/MERGE_HEAD")
        _ = try await collection.push(remote: remote)
        #expect(remote.chunks.withLock { $0 } == [["b1"]])
    }

    /// git's index lock is waited out: a push that starts while it is held
    /// goes ahead once git lets go.
    @Test func gitsIndexLockIsWaitedOut() async throws {
        let scratch = try ScratchDirectory()
        let (collection, gitDirectory) = try await Self.collection(in: scratch, linked: false)
        let lock = gitDirectory + "/index.lock"
        _ = FileManager.default.createFile(atPath: lock, contents: Data())
        let remote = ScriptedRemote()
        // Released from a Dispatch thread: the test pool may be busy with other suites.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { try? FileManager.default.removeItem(atPath: lock) }
        _ = try await collection.push(remote: remote)
        #expect(!FileManager.default.fileExists(atPath: lock))
        #expect(remote.chunks.withLock { $0 } == [["b1"]])
    }

    /// Reached through a link, the collection's own git is still found.
    @Test func gitIsFoundAboveTheCollectionNotAboveALinkToIt() async throws {
        let scratch = try ScratchDirectory()
        let (collection, gitDirectory) = try await Self.collection(in: scratch, linked: false)
        _ = FileManager.default.createFile(atPath: gitDirectory + "/MERGE_HEAD", contents: Data())
        try FileManager.default.createSymbolicLink(atPath: scratch.path + "/link", withDestinationPath: collection.paths.root)
        #expect(GitActivity.inProgress(at: scratch.path + "/link")?.hasPrefix("a git merge") == true)
    }

    /// A killed pull's journal is not replayed while git rewrites the files
    /// (they are git's, not the pull's); the sync that waited for git does it.
    @Test func theJournalWaitsForGit() async throws {
        let scratch = try ScratchDirectory()
        let (collection, gitDirectory) = try await Self.collection(in: scratch, linked: false)
        _ = try await collection.push(remote: ScriptedRemote())
        let bytes = try FileSystem.readFile(collection.paths.root + "/b1.json")
        let record = try collection.rules.load(bytes, id: try RecordID("b1")).get()
        try PullJournal(paths: collection.paths).append([PullJournal.Entry(fileHash: record.hash, change: BaseState.copy(record, revision: "r9"))])
        let lock = gitDirectory + "/index.lock"
        _ = FileManager.default.createFile(atPath: lock, contents: Data())
        try await collection.lock().release()
        #expect(FileSystem.exists(collection.paths.pullJournal))
        #expect(try collection.manifestFile.load().entries[try RecordID("b1")]?.revision == "r1")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { try? FileManager.default.removeItem(atPath: lock) }
        _ = try await collection.push(remote: ScriptedRemote())
        #expect(!FileSystem.exists(collection.paths.pullJournal))
        #expect(try collection.manifestFile.load().entries[try RecordID("b1")]?.revision == "r9")
    }

    /// An older booksync's `.gitignore` learns the journal before one is written.
    @Test func anOlderGitignoreLearnsTheJournal() async throws {
        let scratch = try ScratchDirectory()
        let (collection, _) = try await Self.collection(in: scratch, linked: false)
        try "/index\n/lock".write(toFile: collection.paths.gitignore, atomically: true, encoding: .utf8)
        PullJournal.ensureIgnored(paths: collection.paths)
        PullJournal.ensureIgnored(paths: collection.paths)
        #expect(try String(contentsOfFile: collection.paths.gitignore, encoding: .utf8) == "/index\n/lock\n/pull-journal\n/remotes/*/pull-journal\n")
    }
}
