import BooksyncCore

extension SyncGather {
    /// The three-way status: the gather stage as pull and push run it,
    /// stopping before a plan. Offline (`remote` nil) the remote side counts
    /// as unchanged. The records that differ are classified one at a time,
    /// and only their states are kept.
    func status(remote: (any RemoteCollection)?, fullListing: Bool,
                progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> SyncStatus {
        var snapshot: RemoteSnapshot?
        if let remote {
            snapshot = try await readRemote(remote, needing: scan.needsRemoteBody, fullListing: fullListing, progress: progress)
        }
        try requireMatches(snapshot)
        var records: [RecordStatus] = []
        var reads: [RecordID: LocalRead] = [:]
        eachDiffering(remote: snapshot, localReads: &reads) { records.append(RecordStatus(id: $0.id, state: $0.state)) }
        let listing = snapshot?.listing
        return SyncStatus(
            records: records,
            unusableFiles: scan.unusableFiles, remoteRead: snapshot?.read, unusableRemote: listing?.unusable ?? [],
            recordCount: scan.files.count, remoteCount: listing.map { $0.revisions.count + $0.unusable.count },
            filesRead: scan.filesRead)
    }
}
