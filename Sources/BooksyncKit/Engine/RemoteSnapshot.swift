import BooksyncCore

/// The remote side as one command sees it: the revision of every document,
/// and the bodies that were needed. Status, pull and diff all read it through
/// `readRemote(_:manifest:needing:progress:)`, so they classify every record alike.
struct RemoteSnapshot: Sendable {
    var listing: RemoteListing
    /// The fetched documents; a listed document whose body was not needed is absent here.
    var bodies: [RecordID: RemoteDocument]
    /// How the listing was made: the change query, or every name.
    var read: RemoteRead = .everyName(because: nil)
    /// A folder or glob scope listed every name before narrowing, and there
    /// were none: the target is empty, whatever the scope (the emptied-target guard).
    var wholeTargetEmpty = false
    /// Base records whose documents exist but left the collection's scope
    /// (config `"scope"`): not in `listing`, found by a read by name.
    var outsideScope: Set<RecordID> = []

    /// The change mark a pull records after applying this snapshot to
    /// `base`: every document the base does not match stays after it (see
    /// `ChangeMark.after`). nil when no mark is safe: a document the base
    /// has and the remote does not (a kept local change against a remote
    /// deletion), or a remote name that cannot be a record, is found only by
    /// listing every name, so the next command must.
    func nextChangeMark(field: String, scope: ScopeExpression? = nil, base: Manifest, fetchedLater: [RecordID: String] = [:]) -> ChangeMark? {
        guard listing.unusable.isEmpty else { return nil }
        let (unrecorded, notInBase) = unrecordedChangeTimes(base: base, fetchedLater: fetchedLater)
        // Every base id is listed exactly when the listed ids the base has are all of them.
        guard listing.revisions.count - notInBase == base.entries.count else { return nil }
        return ChangeMark.after(field: field, scope: scope, readTime: listing.readTime, unrecorded: unrecorded)
    }

    /// The change time of every listed document `base` does not hold at its
    /// listed revision (nil where no body was read), and how many of them
    /// `base` does not hold at all. `fetchedLater`: the change times of bodies
    /// a pull fetched with their chunk (`PullBodies`) that the base did not
    /// record at their listed revision.
    func unrecordedChangeTimes(base: Manifest, fetchedLater: [RecordID: String] = [:]) -> (times: [String?], notInBase: Int) {
        var times: [String?] = []
        var notInBase = 0
        for (id, revision) in listing.revisions {
            let entry = base.entries[id]
            if entry == nil { notInBase += 1 }
            if entry?.revision != revision { times.append(bodies[id]?.changeTime ?? fetchedLater[id]) }
        }
        return (times, notInBase)
    }

