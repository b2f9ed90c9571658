import BooksyncCore

/// Status: the three-way comparison, writing nothing but the stat cache.
extension CollectionDirectory {
    /// The three-way status of every record (DESIGN.md §3).
    /// - Parameters:
    ///   - remote: The remote collection to compare with; nil (`--offline`)
    ///     counts the remote side as unchanged and needs no network.
    ///   - fullListing: `--full`: list every remote name even when the change
    ///     field and mark would let status read only the changes.
    ///   - progress: Called from any thread while the remote is listed and read.
    /// - Throws: `BooksyncError` when the base cannot be read, the directory
    ///   cannot be scanned, or the remote fails (`.interrupted` when cancelled).
    public func status(remote: (any RemoteCollection)?, fullListing: Bool = false,
                       progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(BooksyncError) -> SyncStatus {
        if remote == nil, let clean = quickCleanStatus() { return clean }
        let stamp = manifestStamp()
        let manifest = try loadManifest()
        let scan = try await scanLocal(base: manifest, baseStamp: stamp)
        var snapshot: RemoteSnapshot?
        if let remote {
            snapshot = try await readRemote(remote, manifest: manifest, needing: scan.needsRemoteBody, fullListing: fullListing, progress: progress)
        }
        let classified = classify(scan: scan, manifest: manifest, remote: snapshot, includeClean: false)
        let listing = snapshot?.listing
        return SyncStatus(
            records: classified.statuses,
            unusableFiles: scan.unusableFiles, remoteRead: snapshot?.read, unusableRemote: listing?.unusable ?? [],
            recordCount: scan.files.count, remoteCount: listing.map { $0.revisions.count + $0.unusable.count },
            filesRead: scan.filesRead)
    }
}
