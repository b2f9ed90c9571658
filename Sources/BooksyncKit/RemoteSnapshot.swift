import BooksyncCore

/// The remote side as one command sees it: the revision of every document,
/// and the bodies that were needed. Status, pull and diff all read it through
/// `readRemote(_:manifest:needing:progress:)`, so they classify every record alike.
struct RemoteSnapshot: Sendable {
    var listing: RemoteListing
    /// The fetched documents; a listed document whose body was not needed is absent here.
    var bodies: [RecordID: RemoteDocument]

    /// The remote side of `id` for `SyncRules.classify`.
    func version(_ id: RecordID) -> RemoteVersion {
        guard let revision = listing.revisions[id] else { return .absent }
        guard let document = bodies[id] else { return .present(revision: revision, hash: nil) }
        switch document.content {
        case .record(let record): return .present(revision: document.revision, hash: record.hash)
        case .invalid(let diagnostics): return .invalid(revision: document.revision, diagnostics)
        }
    }
}

extension LocalScan {
    /// Whether classifying `id` needs the remote body: not when its local file
    /// is invalid, which decides the class alone.
    func needsRemoteBody(_ id: RecordID) -> Bool {
        if case .invalid? = files[id] { return false }
        return true
    }
}

extension CollectionDirectory {
    /// Lists the revision of every document, then fetches the body of each
    /// one whose revision differs from the base and that `needing` wants.
    /// Only a body tells a pullable change from a document that cannot be a
    /// record (wrong types, missing fields, a bad tag: invalid, never
    /// "added"). Unchanged documents' bodies are never fetched: each is a
    /// billed read. A document listed but gone when its body was fetched was
    /// deleted meanwhile and counts as absent.
    func readRemote(_ remote: any RemoteCollection, manifest: Manifest, needing: (RecordID) -> Bool,
                    progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> RemoteSnapshot {
        var listing = try await listRemoteRevisions(remote, progress: progress)
        let needed = listing.revisions.filter { id, revision in
            manifest.entries[id]?.revision != revision && needing(id)
        }.keys
        let bodies = try await fetchRemoteBodies(remote, ids: Array(needed), progress: progress)
        for id in needed where bodies[id] == nil { listing.revisions[id] = nil }
        return RemoteSnapshot(listing: listing, bodies: bodies)
    }

    /// The revision of every document (and the unusable ones), with progress.
    func listRemoteRevisions(_ remote: any RemoteCollection, progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> RemoteListing {
        let counter = ProgressCounter(phase: "listing", total: nil, report: progress)
        do {
            return try await remote.listRevisions { counter.add($0) }
        } catch {
            throw .remoteFailure(error)
        }
    }

    /// The documents `ids`, in id order; a missing one was deleted.
    func fetchRemoteBodies(_ remote: any RemoteCollection, ids: [RecordID], progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> [RecordID: RemoteDocument] {
        guard !ids.isEmpty else { return [:] }
        let counter = ProgressCounter(phase: "downloading", total: ids.count, report: progress)
        do {
            return try await remote.fetch(ids.sorted()) { counter.add($0) }
        } catch {
            throw .remoteFailure(error)
        }
    }
}

extension BooksyncError {
    /// A remote call's failure: `.interrupted` when it failed because the
    /// command was cancelled (Ctrl-C), so that is what the user is told.
    static func remoteFailure(_ error: RemoteError) -> BooksyncError {
        Task.isCancelled ? .interrupted : .remote(error)
    }
}