    /// The remote side of `id` for `SyncRules.classify`.
    func version(_ id: RecordID) -> RemoteVersion {
        guard let revision = listing.revisions[id] else { return outsideScope.contains(id) ? .outsideScope : .absent }
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

    /// Whether a pull needs the remote body of `id` (listed at a revision
    /// `base` does not hold) before planning: only when the local side changed
    /// too, so the hashes tell converged from conflict, a record both sides
    /// modified is merged, and a conflict's remote side is stored. A record
    /// changed remotely only is a write whatever its body holds; the body is
    /// fetched with its chunk, right before it is written
    /// (`SyncEngine.applyPullPlan`), so a pull holds one chunk of bodies, not
    /// every changed document's.
    func pullNeedsRemoteBody(_ id: RecordID, base: Manifest) -> Bool {
        switch files[id] {
        case .invalid?: return false
        case nil: return base.entries[id] != nil  // deleted here
        case .valid(let hash)?: return base.entries[id]?.hash != hash  // added or modified here
        }
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
    func readRemote(_ remote: any RemoteCollection, manifest: Manifest, needing: (RecordID) -> Bool, fullListing: Bool = false,
                    listingBecause: FullListingReason? = nil,
                    counting: Bool = true, prefetched: PrefetchedChanges? = nil, scope: RecordScope = .everything,
                    unbasedLocal: [RecordID] = [],
                    progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> RemoteSnapshot {
        if let ids = scope.namedIDs {
            // Billed reads are the ids named, not the collection.
            var bodies = try await fetchRemoteBodies(remote, ids: ids, progress: progress)
            var outside: Set<RecordID> = []
            if rules.scope != nil {
                // Read by name, so the scope is applied here, as the query would.
                for (id, document) in bodies {
                    guard let record = document.record, !rules.isInScope(record) else { continue }
                    bodies[id] = nil
                    outside.insert(id)
                }
            }
            let listing = RemoteListing(revisions: bodies.mapValues(\.revision))
            var snapshot = RemoteSnapshot(listing: listing, bodies: bodies, read: .named(documents: bodies.count))
            snapshot.outsideScope = outside
            return snapshot
        }
        if !scope.isEverything {
            var snapshot = try await readScopedRemote(remote, scope: scope, manifest: manifest, needing: needing, progress: progress)
            try await findLeftScope(remote, snapshot: &snapshot, manifest: manifest, unbasedLocal: unbasedLocal, within: scope, progress: progress)
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
                                                 prefetched: prefetched?.mark == mark ? prefetched?.changes : nil, manifest: manifest, progress: progress) {
                case .snapshot(var snapshot):
                    try await findLeftScope(remote, snapshot: &snapshot, manifest: manifest, unbasedLocal: unbasedLocal, within: scope, progress: progress)
                    return snapshot
                case .listEveryName(let why): reason = why
                }
            } else {
                reason = .noMark(field: field)
            }
        }
        var listing = try await listRemoteRevisions(remote, progress: progress)
        let bodies = try await fetchChangedBodies(remote, listing: &listing, manifest: manifest, needing: needing, progress: progress)
        var snapshot = RemoteSnapshot(listing: listing, bodies: bodies, read: .everyName(because: reason))
        try await findLeftScope(remote, snapshot: &snapshot, manifest: manifest, unbasedLocal: unbasedLocal, within: scope, progress: progress)
        return snapshot
    }

    /// With a scope (config `"scope"`), tells the records the scoped listing
    /// left out apart, by a read by name (one billed read each): a base
    /// record whose document is still there has left the scope (its file is
    /// kept, its base entry let go), one that is not was deleted; a local
    /// record without a base entry (`unbasedLocal`: a new file, or the file
    /// of a record that left) whose document exists outside the scope stays
    /// local (`SyncState.outsideScope`), or push would try to create it.
    func findLeftScope(_ remote: any RemoteCollection, snapshot: inout RemoteSnapshot, manifest: Manifest, unbasedLocal: [RecordID],
                       within scope: RecordScope, progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) {
        guard rules.scope != nil else { return }
        let missing = manifest.entries.keys.filter { snapshot.listing.revisions[$0] == nil && scope.contains($0) }
            + unbasedLocal.filter { snapshot.listing.revisions[$0] == nil && scope.contains($0) }
        guard !missing.isEmpty else { return }
        for (id, document) in try await fetchRemoteBodies(remote, ids: Array(missing), progress: progress) {
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
    private func readScopedRemote(_ remote: any RemoteCollection, scope: RecordScope, manifest: Manifest, needing: (RecordID) -> Bool,
                                  progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> RemoteSnapshot {
        let prefixes = scope.listingPrefixes
        var listing = try await listRemoteRevisions(remote, prefixes: prefixes, progress: progress)
        // A listing of every name tells at once whether the target is empty.
        let listedNothing = listing.revisions.isEmpty && listing.unusable.isEmpty
        listing.revisions = listing.revisions.filter { scope.contains($0.key) }
        listing.unusable = []
        let bodies = try await fetchChangedBodies(remote, listing: &listing, manifest: manifest, needing: needing, progress: progress)
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
    private func fetchChangedBodies(_ remote: any RemoteCollection, listing: inout RemoteListing, manifest: Manifest, needing: (RecordID) -> Bool,
                                    progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> [RecordID: RemoteDocument] {
        let needed = listing.revisions.filter { id, revision in manifest.entries[id]?.revision != revision && needing(id) }.keys
        let bodies = try await fetchRemoteBodies(remote, ids: Array(needed), progress: progress)
        for id in needed where bodies[id] == nil { listing.revisions[id] = nil }
        return bodies
    }

    /// The snapshot from the documents changed since `mark`, or why it
    /// cannot be trusted: when the collection's count differs from the base
    /// plus the changed documents new to it, a document was deleted or
    /// written without the change field, and only a full listing finds it.
    private func readChanges(_ remote: any RemoteCollection, since mark: ChangeMark, counting: Bool, prefetched: RemoteChanges?,
                             manifest: Manifest, progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> ChangesOutcome {
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
        var listing = RemoteListing(revisions: manifest.entries.mapValues(\.revision), unusable: found.unusable, readTime: found.readTime)
        for (id, document) in found.documents { listing.revisions[id] = document.revision }
        let accounted = listing.revisions.count + listing.unusable.count
        if let counted = found.count, accounted != counted {
            return .listEveryName(.countDiffers(field: mark.field, accounted: accounted, counted: counted))
        }
        return .snapshot(RemoteSnapshot(listing: listing, bodies: found.documents,
                                        read: .changes(since: mark, documents: found.documents.count, counted: found.count != nil)))
    }

    /// The revision of every document (and the unusable ones), with progress.
    /// With `prefixes`, at least the documents whose ids start with one of them.
    func listRemoteRevisions(_ remote: any RemoteCollection, prefixes: [String]? = nil,
                             progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> RemoteListing {
        let counter = ProgressCounter(phase: "listing", total: nil, report: progress)
        do {
            if let prefixes { return try await remote.listRevisions(prefixes: prefixes) { counter.add($0) } }
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

/// What reading the changes gave: a snapshot, or why every name must be listed.
private enum ChangesOutcome {
    case snapshot(RemoteSnapshot)
    case listEveryName(FullListingReason)
}

extension BooksyncError {
    /// A remote call's failure: `.interrupted` when it failed because the
    /// command was cancelled (Ctrl-C), so that is what the user is told.
    static func remoteFailure(_ error: RemoteError) -> BooksyncError {
        Task.isCancelled ? .interrupted : .remote(error)
    }
}

/// How a command read the remote side; `--verbose` prints `description`.
public enum RemoteRead: Sendable, Equatable {
    /// One query for the documents changed since the mark (`documents` of
    /// them) and, when `counted`, a count of the collection.
    case changes(since: ChangeMark, documents: Int, counted: Bool)
    /// Every name was listed; the reason is nil for a collection without a change field.
    case everyName(because: FullListingReason?)
    /// Only the documents named by pathspecs were read, with one `batchGet`.
    case named(documents: Int)
    /// Only the names in the id ranges of folder or glob pathspecs were listed
    /// (`ranges` of them), `documents` of them in scope.
    case ranges(Int, documents: Int)

    /// A sentence for `--verbose`; nil when there is nothing to explain (no change field).
    public var description: String? {
        switch self {
        case .changes(let mark, let documents, let counted):
            return "read the \(documents) document\(documents == 1 ? "" : "s") whose '\(mark.field)' is at or after \(mark.time.rfc3339)"
                + (counted ? ", and counted the collection" : "")
        case .everyName(nil):
            return nil
        case .named(let documents):
            return "read only the named documents by name (\(documents) found), not a listing"
        case .ranges(let ranges, let documents):
            return "listed only the names in the pathspecs' \(ranges == 1 ? "id range" : "\(ranges) id ranges") (\(documents) in scope), not every name"
        case .everyName(let reason?):
            return "listed every name: " + reason.description
        }
    }
}

/// Why a collection with a change field was listed name by name.
public enum FullListingReason: Sendable, Equatable, CustomStringConvertible {
    /// `--full` asked for it.
    case requested
    /// Pathspecs other than ids narrow the command (the change query answers for the whole collection).
    case scoped
    /// The base has no change mark for the field yet (before the first sync with it).
    case noMark(field: String)
    /// The collection's count differs from what the base and the changes account for.
    case countDiffers(field: String, accounted: Int, counted: Int)
    /// The remote cannot query changes.
    case noChangeQuery
    /// The base's mark is later than the server's time: not from a real sync.
    case markAfterReadTime(String)

    public var description: String {
        switch self {
        case .requested:
            "--full"
        case .scoped:
            "pathspecs narrow the command, and the change query answers only for the whole collection"
        case .noMark(let field):
            "no change mark for '\(field)' yet (the next pull records one)"
        case .countDiffers(let field, let accounted, let counted):
            "the collection holds \(counted) document\(counted == 1 ? "" : "s"), but the base and the changes account for \(accounted) "
                + "(a deletion, or a document written without '\(field)')"
        case .noChangeQuery:
            "this remote cannot query changes"
        case .markAfterReadTime(let time):
            "the base's change mark (\(time)) is later than the server's time, so it cannot be trusted"
        }
    }
}
