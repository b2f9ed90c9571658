import BooksyncCore

/// Status: the three-way comparison, writing nothing but the stat cache.
extension CollectionDirectory {
    /// The three-way status of every record (<doc:ThreeWaySync>).
    /// - Parameters:
    ///   - remote: The remote collection to compare with; nil (`--offline`)
    ///     counts the remote side as unchanged and needs no network.
    ///   - fullListing: `--full`: list every remote name even when the change
    ///     field and mark would let status read only the changes.
    ///   - progress: Called from any thread while the remote is listed and read.
    /// - Throws: `BooksyncError` when the base cannot be read, the directory
    ///   cannot be scanned, or the remote fails (`.interrupted` when cancelled).
    public func status(remote: (any RemoteCollection)?, fullListing: Bool = false, scope: RecordScope = .everything,
                       progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(BooksyncError) -> SyncStatus {
        if remote == nil, scope.isEverything, let clean = quickCleanStatus() { return clean }
        let stamp = manifestStamp()
        let manifest = try loadManifest(for: remote).scoped(to: scope)
        // Offline, nothing but the base is compared with the files: the scan keeps
        // no hashes, and the records that differ are classified one at a time.
        let scan = try await scanLocal(base: manifest, baseStamp: stamp, keepHashes: remote != nil, scope: scope)
        var snapshot: RemoteSnapshot?
        if let remote {
            snapshot = try await readRemote(remote, manifest: manifest, needing: scan.needsRemoteBody, fullListing: fullListing,
                                            scope: scope, progress: progress)
        }
        try requireMatches(scope, scan: scan, manifest: manifest, snapshot: snapshot)
        let records = snapshot == nil
            ? offlineStatuses(scan: scan, manifest: manifest)
            : classify(scan: scan, manifest: manifest, remote: snapshot, includeClean: false).statuses
        let listing = snapshot?.listing
        return SyncStatus(
            records: records,
            unusableFiles: scan.unusableFiles, remoteRead: snapshot?.read, unusableRemote: listing?.unusable ?? [],
            recordCount: scan.files.count, remoteCount: listing.map { $0.revisions.count + $0.unusable.count },
            filesRead: scan.filesRead)
    }

    /// The records that differ from the base, classified one at a time against
    /// an unchanged remote (`--offline`), in id order.
    private func offlineStatuses(scan: LocalScan, manifest: Manifest) -> [RecordStatus] {
        var statuses: [RecordStatus] = []
        statuses.reserveCapacity(max(scan.files.notCleanCount, manifest.entries.count - scan.files.knownCleanCount))
        DifferingRecords(scan: scan, manifest: manifest).walk { id in
            let state = classifiedRecord(id, scan: scan, manifest: manifest).state
            if state != .clean { statuses.append(RecordStatus(id: id, state: state)) }
            return true
        }
        return statuses
    }
}
