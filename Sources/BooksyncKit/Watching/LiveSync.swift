import BooksyncCore

/// `booksync watch`: two-way sync while people edit. Local saves are pushed
/// shortly after they settle, the remote is polled at an interval, and each
/// round is an ordinary push or pull, so conflicts, merges, invalid files,
/// the mass-delete guard, the editor race and the lock behave exactly as in
/// those commands (<doc:LiveSync>).
///
/// The lock is taken per round, never between rounds, so other commands and
/// `RecordStore` apps run meanwhile; a round that finds the lock held waits
/// and tries again. Every round records what it finished before the next
/// starts, so stopping the process at any moment (Ctrl-C, or kill -9)
/// loses nothing: what was not pushed yet is a local change the next
/// command (or watch) finds.
package struct LiveSync: Sendable {
    /// What happened, for the command to print.
    package enum Event: Sendable {
        /// A push or pull that did or reported something (events, invalid files).
        case round(SyncReport)
        /// The next push looks at every file, and why.
        case lookingAtEverything(String)
        /// A round failed; `retrying`: it is tried again by itself (else the
        /// next save, or the next poll, tries again).
        case failed(SyncPhase, BooksyncError, retrying: Bool)
    }

    /// The time since the watch started, and a way to wait: a real clock in
    /// the command, a virtual one in tests.
    package struct Timing: Sendable {
        package let now: @Sendable () -> Duration
        package let sleep: @Sendable (Duration) async throws -> Void

        package init(now: @escaping @Sendable () -> Duration, sleep: @escaping @Sendable (Duration) async throws -> Void) {
            self.now = now
            self.sleep = sleep
        }

        /// The continuous clock, from now.
        package static func continuous() -> Timing {
            let clock = ContinuousClock()
            let start = clock.now
            return Timing(now: { clock.now - start }, sleep: { try await clock.sleep(for: $0) })
        }
    }

    package let collection: CollectionDirectory
    package let remote: any RemoteCollection
    /// The options every round starts from: the conflict choice and the mass-delete guard.
    package let options: SyncOptions
    package let settings: LiveSyncSchedule.Settings
    package let timing: Timing
    /// How often the loop looks at the watcher while nothing is due.
    package var tick: Duration = .milliseconds(50)

    package init(collection: CollectionDirectory, remote: any RemoteCollection, options: SyncOptions,
                 settings: LiveSyncSchedule.Settings, timing: Timing) {
        self.collection = collection
        self.remote = remote
        self.options = options
        self.settings = settings
        self.timing = timing
    }

    /// Pulls (counted), pushes every local change, then follows both sides
    /// until the task is cancelled.
    /// - Throws: `BooksyncError` that no later round can get past (a damaged
    ///   state file, the base recorded against another target); a cancelled
    ///   task returns normally.
    package func run(feed: LocalChangeFeed, onStaleLock: @escaping (Int32) -> Void = { _ in },
                     report: (Event) -> Void) async throws(BooksyncError) {
        var schedule = LiveSyncSchedule(settings, start: timing.now())
        var lastFailure: String?
        /// Reports a failure once while it repeats; throws the ones that end the watch.
        func failed(_ phase: SyncPhase, _ error: BooksyncError, retrying: Bool) throws(BooksyncError) {
            guard !Self.endsWatch(error) else { throw error }
            let text = "\(phase.rawValue): \(error.description)"
            if text != lastFailure { report(.failed(phase, error, retrying: retrying)) }
            lastFailure = text
        }
        func succeeded(_ result: SyncReport) {
            lastFailure = nil
            if !result.events.isEmpty || !result.unusableFiles.isEmpty || !result.unusableRemote.isEmpty { report(.round(result)) }
        }
        // The first round: what changed on either side while nobody watched.
        do {
            succeeded(try await pull(counting: true, onStaleLock: onStaleLock))
        } catch .interrupted {
            return
        } catch {
            try failed(.pull, error, retrying: false)
        }
        schedule.noteLocalChanges([], everything: true, at: timing.now())
        while !Task.isCancelled {
            let now = timing.now()
            switch feed.take(at: now) {
            case .records(let ids)?: schedule.noteLocalChanges(ids, at: now)
            case .everything(let reason)?:
                report(.lookingAtEverything(reason))
                schedule.noteLocalChanges([], everything: true, at: now)
            case nil: break
            }
            switch schedule.due(at: now) {
            case .push?:
                let ids = schedule.startPush(at: now)
                do {
                    succeeded(try await push(ids, onStaleLock: onStaleLock))
                } catch .interrupted {
                    return
                } catch {
                    let retrying = Self.worthRetrying(error)
                    if retrying { schedule.pushFailed(ids, at: timing.now()) }
                    try failed(.push, error, retrying: retrying)
                }
            case .pull(let counting)?:
                do {
                    succeeded(try await pull(counting: counting, onStaleLock: onStaleLock))
                    schedule.polled(counting: counting, succeeded: true, at: timing.now())
                } catch .interrupted {
                    return
                } catch {
                    schedule.polled(counting: counting, succeeded: false, at: timing.now())
                    try failed(.pull, error, retrying: true)
                }
            case nil:
                let wake = schedule.nextWake(after: now).map { $0 - now } ?? tick
                do {
                    try await timing.sleep(min(tick, wake))
                } catch {
                    return
                }
            }
        }
    }

    /// One push of `ids` (nil: every record).
    private func push(_ ids: Set<RecordID>?, onStaleLock: (Int32) -> Void) async throws(BooksyncError) -> SyncReport {
        var options = self.options
        if let ids {
            options.scope = RecordScope(ids.sorted().map { RecordScope.Pattern(.record($0), text: $0.fileName) })
            options.scopeFromWatcher = true
        }
        return try await collection.push(remote: remote, options: options, onStaleLock: onStaleLock)
    }

    /// One pull; without `counting` a change field's query is trusted without a count.
    private func pull(counting: Bool, onStaleLock: (Int32) -> Void) async throws(BooksyncError) -> SyncReport {
        var options = self.options
        options.changesWithoutCount = !counting
        return try await collection.pull(remote: remote, options: options, onStaleLock: onStaleLock)
    }

    /// Failures a later round gets past by itself: another command holds the
    /// lock, the network or the server failed. The others need the user (a
    /// refused mass delete, a file that cannot be written) and wait for the
    /// next save or poll.
    static func worthRetrying(_ error: BooksyncError) -> Bool {
        switch error {
        case .lockHeld, .remote: true
        default: false
        }
    }

    /// Failures no later round gets past: the watch stops with them.
    static func endsWatch(_ error: BooksyncError) -> Bool {
        switch error {
        case .notACollection, .damagedStateFile, .unfinishedGitMerge, .targetMismatch: true
        default: false
        }
    }
}
