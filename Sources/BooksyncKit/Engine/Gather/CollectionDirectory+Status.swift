import BooksyncCore

/// Status: the three-way comparison, writing nothing but the stat cache.
extension CollectionDirectory {
    /// The three-way status of every record (the manual's ThreeWaySync article).
    /// - Parameters:
    ///   - remote: The remote collection to compare with; nil (`--offline`)
    ///     counts the remote side as unchanged and needs no network.
    ///   - fullListing: `--full`: list every remote name even when the change
    ///     field and mark would let status read only the changes.
    ///   - progress: Called from any thread while the remote is listed and read.
    /// - Throws: `BooksyncError` when the base cannot be read, the directory
    ///   cannot be scanned, or the remote fails (`.interrupted` when cancelled).
    @_spi(Remote)
    public func status(remote: (any RemoteCollection)?, fullListing: Bool = false, scope: RecordScope = .everything,
                       progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(BooksyncError) -> SyncStatus {
        try await status(remote: remote, fullListing: fullListing, scope: scope, watcher: nil, progress: progress)
    }

    /// The status, asking `watcher` (when one runs) what changed instead of
    /// looking at every file, offline (see `WatchedStatus`).
    package func status(remote: (any RemoteCollection)?, fullListing: Bool = false, scope: RecordScope = .everything, watcher: WatcherSocket?,
                        progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(BooksyncError) -> SyncStatus {
        guard remote == nil, scope.isEverything, let watcher else {
            return try await scannedStatus(remote: remote, fullListing: fullListing, scope: scope, progress: progress).status
        }
        let watched = WatchedStatus(collection: self, socket: watcher)
        let (token, reason): (ChangeJournal.Token?, String)
        switch watched.outcome() {
        case .answered(let status): return status
        case .scan(let fresh, let why): (token, reason) = (fresh, why)
        }
        // The stamp before anything is read: a manifest written meanwhile
        // has another, and the record is not believed.
        let stamp = manifestFile.stamp()
        var (status, canonical, linked) = try await scannedStatus(remote: nil, fullListing: false, scope: scope, progress: progress)
        if let token {
            watched.record(status, linkedFiles: linked, token: token, manifestStamp: stamp, canonicalManifest: canonical)
        }
        status.watcherNote = reason
        return status
    }

    /// The status from a scan of every file; with whether the manifest
    /// was read, and canonical, and the record files with other hard links
    /// (none when the stat cache proved the tree clean: it refuses those).
    private func scannedStatus(remote: (any RemoteCollection)?, fullListing: Bool, scope: RecordScope,
                               progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError)
        -> (status: SyncStatus, canonical: Bool, linkedFiles: [String]) {
        if remote == nil, scope.isEverything, let clean = quickCleanStatus() { return (clean, false, []) }
        let stamp = manifestFile.stamp()
        var canonical = false
        let manifest = try (remote == nil ? manifestFile.load(canonical: &canonical) : manifestFile.load(for: remote)).scoped(to: scope)
        // Offline, nothing but the base is compared with the files: the scan keeps
        // no hashes, and the records that differ are classified one at a time.
        let gather = try SyncGather(self, manifest: manifest, scope: scope,
                                    scanning: ScanChoices(keepHashes: remote != nil, baseStamp: stamp))
        let status = try await gather.status(remote: remote, fullListing: fullListing, progress: progress)
        return (status, canonical, gather.scan.linkedFiles)
    }
}
