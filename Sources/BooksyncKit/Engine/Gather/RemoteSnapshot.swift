import BooksyncCore

/// The remote side as one command sees it: the revision of every document,
/// and the bodies that were needed. Status, pull and diff all read it through
/// `SyncGather.readRemote`, so they classify every record alike.
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
        for (id, revision) in listing.revisions where !base.entries.holds(revision: revision, for: id) {
            if base.entries[id] == nil { notInBase += 1 }
            times.append(bodies[id]?.changeTime ?? fetchedLater[id])
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
