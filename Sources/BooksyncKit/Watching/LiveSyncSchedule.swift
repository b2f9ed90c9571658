import BooksyncCore

/// When a live sync (`booksync watch`) pushes and pulls: the debounce of
/// local saves and the poll of the remote, as a pure state machine. The
/// loop tells it what the watcher saw and what each round did, with the
/// time since the watch started, and asks what to do now.
///
/// Saves are pushed once the files have been quiet for `debounce` (an
/// editor's save is a write, a rename and a metadata change, often as
/// several events), but never later than `longestWait` after the first
/// change, so a file rewritten without pause still goes out. A failed round
/// (the lock held by another command, the network down) keeps what it had
/// to do and tries again after `retryDelay`.
package struct LiveSyncSchedule: Sendable {
    /// The intervals; see `LiveSyncSchedule`.
    package struct Settings: Sendable, Equatable {
        /// Quiet time after the last local change before pushing.
        package var debounce: Duration = .milliseconds(200)
        /// The longest a local change waits for quiet.
        package var longestWait: Duration = .seconds(2)
        /// Time between polls of the remote; nil: never poll.
        package var pollInterval: Duration? = .seconds(5)
        /// Every how many polls one counts the collection too (with a change
        /// field, only a count finds deletions and writes without the field).
        package var countEvery = 60
        /// Wait before a failed round is tried again.
        package var retryDelay: Duration = .seconds(2)

        package init() {}
    }

    /// What to do now.
    package enum Action: Equatable, Sendable {
        /// Push these records, or every record (`nil`: the watcher could not say which).
        case push(Set<RecordID>?)
        /// Pull; `counting`: with the collection's count (a full check).
        case pull(counting: Bool)
    }

    package let settings: Settings
    /// Records changed locally and not pushed yet.
    private var pending = Set<RecordID>()
    /// Whether every record must be looked at (the watcher lost track).
    private var pendingEverything = false
    /// When the oldest and the newest unpushed change were seen.
    private var firstChange: Duration?
    private var lastChange: Duration?
    /// A failed push is not retried before this.
    private var pushNotBefore = Duration.zero
    /// When the next poll is due.
    private var nextPoll: Duration?
    /// Polls since the last counted one.
    private var pollsSinceCount = 0

    /// A schedule whose first poll is due one interval after `start`
    /// (the watch begins with a full pull of its own).
    package init(_ settings: Settings, start: Duration = .zero) {
        self.settings = settings
        nextPoll = settings.pollInterval.map { start + $0 }
    }

    /// Whether local changes wait to be pushed.
    package var hasPendingChanges: Bool { pendingEverything || !pending.isEmpty }

    /// Notes records the watcher saw change at `now`; `everything` when it
    /// cannot say which (then every record is looked at).
    package mutating func noteLocalChanges(_ ids: Set<RecordID>, everything: Bool = false, at now: Duration) {
        guard everything || !ids.isEmpty else { return }
        pending.formUnion(ids)
        pendingEverything = pendingEverything || everything
        firstChange = firstChange ?? now
        lastChange = now
    }

    /// What is due at `now`, pushes first (a save is what the user waits for).
    package func due(at now: Duration) -> Action? {
        if hasPendingChanges, now >= pushNotBefore, let first = firstChange, let last = lastChange,
           now - last >= settings.debounce || now - first >= settings.longestWait {
            return .push(pendingEverything ? nil : pending)
        }
        if let poll = nextPoll, now >= poll {
            return .pull(counting: pollsSinceCount + 1 >= settings.countEvery)
        }
        return nil
    }

    /// When something may next be due: the loop may sleep until then, or until the watcher wakes it.
    package func nextWake(after now: Duration) -> Duration? {
        var wake: [Duration] = []
        if hasPendingChanges, let first = firstChange, let last = lastChange {
            wake.append(max(pushNotBefore, min(last + settings.debounce, first + settings.longestWait)))
        }
        if let poll = nextPoll { wake.append(poll) }
        return wake.min().map { max($0, now) }
    }

    /// Takes the pending changes for the push that starts at `now`: changes
    /// seen while it runs are pending for the next one, so a save made
    /// during a push is never taken as pushed.
    /// - Returns: The records to push, nil for every record.
    package mutating func startPush(at now: Duration) -> Set<RecordID>? {
        let taken: Set<RecordID>? = pendingEverything ? nil : pending
        dropPending()
        return taken
    }

    /// A push of `ids` (nil: every record) failed at `now` in a way worth
    /// trying again (the lock held by another command, the network down):
    /// they are pending again, and tried after `retryDelay`.
    package mutating func pushFailed(_ ids: Set<RecordID>?, at now: Duration) {
        if let ids { pending.formUnion(ids) } else { pendingEverything = true }
        firstChange = firstChange ?? now
        lastChange = lastChange ?? now
        pushNotBefore = now + settings.retryDelay
    }

    /// Forgets what is pending.
    private mutating func dropPending() {
        pending = []
        pendingEverything = false
        firstChange = nil
        lastChange = nil
    }

    /// A poll finished at `now` (or failed; then it is tried again after `retryDelay`).
    package mutating func polled(counting: Bool, succeeded: Bool, at now: Duration) {
        guard let interval = settings.pollInterval else { return }
        guard succeeded else {
            nextPoll = now + min(interval, settings.retryDelay)
            return
        }
        pollsSinceCount = counting ? 0 : pollsSinceCount + 1
        nextPoll = now + interval
    }
}
