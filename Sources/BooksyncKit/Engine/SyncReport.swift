import BooksyncCore

/// Options of the writing commands.
public struct SyncOptions: Sendable {
    /// Print the plan, write nothing anywhere.
    public var dryRun = false
    /// `--ours` / `--theirs` for pull's conflicts.
    public var conflictChoice: ConflictChoice = .ask
    /// `--max-delete`: how much of the base one command may delete.
    public var deleteGuard = DeleteGuard()
    /// `--force`: skip the mass-delete guard.
    public var force = false
    /// `--atomic`: push all writes in one commit, or none.
    public var atomic = false
    /// `--full`: list every remote name even when a change field and mark
    /// would let pull read only the changes.
    public var fullListing = false
    /// The pathspecs: only these records are synced (the manual's Scopes article).
    package var scope = RecordScope.everything
    /// Once a download of unknown size (a first pull) has lasted this long,
    /// ask the remote how many documents it holds, so progress can show a
    /// percentage and the time left. Firestore bills one read per 1,000
    /// documents counted, a thousandth of the download's own reads; short
    /// transfers never ask. Nil (the default) never asks.
    public var countTotalAfter: Duration?
    /// The document count the caller already knows (a whole-database
    /// clone's discovery counted every collection): a first pull's progress
    /// shows it, and no `count()` is asked (nor billed) for it.
    package var knownTotal: Int?
    /// With a change field: trust the query for changes without counting the
    /// collection (a live sync's poll between counts). Deletions, and writes
    /// that did not set the field, wait for the next counted pull.
    package var changesWithoutCount = false
    /// The scope is the records a watcher saw change (a live sync), not
    /// pathspecs a user typed: one that matches nothing (a file created and
    /// deleted between two rounds) is no error, and the mass-delete guard
    /// measures against the whole base, since deleting 5 of the records
    /// saved is not deleting 5 of 5.
    package var scopeFromWatcher = false
    /// Deletions a live sync already made in this direction since it started:
    /// the mass-delete guard adds them to the plan's (and to the base they
    /// were made from), so deleting a few files per round cannot empty the
    /// collection round by round.
    package var deletesAlreadyMade = 0
    /// The change query's answer a live sync's poll already read (to learn
    /// that nothing changed without scanning or locking); a pull from the
    /// same mark uses it instead of asking, and paying, again.
    package var prefetchedChanges: PrefetchedChanges?

    /// The defaults: report conflicts, write, refuse mass deletes, no `--atomic`.
    public init() {}

    /// The one mass-delete check (the manual's Safety article), for the plan of either
    /// command: refuses a plan that deletes too much of the `baseCount` base
    /// records, unless `--force`.
    /// - Parameter rerun: the command line that runs it past the guard (nil: `booksync COMMAND --force`).
    /// - Throws: `BooksyncError.massDelete` naming the command and the numbers.
    func checkDeletes<Action>(_ plan: SyncPlan<Action>, command: SyncPhase, baseCount: Int, rerun: String?) throws(BooksyncError) {
        guard plan.deletes > 0 else { return }
        let deletes = plan.deletes + deletesAlreadyMade
        let baseCount = baseCount + deletesAlreadyMade
        guard !force, deleteGuard.refuses(deletes: deletes, baseCount: baseCount) else { return }
        throw .massDelete(command: command.rawValue, deletes: deletes, baseCount: baseCount, maximumPercent: deleteGuard.maximumPercent,
                          alreadyDeleted: deletesAlreadyMade, rerun: rerun)
    }
}

/// A change query's answer, with the mark it was asked from.
package struct PrefetchedChanges: Sendable {
    package let mark: ChangeMark
    package let changes: RemoteChanges

    package init(mark: ChangeMark, changes: RemoteChanges) {
        self.mark = mark
        self.changes = changes
    }
}

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
