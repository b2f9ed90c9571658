import BooksyncCore

extension SyncGather {
    /// Lists the revision of every document, then fetches the body of each
    /// one whose revision differs from the base and that `needing` wants.
    /// Only a body tells a pullable change from a document that cannot be a
    /// record (wrong types, missing fields, a bad tag: invalid, never
    /// "added"). Unchanged documents' bodies are never fetched: each is a
    /// billed read. A document listed but gone when its body was fetched was
    /// deleted meanwhile and counts as absent.
    ///
    /// With a change field (config `"changeField"`) and a change mark in the
    /// base, the listing is the base's revisions updated by the documents
    /// changed since the mark (which come with bodies), if the collection's
    /// count agrees with it; otherwise, or with `fullListing`, every name is
    /// listed. `RemoteSnapshot.read` says which, and why. Without
    /// `counting` (a live sync's poll between counts) the changes are trusted
    /// without the count: a deletion, or a write without the change field,
    /// then waits for the next counted read. `listingBecause`: the caller
    /// read the changes itself (a pull, batch by batch) and found that every
    /// name must be listed, for this reason.
    func readRemote(_ remote: any RemoteCollection, needing: (RecordID) -> Bool, fullListing: Bool = false,
                    listingBecause: FullListingReason? = nil, counting: Bool = true, prefetched: PrefetchedChanges? = nil,
                    progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> RemoteSnapshot {
        if let ids = scope.namedIDs {
            // Billed reads are the ids named, not the collection.
            var bodies = try await RemoteReads.fetchBodies(remote, ids: ids, progress: progress)
            var outside: Set<RecordID> = []
            if rules.scope != nil {
                // Read by name, so the scope is applied here, as the query would.
                for (id, document) in bodies {
                    guard let record = document.record, !rules.isInScope(record) else { continue }
                    bodies[id] = nil
                    outside.insert(id)
                }
            }
            let listing = RemoteListing(revisions: RemoteRevisions(bodies.mapValues(\.revision)))
            var snapshot = RemoteSnapshot(listing: listing, bodies: bodies, read: .named(documents: bodies.count))
            snapshot.outsideScope = outside
            return snapshot
        }
        if !scope.isEverything {
            var snapshot = try await readScopedRemote(remote, needing: needing, progress: progress)
            try await findLeftScope(remote, snapshot: &snapshot, progress: progress)
            return snapshot
        }
        var reason: FullListingReason?
        if let field = rules.changeField {
            if let listingBecause {
                reason = listingBecause
            } else if fullListing {
                reason = .requested
            } else if let mark = manifest.changesSince, mark.isFor(field: field, scope: rules.scope) {
                switch try await readChanges(remote, since: mark, counting: counting,
                                             prefetched: prefetched?.mark == mark ? prefetched?.changes : nil, progress: progress) {
                case .snapshot(var snapshot):
                    try await findLeftScope(remote, snapshot: &snapshot, progress: progress)
                    return snapshot
                case .listEveryName(let why): reason = why
                }
            } else {
                reason = .noMark(field: field)
            }
        }
        var listing = try await RemoteReads.listRevisions(remote, keyedLike: manifest.entries, progress: progress)
        let bodies = try await fetchChangedBodies(remote, listing: &listing, needing: needing, progress: progress)
        var snapshot = RemoteSnapshot(listing: listing, bodies: bodies, read: .everyName(because: reason))
        try await findLeftScope(remote, snapshot: &snapshot, progress: progress)
        return snapshot
    }

    /// With a scope (config `"scope"`), tells the records the scoped listing
    /// left out apart, by a read by name (one billed read each): a base
    /// record whose document is still there has left the scope (its file is
    /// kept, its base entry let go), one that is not was deleted; a local
    /// record without a base entry (`unbasedLocal`: a new file, or the file
    /// of a record that left) whose document exists outside the scope stays
    /// local (`SyncState.outsideScope`), or push would try to create it.
    private func findLeftScope(_ remote: any RemoteCollection, snapshot: inout RemoteSnapshot,
                               progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) {
        guard rules.scope != nil else { return }
        let missing = manifest.entries.keys.filter { snapshot.listing.revisions[$0] == nil && scope.contains($0) }
            + unbasedLocal.filter { snapshot.listing.revisions[$0] == nil && scope.contains($0) }
        guard !missing.isEmpty else { return }
        for (id, document) in try await RemoteReads.fetchBodies(remote, ids: Array(missing), progress: progress) {
            if let record = document.record, rules.isInScope(record) {
                // Written back into the scope since the listing: listed after all.
                snapshot.listing.revisions[id] = document.revision
                snapshot.bodies[id] = document
            } else {
                snapshot.outsideScope.insert(id)
            }
        }
    }

    /// A folder or glob scope: the names in its id ranges (every name when a
    /// pattern has no literal start), narrowed to the scope. When nothing in
    /// scope is left but the base has records there, one more read asks
    /// whether the whole target is empty, for the emptied-target guard.
    private func readScopedRemote(_ remote: any RemoteCollection, needing: (RecordID) -> Bool,
                                  progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> RemoteSnapshot {
        let prefixes = scope.listingPrefixes
        var listing = try await RemoteReads.listRevisions(remote, prefixes: prefixes, progress: progress)
        // A listing of every name tells at once whether the target is empty.
        let listedNothing = listing.revisions.isEmpty && listing.unusable.isEmpty
        listing.revisions = listing.revisions.filter { scope.contains($0.key) }
        listing.unusable = []
        let bodies = try await fetchChangedBodies(remote, listing: &listing, needing: needing, progress: progress)
        var snapshot: RemoteSnapshot
        if let prefixes {
            snapshot = RemoteSnapshot(listing: listing, bodies: bodies, read: .ranges(prefixes.count, documents: listing.revisions.count))
            // Asked only when it matters: nothing in scope is left and the base has records there.
            if listing.revisions.isEmpty, !manifest.entries.isEmpty {
                do {
                    snapshot.wholeTargetEmpty = try await remote.isEmpty()
                } catch {
                    throw .remoteFailure(error)
                }
            }
        } else {
            snapshot = RemoteSnapshot(listing: listing, bodies: bodies, read: .everyName(because: rules.changeField.map { _ in .scoped }))
            snapshot.wholeTargetEmpty = listedNothing
        }
        return snapshot
    }

    /// The bodies of the listed documents whose revision differs from the
    /// base and that `needing` wants; a listed one gone by then is taken out
    /// of `listing` (deleted meanwhile).
    private func fetchChangedBodies(_ remote: any RemoteCollection, listing: inout RemoteListing, needing: (RecordID) -> Bool,
                                    progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> [RecordID: RemoteDocument] {
        let needed = listing.revisions.compactMap { id, revision in !manifest.entries.holds(revision: revision, for: id) && needing(id) ? id : nil }
        let bodies = try await RemoteReads.fetchBodies(remote, ids: needed, progress: progress)
        for id in needed where bodies[id] == nil { listing.revisions[id] = nil }
        return bodies
    }

    /// The snapshot from the documents changed since `mark`, or why it
    /// cannot be trusted: when the collection's count differs from the base
    /// plus the changed documents new to it, a document was deleted or
    /// written without the change field, and only a full listing finds it.
    private func readChanges(_ remote: any RemoteCollection, since mark: ChangeMark, counting: Bool, prefetched: RemoteChanges?,
                             progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> ChangesOutcome {
        let counter = ProgressCounter(phase: "reading changes", total: nil, report: progress)
        let found: RemoteChanges?
        if let prefetched {
            found = prefetched
        } else {
            do {
                found = try await remote.changes(since: mark, counting: counting) { counter.add($0) }
            } catch {
                throw .remoteFailure(error)
            }
        }
        guard let found else { return .listEveryName(.noChangeQuery) }
        // A mark after the server's clock cannot come from a sync: a damaged or
        // forged manifest (a cloned collection is untrusted) must not hide changes.
        if let readTime = found.readTime.flatMap(Timestamp.init(serverTime:)), mark.time > readTime {
            return .listEveryName(.markAfterReadTime(mark.time.rfc3339))
        }
        var listing = RemoteListing(revisions: RemoteRevisions(keyedLike: manifest.entries), unusable: found.unusable, readTime: found.readTime)
        for (id, entry) in manifest.entries { listing.revisions[id] = entry.revision }
        for (id, document) in found.documents { listing.revisions[id] = document.revision }
        let accounted = listing.revisions.count + listing.unusable.count
        if let counted = found.count, accounted != counted {
            return .listEveryName(.countDiffers(field: mark.field, accounted: accounted, counted: counted))
        }
        return .snapshot(RemoteSnapshot(listing: listing, bodies: found.documents,
                                        read: .changes(since: mark, documents: found.documents.count, counted: found.count != nil)))
    }
}

/// The remote's listing and documents, with progress and `BooksyncError`'s
/// sentences: what the gather stage, plan, apply and push read of it.
enum RemoteReads {
    /// The revision of every document (and the unusable ones), with progress.
    /// With `prefixes`, at least the documents whose ids start with one of them.
    /// Keyed like `entries` (see `RemoteRevisions`), the names they hold are
    /// not stored twice; a pathspec's listing (`prefixes`) is not keyed.
    static func listRevisions(_ remote: any RemoteCollection, prefixes: [String]? = nil, keyedLike entries: ManifestEntries? = nil,
                              progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> RemoteListing {
        let counter = ProgressCounter(phase: "listing", total: nil, report: progress)
        do {
            if let prefixes { return try await remote.listRevisions(prefixes: prefixes) { counter.add($0) } }
            let revisions = entries.map(RemoteRevisions.init(keyedLike:)) ?? RemoteRevisions()
            return try await remote.listRevisions(into: revisions) { counter.add($0) }
        } catch {
            throw .remoteFailure(error)
        }
    }

    /// The documents `ids`, in id order; a missing one was deleted.
    static func fetchBodies(_ remote: any RemoteCollection, ids: [RecordID], progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> [RecordID: RemoteDocument] {
        guard !ids.isEmpty else { return [:] }
        let counter = ProgressCounter(phase: "downloading", total: ids.count, report: progress)
        do {
            return try await remote.fetch(ids.sorted()) { counter.add($0) }
        } catch {
            throw .remoteFailure(error)
        }
    }
}

/// What reading the changes gave: a snapshot, or why every name must be listed.
private enum ChangesOutcome {
    case snapshot(RemoteSnapshot)
    case listEveryName(FullListingReason)
}
