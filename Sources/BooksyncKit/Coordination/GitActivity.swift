/// Whether git is changing the work tree a collection lives in.
///
/// A checkout, reset, stash or merge rewrites the manifest and the record
/// files one after the other, and a slow one (a smudge filter, tens of
/// thousands of files) leaves a long window in which the files hold one
/// branch and the manifest another. A sync inside that window reads git's
/// writes as local edits and a file between its unlink and its write as a
/// delete, and pushes both (the manual's Safety article). So syncs wait while git works.
///
/// The git directory is found as git finds it, without running git or
/// anything the repository configures: the nearest `.git` at or above the
/// collection, a folder, or a file saying `gitdir: PATH` (a worktree or a
/// submodule). Only the names of git's own marker files are looked at.
package enum GitActivity {
    /// What git is doing in the work tree holding `root`, as a phrase for a
    /// sentence ("a rebase is in progress"); nil when nothing (or no git).
    package static func inProgress(at root: String) -> String? {
        guard let gitDirectory = gitDirectory(above: root) else { return nil }
        for (marker, meaning) in markers where FileSystem.exists(gitDirectory + "/" + marker) {
            return meaning + " (\(gitDirectory)/\(marker))"
        }
        return nil
    }

    /// Whether git holds its index lock: a short operation (a checkout,
    /// reset, stash, commit, or an editor's background `git status`) that a
    /// command waits out, unlike a merge or rebase left for the user.
    package static func isShortLived(_ phrase: String) -> Bool {
        phrase.hasPrefix(markers[0].meaning)
    }

    /// git's markers of work on the tree, the short-lived one first.
    static let markers: [(marker: String, meaning: String)] = [
        ("index.lock", "git is changing the files (it holds its index lock; if no git command runs, a crashed one left it: remove the file)"),
        ("MERGE_HEAD", "a git merge is in progress"),
        ("rebase-merge", "a git rebase is in progress"),
        ("rebase-apply", "a git rebase or am is in progress"),
        ("CHERRY_PICK_HEAD", "a git cherry-pick is in progress"),
        ("REVERT_HEAD", "a git revert is in progress"),
        ("BISECT_LOG", "a git bisect is in progress"),
    ]

    /// The git directory of the nearest `.git` at or above `root`; nil
    /// when there is none or a `.git` file does not name one.
    static func gitDirectory(above root: String) -> String? {
        // The folders above the collection itself, not above a link to it.
        var directory = FileSystem.realPath(root) ?? root
        while true {
            let candidate = directory == "/" ? "/.git" : directory + "/.git"
            if FileSystem.isDirectory(candidate) { return candidate }
            if FileSystem.exists(candidate) { return linkedGitDirectory(candidate, in: directory) }
            if directory == "/" || directory.isEmpty { return nil }
            directory = FileSystem.split(directory).directory
        }
    }

    /// The folder a `.git` file names (`gitdir: ../.git/worktrees/x`),
    /// relative paths taken from the folder holding the file.
    private static func linkedGitDirectory(_ file: String, in directory: String) -> String? {
        guard let bytes = try? FileSystem.readFilePrefix(file, count: 4096) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).first, line.hasPrefix("gitdir:") else { return nil }
        let path = String(line.dropFirst("gitdir:".count)).trimmingWhitespace
        guard !path.isEmpty else { return nil }
        return path.hasPrefix("/") ? path : directory + "/" + path
    }
}

extension GitActivity {
    /// How long a sync waits for git's index lock to go before it refuses:
    /// a checkout of many files, or an editor's background `git status`.
    static let waitLimit = Duration.seconds(10)

    /// Returns once git is not changing the tree at `root`; waits out git's
    /// index lock (up to `waitLimit`) and refuses at once a merge, rebase,
    /// cherry-pick, revert or bisect left in progress (the manual's Safety article).
    /// - Throws: `.gitBusy` naming what git is doing.
    static func waitUntilQuiet(at root: String) async throws(BooksyncError) {
        let clock = ContinuousClock()
        let deadline = clock.now + waitLimit
        while let activity = inProgress(at: root) {
            guard isShortLived(activity), clock.now < deadline else { throw .gitBusy(activity: activity) }
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                throw .interrupted
            }
        }
    }
}

extension CollectionDirectory {
    /// What a sync does once it holds the lock: waits for git, then records
    /// what a killed pull wrote (`replayPullJournal`), now that git no longer
    /// rewrites the files. A dry run holds no lock and replays nothing (its
    /// reads apply the journal in memory).
    func prepareForSync(holdingLock: Bool) async throws(BooksyncError) {
        try await GitActivity.waitUntilQuiet(at: paths.root)
        if holdingLock { try replayPullJournal() }
    }
}
