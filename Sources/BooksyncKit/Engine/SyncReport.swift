import BooksyncCore

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
