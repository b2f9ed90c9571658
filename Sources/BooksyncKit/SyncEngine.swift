import Synchronization
import BooksyncCore

/// Options of the writing commands.
public struct SyncOptions: Sendable {
    /// Print the plan, write nothing anywhere.
    public var dryRun = false
    /// `--ours` / `--theirs` for pull's conflicts.
    public var conflictChoice: ConflictChoice = .ask
    public var deleteGuard = DeleteGuard()
    /// `--force`: skip the mass-delete guard.
    public var force = false
    /// `--atomic`: push all writes in one commit, or none.
    public var atomic = false

    public init() {}
}

/// Progress of a long transfer, for a progress bar.
public struct SyncProgress: Sendable {
    public let phase: String
    public let done: Int
    public let total: Int?
}

/// One record's three-way state.
public struct RecordStatus: Sendable, Equatable {
    public let id: RecordID
    public let state: SyncState
}

/// The result of `status`.
public struct SyncStatus: Sendable {
    /// Records that are not clean, sorted by id.
    public let records: [RecordStatus]
    public let unusableFiles: [UnusableFile]
    public let unusableRemote: [UnusableRemoteDocument]
    /// Record files in the directory.
    public let recordCount: Int
    /// Documents in the remote collection; nil when the remote was not checked.
    public let remoteCount: Int?
    /// Record files read during the scan (0 for an unchanged tree with a warm cache).
    public let filesRead: Int

    public var remoteChecked: Bool { remoteCount != nil }
    public var isClean: Bool { records.isEmpty && unusableFiles.isEmpty && unusableRemote.isEmpty }

    /// Conflicts, invalid files or unusable documents: exit status 1.
    public var needsAttention: Bool {
        !unusableFiles.isEmpty || !unusableRemote.isEmpty || records.contains { $0.state.needsAttention }
    }
}

/// What a pull or push did (or, with `--dry-run`, would do) to one record.
public enum SyncEventKind: Sendable, Equatable {
    case pulled(PullAction)
    case pushed(PushAction)
    /// Left alone: both sides changed it (pull).
    case conflict(ConflictKind)
    /// Push found the remote changed since the base and the content differs.
    case remoteChangedSincePull
    case invalidLocal([RecordDiagnostic])
    case invalidRemote([RecordDiagnostic])
    /// The server refused the write for a reason other than a precondition.
    case rejected(String)
    /// The local file changed while booksync was working; it was left alone.
    case changedDuringSync
}

public struct SyncEvent: Sendable, Equatable {
    public let id: RecordID
    public let kind: SyncEventKind
}

/// The result of `pull` or `push`.
public struct SyncReport: Sendable {
    public let command: String
    public let dryRun: Bool
    public var events: [SyncEvent]
    public var unusableFiles: [UnusableFile]
    public var unusableRemote: [UnusableRemoteDocument]

    public var needsAttention: Bool {
        !unusableFiles.isEmpty || !unusableRemote.isEmpty || events.contains {
            switch $0.kind {
            case .pulled, .pushed: false
            default: true
            }
        }
    }
}

extension CollectionDirectory {
    // MARK: status

