import BooksyncCore

/// A collection directory opened for work: the entry point of the library API
/// that the CLI, apps and server-side Swift programs share.
///
///     let collection = try CollectionDirectory.open(searchingFrom: ".")
///     let status = try await collection.status(remote: nil)   // or a FirestoreRemote
public struct CollectionDirectory: Sendable {
    public let paths: CollectionPaths
    public let config: CollectionConfig
    /// SHA-256 of config.json: hashes in the stat cache are only valid under the same rules.
    let configFingerprint: String

    public var rules: RecordRules { config.rules }

    /// Opens the collection at `start` or its nearest parent with `.booksync/`.
    public static func open(searchingFrom start: String) throws(BooksyncError) -> CollectionDirectory {
        guard let paths = CollectionPaths.locate(from: start) else {
            throw .notACollection(FileSystem.absolute(start))
        }
        return try open(paths)
    }

    static func open(_ paths: CollectionPaths) throws(BooksyncError) -> CollectionDirectory {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(paths.config)
        } catch {
            throw .io(error)
        }
        do {
            let config = try CollectionConfig.decode(bytes)
            return CollectionDirectory(paths: paths, config: config, configFingerprint: SHA256.contentHash(bytes))
        } catch {
            throw .damagedStateFile(path: paths.config, error)
        }
    }

    /// Creates `.booksync/` in `directory`: config, empty manifest, base/, .gitignore.
    /// Needs no network; existing record files become local additions.
    public static func initialize(at directory: String, config: CollectionConfig) throws(BooksyncError) -> CollectionDirectory {
        let paths = CollectionPaths(root: FileSystem.absolute(directory))
        guard FileSystem.isDirectory(paths.root) else {
            throw .invalidArgument("\(paths.root) is not a directory")
        }
        if FileSystem.exists(paths.state) { throw .alreadyInitialized(paths.root) }
        if let problem = FirestoreTarget.validateCollectionPath(config.remote.collectionPath) {
            throw .invalidArgument(problem)
        }
        do {
            try FileSystem.createDirectory(paths.state)
            try FileSystem.createDirectory(paths.base)
            try FileSystem.writeAtomically(Array(CollectionPaths.gitignoreContents.utf8), to: paths.gitignore)
            try FileSystem.writeAtomically(Manifest().encoded(), to: paths.manifest, durable: true)
            // config.json last: a directory is a collection only once it is complete.
            try FileSystem.writeAtomically(config.encoded(), to: paths.config, durable: true)
        } catch {
            throw .io(error)
        }
        return try open(paths)
    }

    /// The base state recorded by the last sync.
    public func loadManifest() throws(BooksyncError) -> Manifest {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(paths.manifest)
        } catch {
            if error.isNotFound { return Manifest() }
            throw .io(error)
        }
        do {
            return try Manifest.decode(bytes)
        } catch {
            throw .damagedStateFile(path: paths.manifest, error)
        }
    }

    /// Scans the record files, reading only those the stat cache cannot vouch for.
    public func scanLocal() async throws(BooksyncError) -> LocalScan {
        try LocalScanner(paths: paths, rules: rules, fingerprint: configFingerprint).scan()
    }

    /// Takes the collection lock for a writing command, then removes temporary
    /// files left by a booksync that was killed mid-write.
    public func lock(onStaleLock: (Int32) -> Void = { _ in }) throws(BooksyncError) -> CollectionLock {
        let lock = try CollectionLock.acquire(at: paths.lock, onStaleLock: onStaleLock)
        for directory in [paths.root, paths.state, paths.base, paths.conflicts, paths.conflicts + "/revisions"] {
            FileSystem.removeStaleTemporaries(in: directory)
        }
        return lock
    }
}
