import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A collection directory opened for work: the entry point of the library API
/// that the CLI, apps and server-side Swift programs share.
///
///     let collection = try CollectionDirectory.open(searchingFrom: ".")
///     let status = try await collection.status(remote: nil)   // or a FirestoreRemote
public struct CollectionDirectory: Sendable {
    /// Where the collection's files are.
    package let paths: CollectionPaths
    /// config.json as read when the collection was opened.
    public let config: CollectionConfig
    /// SHA-256 of config.json: hashes in the stat cache are only valid under the same rules.
    let configFingerprint: String
    /// The base copies, for three-way merges.
    package let baseCopies: BaseCopyStore
    /// The remote whose target `config.remote` is and whose sync state
    /// `paths` point at: origin unless `selectingRemote` chose another.
    package let remote: SelectedRemote

    /// How records look in this collection (id field, schema), from config.json.
    package var rules: RecordRules { config.rules }

    /// The manifest: the base state the last sync recorded against the selected remote.
    package var manifestFile: ManifestFile { ManifestFile(paths: paths, rules: rules, remoteName: remote.name) }

    /// The record files, and the file arguments and pathspecs that name them.
    package var recordFiles: RecordFiles { RecordFiles(paths: paths, rules: rules) }

    init(paths: CollectionPaths, config: CollectionConfig, configFingerprint: String, remote: SelectedRemote? = nil) {
        self.paths = paths
        self.config = config
        self.configFingerprint = configFingerprint
        self.baseCopies = BaseCopyStore(paths: paths, rules: config.rules)
        self.remote = remote ?? SelectedRemote(name: RemoteList.origin, target: config.remote, endpoint: nil, sharesState: true, reason: nil)
    }

    /// Opens the collection at `start` or its nearest parent with `.booksync/`.
    public static func open(searchingFrom start: String) throws(BooksyncError) -> CollectionDirectory {
        guard let paths = CollectionPaths.locate(from: start) else {
            throw .notACollection(FileSystem.absolute(start))
        }
        return try open(paths)
    }

    static func open(_ paths: CollectionPaths) throws(BooksyncError) -> CollectionDirectory {
        try requireOwnedByUs(paths)
        try BooksyncError.io { () throws(FileSystemError) in try paths.verifyStateKinds() }
        guard let bytes = try StateFileCaps.read(paths.config, limit: CollectionConfig.maximumFileBytes,
                                                 holds: "room for a schema of many thousands of fields") else {
            throw .io(FileSystemError(path: paths.config, operation: "open", code: ENOENT))
        }
        do {
            let config = try CollectionConfig.decode(bytes)
            return CollectionDirectory(paths: paths, config: config, configFingerprint: SHA256.contentHash(bytes).text)
        } catch {
            if GitConflictMarkers.found(in: bytes) { throw .unfinishedGitMerge(path: paths.config) }
            throw .damagedStateFile(path: paths.config, error)
        }
    }

    /// Refuses a collection whose `.booksync` belongs to another user, as git
    /// refuses a repository owned by someone else (CVE-2022-24765): found by
    /// searching upward, a `.booksync` that a stranger planted in a shared
    /// directory (`/tmp/.booksync`) would otherwise become yours.
    static func requireOwnedByUs(_ paths: CollectionPaths) throws(BooksyncError) {
        guard let owner = try? FileSystem.stat(paths.state).owner else { return }
        let me = geteuid()
        if owner != me {
            throw .invalidArgument(
                "\(paths.state) belongs to another user (uid \(owner)), not to you (uid \(me)); booksync does not work in "
                    + "other users' collections. Run it as that user, or take the directory over with chown")
        }
    }

    /// Creates `.booksync/` in `directory`: config, empty manifest, base/,
    /// .gitignore, and the JSON Schema for editors (`record.schema.json`).
    /// Needs no network; existing record files become local additions.
    public static func initialize(at directory: String, config: CollectionConfig) throws(BooksyncError) -> CollectionDirectory {
        let paths = CollectionPaths(root: FileSystem.absolute(directory))
        guard FileSystem.isDirectory(paths.root) else {
            throw .invalidArgument("\(paths.root) is not a directory")
        }
        if FileSystem.exists(paths.state) {
            do {
                try FileSystem.requireDirectoryOrAbsent(paths.state)
            } catch {
                throw .io(error)  // a file or link named .booksync: say what it is
            }
            throw .alreadyInitialized(paths.root)
        }
        if let problem = FirestoreTarget.validateCollectionPath(config.remote.collectionPath) {
            throw .invalidArgument(problem)
        }
        try BooksyncError.io { () throws(FileSystemError) in
            try FileSystem.createDirectory(paths.state)
            try FileSystem.createDirectory(paths.base)
            try FileSystem.writeAtomically(Array(CollectionPaths.gitignoreContents.utf8), to: paths.gitignore)
            try FileSystem.writeAtomically(Manifest().encoded(), to: paths.manifest, durable: true)
            // config.json last: a directory is a collection only once it is complete.
            try FileSystem.writeAtomically(config.encoded(), to: paths.config, durable: true)
        }
        let directory = try open(paths)
        // The editors' JSON Schema. Derived data: if it cannot be written, the
        // collection is still whole, and `booksync schema` says why.
        _ = try? directory.writeEditorSchemas()
        return directory
    }

