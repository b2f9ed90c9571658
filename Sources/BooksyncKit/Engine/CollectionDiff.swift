import BooksyncCore

/// The three versions of one record, field by field (`booksync diff`).
public struct RecordDiff: Sendable, Equatable {
    /// The record.
    public let id: RecordID
    /// Its class, as `status` reports it.
    public let state: SyncState
    /// Fields that are not the same in base, local and remote; none when
    /// the record file is there but cannot be read as a record.
    public let fields: [FieldDifference]
    /// Whether each side has the record at all (a deleted side has no fields).
    public let inBase: Bool
    /// Whether the record file exists and can be read as a record.
    public let inLocal: Bool
    /// Whether the remote has the record (offline: the base stands in for it).
    public let inRemote: Bool
}

/// What `diff` found: the records, and, when every changed record is asked
/// for, the files and documents that cannot be records at all.
public struct CollectionDiff: Sendable, Equatable {
    /// One entry per record compared, in the order asked for (by id when none were named).
    public let records: [RecordDiff]
    /// Files that cannot be records; empty when records were named.
    public let unusableFiles: [UnusableFile]
    /// Documents whose names cannot be record ids; empty when records were
    /// named or the remote was not read.
    public let unusableRemote: [UnusableRemoteDocument]

    /// Conflicts, invalid records or unusable files: exit status 1, as for `status`.
    public var needsAttention: Bool {
        !unusableFiles.isEmpty || !unusableRemote.isEmpty || records.contains { $0.state.needsAttention }
    }
}

extension SyncState {
    /// A conflict or an invalid side: what `status` and `diff` exit 1 for.
    public var needsAttention: Bool {
        switch self {
        case .conflict, .invalidLocal, .invalidRemote: true
        default: false
        }
    }
}

extension CollectionDirectory {
    /// The field-level differences of the named records (all changed records,
    /// and the unusable files and documents, when none are named).
    /// - Parameters:
    ///   - ids: The records to compare; empty for every record that is not clean.
    ///   - remote: The remote collection; nil (`--offline`) takes the base as the remote side.
    ///   - progress: Called from any thread while the remote is listed and read.
    /// - Throws: `BooksyncError.invalidArgument` for a named record no side
    ///   knows; otherwise as `status`.
    @_spi(Remote)
    public func diff(_ ids: [RecordID], remote: (any RemoteCollection)?, progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(BooksyncError) -> CollectionDiff {
        let stamp = manifestStamp()
        let manifest = try loadManifest(for: remote)
        // With the base, as status scans: a synced record below a folder the scan cannot enter is invalid, not deleted.
        let scan = try await scanLocal(base: manifest, baseStamp: stamp)
        // The gather stage as status, pull and push run it; diff then reads the fields.
        let gather = SyncGather(collection: self, manifest: manifest, scan: scan, scope: .everything)
        var snapshot: RemoteSnapshot?
        if let remote {
            let named = Set(ids)
            snapshot = try await gather.readRemote(remote, needing: { named.isEmpty || named.contains($0) }, progress: progress)
        }
        let listing = snapshot?.listing
        // Only the records shown are classified and kept: a million clean
        // records would otherwise be a million states held to print none.
        for id in ids where scan.files[id] == nil && manifest.entries[id] == nil && listing?.revisions[id] == nil {
            throw .invalidArgument("no record '\(TerminalEscaping.abbreviate(id.rawValue))' here, in the base or remotely")
        }
        let classified = ids.isEmpty
            ? gather.classify(remote: snapshot, includeClean: false)
            : gather.classify(remote: snapshot, only: ids)
        let states = Dictionary(classified.records.map { ($0.id, $0.state) }, uniquingKeysWith: { first, _ in first })
        let targets = ids.isEmpty ? classified.records.map(\.id) : ids
        var diffs: [RecordDiff] = []
        for id in targets {
            guard let state = states[id] else { continue }
            let base = baseCopies.fields(id, hash: manifest.entries[id]?.hash)
            let local = scan.files[id] == nil ? nil : loadLocalFields(id)
            let remoteFields: Fields?
            if let listing, let revision = listing.revisions[id] {
                remoteFields = revision == manifest.entries[id]?.revision ? base : snapshot?.bodies[id]?.record?.fields
            } else if listing != nil {
                remoteFields = nil
            } else {
                remoteFields = base
            }
            // A file there that cannot be read as a record (a syntax error, a
            // duplicate key) has fields nobody knows, not none: compared as
            // absent, every field would read as deleted locally.
            let unreadable = local == nil && scan.files[id] != nil
            diffs.append(RecordDiff(
                id: id, state: state, fields: unreadable ? [] : FieldDiff.compare(base: base, local: local, remote: remoteFields),
                inBase: base != nil, inLocal: local != nil, inRemote: remoteFields != nil))
        }
        return CollectionDiff(
            records: diffs, unusableFiles: ids.isEmpty ? scan.unusableFiles : [],
            unusableRemote: ids.isEmpty ? listing?.unusable ?? [] : [])
    }
}
