/// Where everything of one collection directory lives (the manual's CollectionFormat article).
package struct CollectionPaths: Sendable, Equatable {
    /// The collection directory: record files live directly in it.
    package let root: String
    /// The directory of the sync state of the remote in use (its manifest,
    /// base copies and stored conflicts): `.booksync` for origin,
    /// `.booksync/remotes/NAME` for a shared remote, `.booksync/local/NAME`
    /// for a local-only one (the manual's RemotesAndTargets article).
    package let syncState: String

    /// The paths of the collection at `root` (absolute, as `locate` gives it),
    /// with origin's sync state; nothing is checked or created.
    package init(root: String) {
        self.root = root
        self.syncState = root + "/.booksync"
    }

    /// The same collection with the sync state of another remote.
    package func withSyncState(_ directory: String) -> CollectionPaths {
        CollectionPaths(root: root, syncState: directory)
    }

    private init(root: String, syncState: String) {
        self.root = root
        self.syncState = syncState
    }

    /// `.booksync/`: booksync's own files; committed except the local-only ones.
    package var state: String { root + "/.booksync" }
    /// The remote and record rules (committed).
    package var config: String { state + "/config.json" }
    /// The remotes besides origin (committed; `RemoteList`).
    package var remotes: String { state + "/remotes.json" }
    /// The shared remotes' sync states, one folder each (committed).
    package var sharedRemoteStates: String { state + "/remotes" }
    /// The local-only remotes' sync states, one folder each (ignored by git).
    package var localRemoteStates: String { state + "/local" }
    /// The base state: each record's hash and remote revision (committed).
    package var manifest: String { syncState + "/manifest.json" }
    /// What a running (or killed) pull is writing into record files (`PullJournal`), local only.
    package var pullJournal: String { syncState + "/pull-journal" }
    /// Base copy of every synced record, for three-way merges.
    package var base: String { syncState + "/base" }
    /// Written by `init`: keeps the local-only files out of git.
    package var gitignore: String { state + "/.gitignore" }
    /// The stat cache (`StatCache`), local only: lets scans skip unchanged files.
    package var index: String { state + "/index" }
    /// The `flock` file of `CollectionLock`, holding the holder's PID; local only.
    package var lock: String { state + "/lock" }
    /// The remote side of unresolved conflicts (`ConflictStore`), local only.
    package var conflicts: String { syncState + "/conflicts" }
    /// Files a killed pull or resolve had swapped out of place (see `FileSystem.replace`), kept for the user.
    package var recovered: String { state + "/recovered" }

    /// The record file named `fileName` (`RecordID.fileName`, with `.json`).
    package func recordFile(_ fileName: String) -> String { root + "/" + fileName }
    /// A per-record base copy as earlier versions wrote it (`base/<file name>`);
    /// still read, but new copies go into `base/pack`.
    package func baseFile(_ fileName: String) -> String { base + "/" + fileName }
    /// The remote side of an unresolved conflict.
    package func conflictFile(_ fileName: String) -> String { conflicts + "/" + fileName }

    /// The nearest directory at or above `start` that has `.booksync`, like git.
    /// A `.booksync` that is a link or a file counts as found, so that opening
    /// it is refused (see `verifyStateKinds`) instead of searching further up.
    package static func locate(from start: String) -> CollectionPaths? {
        var directory = FileSystem.absolute(start)
        while true {
            if FileSystem.exists(directory + "/.booksync") { return CollectionPaths(root: directory) }
            if directory == "/" { return nil }
            directory = FileSystem.split(directory).directory
        }
    }

    /// Refuses a state directory or file that is a symbolic link, FIFO, device
    /// or the wrong kind (the manual's Safety article): a cloned repository can commit
    /// `.booksync/lock -> ~/.bashrc`, and booksync must never write through it.
    /// Every file is also opened with O_NOFOLLOW; this check names the problem
    /// up front, before any command has done anything.
    package func verifyStateKinds() throws(FileSystemError) {
        try FileSystem.requireDirectoryOrAbsent(state)
        for directory in [sharedRemoteStates, localRemoteStates, syncState, base, conflicts, conflicts + "/revisions", recovered] {
            try FileSystem.requireDirectoryOrAbsent(directory)
        }
        for file in [config, remotes, manifest, pullJournal, gitignore, index, lock, base + "/pack", base + "/.gitattributes"] {
            try FileSystem.requireRegularOrAbsent(file, operation: "use")
        }
    }

    /// Local-only files that `init` lists in `.booksync/.gitignore`.
    static let gitignoreContents = """
        # Local-only state of booksync; config.json, manifest.json and base/ are meant to be committed.
        /index
        /lock
        /pull-journal
        /remotes/*/pull-journal
        /conflicts/
        /remotes/*/conflicts/
        /recovered/
        /local/
        .booksync-tmp-*

        """
}
