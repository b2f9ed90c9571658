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
    /// The pathspecs: only these records are synced (the manual's Scopes article), the
    /// same scope `status` takes.
    public var scope = RecordScope.everything
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
    /// What a live sync's round adds (`booksync watch`); nothing for one command.
    package var round = LiveRound()

    /// The defaults: report conflicts, write, refuse mass deletes, no `--atomic`.
    public init() {}

    /// The one mass-delete check (the manual's Safety article), for the plan of either
    /// command: refuses a plan that deletes too much of the `baseCount` base
    /// records, unless `--force`.
    /// - Parameter rerun: the command line that runs it past the guard (nil: `booksync COMMAND --force`).
    /// - Throws: `BooksyncError.massDelete` naming the command and the numbers.
    func checkDeletes<Action>(_ plan: SyncPlan<Action>, command: SyncPhase, baseCount: Int, rerun: String?) throws(BooksyncError) {
        guard plan.deletes > 0 else { return }
        let deletes = plan.deletes + round.deletesAlreadyMade
        let baseCount = baseCount + round.deletesAlreadyMade
        guard !force, deleteGuard.refuses(deletes: deletes, baseCount: baseCount) else { return }
        throw .massDelete(command: command.rawValue, deletes: deletes, baseCount: baseCount, maximumPercent: deleteGuard.maximumPercent,
                          alreadyDeleted: round.deletesAlreadyMade, rerun: rerun)
    }
}

/// The knobs a live sync (`booksync watch`) sets on each round's pull or push,
/// kept apart from the options a command line or an app sets.
package struct LiveRound: Sendable {
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

    package init() {}
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
