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
        let stamp = manifestFile.stamp()
        let manifest = try manifestFile.load(for: remote)
        // With the base, as status scans: a synced record below a folder the scan cannot enter is invalid, not deleted.
        let gather = try SyncGather(self, manifest: manifest, scope: .everything, scanning: ScanChoices(baseStamp: stamp))
        return try await gather.diff(ids, remote: remote, progress: progress)
    }
}
