import BooksyncCore

/// A collection's manifest file: the base state the last sync recorded
/// against one remote's target, read (`load`) and stamped (`stamp`,
/// `writeStamp`) to tell whether it changed meanwhile. `BaseState` writes it
/// (through `ManifestFile.write`, which writes any manifest to a path).
package struct ManifestFile: Sendable {
    /// Where the manifest and the pull journal beside it are.
    let paths: CollectionPaths
    /// How records look (their subcollections, for the manifest's ids).
    let rules: RecordRules
    /// The remote whose base this is, named when its target is not the one in use.
    let remoteName: String

    /// The base state recorded by the last sync.
    ///
    /// A manifest as booksync writes it is read block by block into the
    /// compact entries, never held whole (the text is many times larger than
    /// the entries, <doc:Benchmarks>); anything else is read whole and fully parsed, which explains errors.
    package func load() throws(BooksyncError) -> Manifest {
        var canonical = false
        return try load(canonical: &canonical)
    }

    /// The base, and in `canonical` whether the file was exactly as
    /// booksync writes it (so `ManifestLookup` can search it later).
    func load(canonical isCanonical: inout Bool) throws(BooksyncError) -> Manifest {
        try load(canonical: &isCanonical, replayingJournal: true)
    }

    /// The same; with `replayingJournal`, a pull journal left beside the
    /// manifest (a pull runs, or was killed and no command has taken the lock
    /// since) is applied to the returned base in memory, so that a reader
    /// without the lock sees the files that pull wrote as the remote's, not as
    /// edits. Such a base is not what the file says, so it is not canonical.
    /// Without it, the file as it is: only for `CollectionDirectory.replayPullJournal`,
    /// which holds the lock and records the journal itself.
    func load(canonical isCanonical: inout Bool, replayingJournal: Bool) throws(BooksyncError) -> Manifest {
        var manifest = try loadFile(canonical: &isCanonical)
        let journal = PullJournal(paths: paths)
        guard replayingJournal, journal.exists, GitActivity.inProgress(at: paths.root) == nil else { return manifest }
        let changes = journal.confirmedChanges(paths: paths, rules: rules)
        guard !changes.isEmpty else { return manifest }
        isCanonical = false
        for change in changes { change.apply(to: &manifest) }
        return manifest
    }

    /// The manifest file as it is.
    private func loadFile(canonical isCanonical: inout Bool) throws(BooksyncError) -> Manifest {
        isCanonical = false
        if let reader = LineBlockReader(path: paths.manifest) {
            var decoder = CanonicalManifestDecoder(expectedBytes: reader.fileSize, subcollections: rules.subcollections, otherPathIDs: .forgotten)
            var canonical = true
            while canonical, let fed = reader.next({ decoder.feed($0) }) { canonical = fed }
            if canonical, !reader.failed, let manifest = decoder.finish() {
                // The fast reader takes records in any order; a binary search needs them sorted.
                isCanonical = manifest.entries.isInIDOrder
                return manifest
            }
        }
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(paths.manifest)
        } catch {
            if error.isNotFound { return Manifest() }
            throw .io(error)
        }
        do {
            return try Manifest.decode(bytes, subcollections: rules.subcollections, otherPathIDs: .forgotten)
        } catch {
            if GitConflictMarkers.found(in: bytes) { throw .unfinishedGitMerge(path: paths.manifest) }
            throw .damagedStateFile(path: paths.manifest, error)
        }
    }

    /// The base, when it was recorded against `remote`'s target (or against
    /// none yet): the base of one target is never applied to another.
    /// - Throws: `.targetMismatch` naming both targets.
    func load(for remote: (any RemoteCollection)?) throws(BooksyncError) -> Manifest {
        var canonical = false
        return try load(for: remote, canonical: &canonical)
    }

    /// The same, and in `canonical` whether the file is as booksync writes it.
    func load(for remote: (any RemoteCollection)?, canonical: inout Bool) throws(BooksyncError) -> Manifest {
        let manifest = try load(canonical: &canonical)
        guard let using = remote?.identity else { return manifest }
        // A base without a target was written by an older booksync, almost
        // always against production: it is taken as this target's unless that is an emulator.
        if manifest.target.map({ $0 != using }) ?? (using.isEmulator && !manifest.entries.isEmpty) {
            throw .targetMismatch(remote: remoteName, manifest: paths.manifest, recorded: manifest.target, using: using)
        }
        return manifest
    }

    /// Writes a manifest atomically and durably, in pieces: never all its bytes at once.
    static func write(_ manifest: Manifest, to path: String) throws(FileSystemError) {
        let writer = try AtomicFileWriter(replacing: path, durable: true)
        manifest.encode { writer.append($0) }
        try writer.commit()
    }

    /// The manifest's stamp as it is now, however recently it changed (nil:
    /// no manifest), to tell whether someone else wrote it meanwhile.
    func writeStamp() -> FileStamp? {
        (try? FileSystem.stat(paths.manifest)).map(FileStamp.init)
    }

    /// The manifest's stamp for the stat cache (see `StatCache`).
    func stamp() -> FileStamp {
        guard let stat = try? FileSystem.stat(paths.manifest) else { return .unknown }
        return StatCache.stamp(of: stat, scanStartedAt: WallClock.nowNanoseconds())
    }
}
