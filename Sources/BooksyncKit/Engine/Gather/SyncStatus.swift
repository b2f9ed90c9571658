import BooksyncCore

/// One record's three-way state.
public struct RecordStatus: Sendable, Equatable {
    /// The record.
    public let id: RecordID
    /// How base, record file and document relate (the manual's ThreeWaySync article).
    public let state: SyncState
}

/// The result of `status`.
public struct SyncStatus: Sendable {
    /// Records that are not clean, sorted by id.
    public let records: [RecordStatus]
    /// Files in the directory that cannot be records; they make `status` exit 1.
    public let unusableFiles: [UnusableFile]
    /// How the remote was read (nil when offline), for `--verbose`.
    public var remoteRead: RemoteRead?
    /// Remote documents whose names cannot be record ids; empty when offline.
    public let unusableRemote: [UnusableRemoteDocument]
    /// Record files in the directory.
    public let recordCount: Int
    /// Documents in the remote collection; nil when the remote was not checked.
    public let remoteCount: Int?
    /// Record files read during the scan (0 for an unchanged tree with a warm cache).
    public let filesRead: Int
    /// What the watcher did for this status, or why it could not help, for
    /// `--verbose`; nil when no watcher was asked.
    package var watcherNote: String?

    /// False for `--offline`.
    public var remoteChecked: Bool { remoteCount != nil }
    /// Nothing to pull, push or fix.
    public var isClean: Bool { records.isEmpty && unusableFiles.isEmpty && unusableRemote.isEmpty }

    /// Conflicts, invalid files or unusable documents: exit status 1.
    public var needsAttention: Bool {
        !unusableFiles.isEmpty || !unusableRemote.isEmpty || records.contains { $0.state.needsAttention }
    }
}