    /// The three-way status (DESIGN.md §3). Without a remote (`--offline`) the
    /// remote side counts as unchanged.
    public func status(remote: (any RemoteCollection)?, progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(BooksyncError) -> SyncStatus {
        if remote == nil, let clean = quickCleanStatus() { return clean }
        let stamp = manifestStamp()
        let manifest = try loadManifest()
        let scan = try await scanLocal(base: manifest, baseStamp: stamp)
        var listing: RemoteListing?
        var bodies: [RecordID: RemoteDocument] = [:]
        if let remote {
            (listing, bodies) = try await remoteChanges(remote, scan: scan, manifest: manifest, progress: progress)
        }
        let states = classify(scan: scan, manifest: manifest, listing: listing, bodies: bodies, includeClean: false)
        return SyncStatus(
            records: states,
            unusableFiles: scan.unusableFiles, unusableRemote: listing?.unusable ?? [],
            recordCount: scan.files.count, remoteCount: listing.map { $0.revisions.count + $0.unusable.count },
            filesRead: scan.filesRead)
    }

    /// The remote side as status and pull both see it, so they classify every
    /// record alike: the revision of every document, and the body of each one
    /// whose revision differs from the base (unless its local file is invalid,
    /// which decides the class alone). Only a body tells a pullable change from
    /// a document that cannot be a record (wrong types, missing fields, a bad
    /// tag: invalid, never "added"). Unchanged documents' bodies are never
    /// fetched: each is a billed read. A document listed but gone when its
    /// body was fetched was deleted meanwhile and counts as absent.
    func remoteChanges(_ remote: any RemoteCollection, scan: LocalScan, manifest: Manifest,
                       progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> (RemoteListing, [RecordID: RemoteDocument]) {
        var listing = try await listRemoteRevisions(remote, progress: progress)
        let needed = listing.revisions.keys.filter { id in
            if case .invalid? = scan.files[id] { return false }
            return manifest.entries[id]?.revision != listing.revisions[id]
        }
        let bodies = try await fetchRemoteBodies(remote, ids: needed, progress: progress)
        for id in needed where bodies[id] == nil { listing.revisions[id] = nil }
        return (listing, bodies)
    }

    func listRemoteRevisions(_ remote: any RemoteCollection, progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> RemoteListing {
        let counter = ProgressCounter(phase: "listing", total: nil, report: progress)
        do {
            return try await remote.listRevisions { counter.add($0) }
        } catch {
            throw Task.isCancelled ? .interrupted : .remote(error)
        }
    }

    func fetchRemoteBodies(_ remote: any RemoteCollection, ids: [RecordID], progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> [RecordID: RemoteDocument] {
        guard !ids.isEmpty else { return [:] }
        let counter = ProgressCounter(phase: "downloading", total: ids.count, report: progress)
        do {
            return try await remote.fetch(ids.sorted()) { counter.add($0) }
        } catch {
            throw Task.isCancelled ? .interrupted : .remote(error)
        }
    }

    /// Classifies every record known to any side (or just `ids`), sorted by id. `bodies` holds
    /// the fetched documents; a listed document whose body was asked for but not
    /// returned was deleted in between and counts as absent. With `includeClean`
    /// false only the records that differ are returned (what status lists), which
    /// spares sorting the whole collection.
    func classify(scan: LocalScan, manifest: Manifest, listing: RemoteListing?, bodies: [RecordID: RemoteDocument], includeClean: Bool = true,
                  only ids: [RecordID]? = nil) -> [RecordStatus] {
        var result: [RecordStatus] = []
        func visit(_ id: RecordID) {
            let base = manifest.entries[id]
            let local: LocalVersion
            switch scan.files[id] {
            case nil: local = .absent
            case .invalid(let diagnostics)?: local = .invalid(diagnostics)
            case .valid(let hash)?: local = .present(hash: hash)
            }
            let remote = remoteVersion(id, listing: listing, bodies: bodies)
            let state = SyncRules.classify(base: base, local: local, remote: remote) {
                guard let remoteFields = bodies[id]?.record?.fields, let localFields = loadLocalFields(id) else { return nil }
                return FieldMerge.merge(base: baseCopies.fields(id, hash: base?.hash), local: localFields, remote: remoteFields)
            }
            if includeClean || state != .clean { result.append(RecordStatus(id: id, state: state)) }
        }
        if let ids {
            for id in ids { visit(id) }
        } else {
            for id in scan.files.keys { visit(id) }
            for id in manifest.entries.keys where scan.files[id] == nil { visit(id) }
            if let listing {
                for id in listing.revisions.keys where scan.files[id] == nil && manifest.entries[id] == nil { visit(id) }
            }
        }
        return result.sorted { $0.id < $1.id }
    }

    func remoteVersion(_ id: RecordID, listing: RemoteListing?, bodies: [RecordID: RemoteDocument]) -> RemoteVersion {
        guard let listing else { return .notChecked }
        guard let revision = listing.revisions[id] else { return .absent }
        guard let document = bodies[id] else { return .present(revision: revision, hash: nil) }
        switch document.content {
        case .record(let record): return .present(revision: document.revision, hash: record.hash)
        case .invalid(let diagnostics): return .invalid(revision: document.revision, diagnostics)
        }
    }

    /// The three-way merge of a conflicted record where each conflicting field
    /// takes the preferred side's value; nil when the local file cannot be read.
    func preferredMerge(_ id: RecordID, baseHash: String?, remote: Fields, preferLocal: Bool) -> Fields? {
        guard let local = loadLocalFields(id) else { return nil }
        let base = baseCopies.fields(id, hash: baseHash)
        return preferLocal
            ? FieldMerge.mergeKeepingLocal(base: base, local: local, remote: remote).merged
            : FieldMerge.mergeKeepingLocal(base: base, local: remote, remote: local).merged
    }

    func loadLocalFields(_ id: RecordID) -> Fields? {
        guard let bytes = try? FileSystem.readFile(paths.recordFile(id.fileName)), case .success(let fields) = rules.parse(bytes) else { return nil }
        return fields
    }
}


/// Counts progress from concurrent callbacks and reports totals.
final class ProgressCounter: Sendable {
    private let phase: String
    private let total: Int?
    private let report: @Sendable (SyncProgress) -> Void
    private let done = Mutex(0)

    init(phase: String, total: Int?, report: @escaping @Sendable (SyncProgress) -> Void) {
        self.phase = phase
        self.total = total
        self.report = report
    }

    func add(_ count: Int) {
        let now = done.withLock { value in
            value += count
            return value
        }
        report(SyncProgress(phase: phase, done: now, total: total))
    }
}

extension Array {
    func chunked(into size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
