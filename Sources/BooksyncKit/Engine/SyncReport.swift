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

/// The phase of a sync a `SyncReport` belongs to (`sync` is a pull, then a
/// push); the raw value is the command's name on the command line and in `--json`.
public enum SyncPhase: String, Sendable, Equatable {
    /// `booksync pull` (or the pull phase of `sync`).
    case pull
    /// `booksync push` (or the push phase of `sync`).
    case push
    /// `booksync seed`: the files published one way.
    case seed
}

/// The result of `pull` or `push`.
public struct SyncReport: Sendable {
    /// Which command this reports on (`sync` gives one report per phase).
    public let command: SyncPhase
    /// True for `--dry-run`: the events say what would be done; nothing was.
    public let dryRun: Bool
    /// What was done (or would be) per record: the plan's events, then the steps' outcomes.
    public var events: SyncEvents
    /// Files that look like records but cannot be (names that are not a percent-encoded record id; a non-regular file is an invalid record instead).
    public var unusableFiles: [UnusableFile]
    /// Remote documents whose names cannot be record ids (pull only).
    public var unusableRemote: [UnusableRemoteDocument]
    /// How pull read the remote (nil for push), for `--verbose`.
    public var remoteRead: RemoteRead?
    /// Deleted documents whose subcollection records remain (a warning:
    /// neither Firestore nor booksync deletes them with their parent).
    public var deletedParents: [ParentDeletion] = []

    /// Anything other than pulled or pushed records: exit status 1.
    public var needsAttention: Bool {
        !unusableFiles.isEmpty || !unusableRemote.isEmpty || events.contains {
            switch $0.kind {
            case .pulled, .pushed, .seeded: false
            default: true
            }
        }
    }
}
