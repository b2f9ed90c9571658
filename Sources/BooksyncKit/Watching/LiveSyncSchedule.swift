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
        /// Wait before a failed round is tried again; it doubles with each
        /// failure in a row, up to `longestRetryDelay` (a failure that does
        /// not pass, such as a refused permission, costs a request a minute,
        /// not one every 2 s).
        package var retryDelay: Duration = .seconds(2)
        package var longestRetryDelay: Duration = .seconds(60)
        /// The longest time between polls after one had to list every name
        /// (the change query could not be trusted): each such poll reads the
        /// whole collection, so they come at most this often until one reads
        /// only the changes again.
        package var listingInterval: Duration = .seconds(300)
        /// The pause after a poll that read back many documents the base
        /// holds: a little over the change mark's one-minute margin.
        package var readBackPause: Duration = .seconds(65)
        /// How many held documents one poll may read back before the pause.
        package var readBackLimit = 100
        /// How often a syncing watch looks at every file even though the
        /// watcher reported nothing (nil: never): a write through a shared
        /// memory map raises no event, so only such a look finds it. It costs
        /// what a push with nothing to push costs (a stat of every record
        /// file, the stat cache proving the rest).
        package var fullLookInterval: Duration? = .seconds(600)

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
    /// Records of a push that was refused (the mass-delete guard) or failed in
    /// a way retrying does not fix (a file that cannot be read): they go with
    /// the next push, whatever starts it, so a save is never dropped.
    private var deferred = Set<RecordID>()
    /// Whether the refused push was of every record.
    private var deferredEverything = false
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
    /// Failed pushes and polls in a row (each retried later than the last).
    private var pushFailures = 0
    private var pollFailures = 0

    /// The wait after the `failures`-th failure in a row.
    private func retryDelay(after failures: Int) -> Duration {
        min(settings.retryDelay * (1 << min(max(failures - 1, 0), 20)), max(settings.longestRetryDelay, settings.retryDelay))
    }

    /// A schedule whose first poll is due one interval after `start`
    /// (the watch begins with a full pull of its own).
    package init(_ settings: Settings, start: Duration = .zero) {
        self.settings = settings
        nextPoll = settings.pollInterval.map { start + $0 }
    }

    /// Whether local changes wait to be pushed.
    package var hasPendingChanges: Bool { pendingEverything || !pending.isEmpty }

    /// Whether a refused push's records wait for the next push.
    package var hasDeferredChanges: Bool { deferredEverything || !deferred.isEmpty }

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
        // A save settling (at most `longestWait`) goes before a poll: the
        // poll would hold it up for a whole round.
        let settling = hasPendingChanges && now >= pushNotBefore
        if let poll = nextPoll, now >= poll, !settling {
            return .pull(counting: pollsSinceCount + 1 >= settings.countEvery)
        }
        return nil
    }

    /// When something may next be due: the loop may sleep until then, or until the watcher wakes it.
    package func nextWake(after now: Duration) -> Duration? {
        var wake: [Duration] = []
        let settling = hasPendingChanges && now >= pushNotBefore
        if hasPendingChanges, let first = firstChange, let last = lastChange {
            wake.append(max(pushNotBefore, min(last + settings.debounce, first + settings.longestWait)))
        }
        if let poll = nextPoll, !settling { wake.append(poll) }
        return wake.min().map { max($0, now) }
    }

    /// Takes the pending changes for the push that starts at `now`: changes
    /// seen while it runs are pending for the next one, so a save made
    /// during a push is never taken as pushed.
    /// - Returns: The records to push, nil for every record.
    package mutating func startPush(at now: Duration) -> Set<RecordID>? {
        let taken: Set<RecordID>? = pendingEverything || deferredEverything ? nil : pending.union(deferred)
        dropPending()
        deferred = []
        deferredEverything = false
        return taken
    }

    /// A push of `ids` (nil: every record) failed at `now`.
    /// - Parameters:
    ///   - ids: The records the push took (`startPush`); nil for every record.
    ///   - retrying: true when trying again fixes it (the lock held
    ///     by another command, the network down): they are pending again, and
    ///     tried after `retryDelay`. false when the user must act (a refused
    ///     mass delete): they wait, deferred, for the next push a save starts.
    ///   - now: The schedule's clock when it failed.
    package mutating func pushFailed(_ ids: Set<RecordID>?, retrying: Bool, at now: Duration) {
        guard retrying else {
            if let ids { deferred.formUnion(ids) } else { deferredEverything = true }
            return
        }
        if let ids { pending.formUnion(ids) } else { pendingEverything = true }
        firstChange = firstChange ?? now
        lastChange = lastChange ?? now
        pushFailures += 1
        pushNotBefore = now + retryDelay(after: pushFailures)
    }

    /// A push went through: the next failure waits `retryDelay` again.
    package mutating func pushSucceeded() {
        pushFailures = 0
    }

    /// Forgets what is pending.
    private mutating func dropPending() {
        pending = []
        pendingEverything = false
        firstChange = nil
        lastChange = nil
    }

    /// How a poll ended.
    package enum PollOutcome: Equatable, Sendable {
        /// It read only what changed (or nothing needed reading).
        case readChanges
        /// It had to list every name and left no change mark, so the next
        /// poll would list every name again: polls come at most every `listingInterval`.
        case listedEveryName
        /// It read back many documents the base already holds (a bulk write
        /// of the last minute, which the change mark's margin returns to
        /// every poll): the next poll waits `readBackPause`, until they are
        /// past the margin, instead of reading them all again.
        case readBackMany
        /// It failed in a way that trying again soon may fix (the network, the lock).
        case failedRetrying
        /// It failed in a way the user must fix (a refused mass delete): the
        /// polls go on at their interval, and the next count asks again.
        case failed
    }

    /// A poll finished at `now`. Polls keep their rate (every `pollInterval`
    /// from the first, skipping the ones a long poll overran), so the reads
    /// an hour are what the start line says.
    package mutating func polled(counting: Bool, _ outcome: PollOutcome, at now: Duration) {
        guard let interval = settings.pollInterval, let due = nextPoll else { return }
        if outcome == .failedRetrying {
            pollFailures += 1
            // The first retry comes within the interval; later ones back off past it.
            nextPoll = now + (pollFailures == 1 ? min(interval, settings.retryDelay) : retryDelay(after: pollFailures))
            return
        }
        pollFailures = 0
        switch outcome {
        case .failedRetrying:
            return
        case .listedEveryName:
            pollsSinceCount = 0
            nextPoll = now + max(interval, settings.listingInterval)
            return
        case .readBackMany:
            pollsSinceCount = counting ? 0 : pollsSinceCount + 1
            nextPoll = now + max(interval, settings.readBackPause)
            return
        case .readChanges, .failed:
            pollsSinceCount = counting ? 0 : pollsSinceCount + 1
        }
        var next = due + interval
        if next <= now {
            let missed = (now - due) / interval
            next = due + interval * (Int(missed.rounded(.down)) + 1)
        }
        nextPoll = next
    }
}