    /// Takes the collection lock for a writing command, removes temporary files
    /// left by a booksync that was killed mid-write, and makes sure `base/` exists.
    /// For synchronous callers: it may sleep (see `CollectionLock.acquire`).
    package func lock(onStaleLock: (Int32) -> Void = { _ in }) throws(BooksyncError) -> CollectionLock {
        var stalePID: Int32?
        let lock = try CollectionLock.acquire(at: paths.lock, onStaleLock: { stalePID = $0 })
        return try prepare(lock, stalePID: stalePID, onStaleLock: onStaleLock)
    }

    /// The same for async callers: it waits without holding a thread.
    package func lock(onStaleLock: (Int32) -> Void = { _ in }) async throws(BooksyncError) -> CollectionLock {
        var stalePID: Int32?
        let lock = try await CollectionLock.acquire(at: paths.lock, onStaleLock: { stalePID = $0 })
        return try prepare(lock, stalePID: stalePID, onStaleLock: onStaleLock)
    }

    /// What a writing command does once it holds the lock (see `lock`).
    private func prepare(_ lock: CollectionLock, stalePID: Int32?, onStaleLock: (Int32) -> Void) throws(BooksyncError) -> CollectionLock {
        // A pull killed before its swap leaves its own download under a swap
        // name; told apart by the journal, it is no file to recover (a resumed
        // clone would otherwise ask the user to check every one of them).
        let downloads = PullJournal(paths: paths).plannedWrites(paths: paths, rules: rules)
        for directory in Set([paths.root, paths.state, paths.syncState, paths.base, paths.conflicts, paths.conflicts + "/revisions"]) {
            let own = directory == paths.root ? downloads[directory] ?? [] : []
            FileSystem.removeStaleTemporaries(in: directory, recoverInto: directory == paths.root ? paths.recovered : nil,
                                              isOwnWrite: { own.contains(SHA256.contentHash($0)) })
        }
        // Subcollection folders the journal names (checked to be real folders); the scan finds any others.
        for (folder, own) in downloads where folder != paths.root {
            FileSystem.removeStaleTemporaries(in: folder, recoverInto: paths.recovered, isOwnWrite: { own.contains(SHA256.contentHash($0)) })
        }
        // After the clean-up, so that the notice can tell about recovered files.
        if let stalePID { onStaleLock(stalePID) }
        do {
            try remoteStates.createDirectory(of: remote)
            // base/ may be missing: git keeps no empty directories.
            try FileSystem.createDirectory(paths.base)
        } catch {
            lock.release()
            throw .io(error)
        }
        do {
            try replayPullJournal()
        } catch {
            lock.release()
            throw error
        }
        return lock
    }

    /// Records in the base what a killed pull had written before it could
    /// save (`PullJournal`), then removes the journal. Only under the lock
    /// (a running pull's journal is its own), and only while git is quiet:
    /// files git is rewriting are not what the pull wrote, and the journal
    /// waits for the next command (syncs call this again after waiting for git).
    func replayPullJournal() throws(BooksyncError) {
        let journal = PullJournal(paths: paths)
        guard journal.exists, GitActivity.inProgress(at: paths.root) == nil else { return }
        let changes = journal.confirmedChanges(paths: paths, rules: rules)
        if !changes.isEmpty {
            var canonical = false
            let manifest = try manifestFile.load(canonical: &canonical, replayingJournal: false)
            // The fingerprint the killed pull would have written is the one it ran under: keep the manifest's.
            var base = BaseState(copies: baseCopies, manifest: manifest, configFingerprint: manifest.configFingerprint ?? configFingerprint)
            for change in changes { base.note(change) }
            try base.save()
        }
        journal.remove()
    }
}
