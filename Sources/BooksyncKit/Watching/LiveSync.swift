import BooksyncCore

/// `booksync watch`: two-way sync while people edit. Local saves are pushed
/// shortly after they settle, the remote is polled at an interval, and each
/// round is an ordinary push or pull, so conflicts, merges, invalid files,
/// the mass-delete guard, the editor race and the lock behave exactly as in
/// those commands (the manual's LiveSync article).
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
        /// No round starts while git changes the tree (`GitActivity`); said
        /// once when the waiting starts.
        case waitingForGit(String)
        /// A round failed; `retrying`: it is tried again by itself (else the
        /// next save, or the next poll, tries again).
        case failed(SyncPhase, BooksyncError, retrying: Bool)
    }

    /// The time since the watch started, and a way to wait: the continuous
    /// clock in the command, a virtual one in `LiveSyncLoopTests`.
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
        var rounds = RoundMemory()
        /// Reports a failure once while it repeats; throws the ones that end the watch.
        func failed(_ phase: SyncPhase, _ error: BooksyncError, retrying: Bool) throws(BooksyncError) {
            guard !Self.endsWatch(error) else { throw error }
            if rounds.isNewFailure(phase, error) { report(.failed(phase, error, retrying: retrying)) }
        }
        func succeeded(_ result: SyncReport) {
            let shown = rounds.succeeded(result)
            if !shown.events.isEmpty || !shown.unusableFiles.isEmpty || !shown.unusableRemote.isEmpty { report(.round(shown)) }
        }
        // The first round: what changed on either side while nobody watched.
        do {
            succeeded(try await pull(counting: true, prefetched: nil, rounds: rounds, onStaleLock: onStaleLock))
        } catch .interrupted {
            return
        } catch {
            // Refused because git works: the loop says it waits, and syncs everything after.
            if !Self.isGitBusy(error) { try failed(.pull, error, retrying: false) }
        }
        schedule.noteLocalChanges([], everything: true, at: timing.now())
        var lastFullLook = timing.now()
        var base = BaseSummary()
        var git = GitWatch(ownStamp: collection.manifestFile.writeStamp(), resync: GitActivity.inProgress(at: collection.paths.root) != nil)
        while !Task.isCancelled {
            // No round starts while git changes the tree; once it is done, a base
            // git (not this watch) wrote means a pull and every file looked at,
            // as `sync` after the git command would do.
            if let activity = GitActivity.inProgress(at: collection.paths.root) {
                // Said once, and for git's index lock only when it lasts (an
                // editor's background `git status` takes it for a moment).
                let since = git.waitingSince ?? timing.now()
                git.waitingSince = since
                if git.said != activity, !GitActivity.isShortLived(activity) || timing.now() - since >= .seconds(2) {
                    report(.waitingForGit(activity))
                    git.said = activity
                }
                do { try await timing.sleep(tick) } catch { return }
                continue
            }
            git.waitingSince = nil
            git.said = nil
            if git.resync || collection.manifestFile.writeStamp() != git.ownStamp {
                report(.lookingAtEverything("the base changed outside the watch (git, or another booksync command): pulling, then looking at every file"))
                do {
                    succeeded(try await pull(counting: true, prefetched: nil, rounds: rounds, onStaleLock: onStaleLock))
                    git.resync = false
                } catch .interrupted {
                    return
                } catch {
                    git.resync = Self.isGitBusy(error)
                    if !git.resync { try failed(.pull, error, retrying: Self.worthRetrying(error)) }
                }
                git.ownStamp = collection.manifestFile.writeStamp()
                schedule.noteLocalChanges([], everything: true, at: timing.now())
                lastFullLook = timing.now()
                continue
            }
            let now = timing.now()
            switch feed.take(at: now) {
            case .records(let ids)?: schedule.noteLocalChanges(ids, at: now)
            case .everything(let reason)?:
                if let reason { report(.lookingAtEverything(reason)) }
                schedule.noteLocalChanges([], everything: true, at: now)
                lastFullLook = now
            case nil: break
            }
            // Now and then every file, for writes no watcher reports (a shared memory map).
            if let interval = settings.fullLookInterval, now - lastFullLook >= interval {
                schedule.noteLocalChanges([], everything: true, at: now)
                lastFullLook = now
            }
            switch schedule.due(at: now) {
            case .push?:
                let ids = schedule.startPush(at: now)
                do {
                    succeeded(try await push(ids, rounds: rounds, onStaleLock: onStaleLock))
                    schedule.pushSucceeded()
                } catch .interrupted {
                    return
                } catch {
                    let retrying = Self.worthRetrying(error)
                    schedule.pushFailed(ids, retrying: retrying, at: timing.now())
                    if Self.isGitBusy(error) { git.resync = true } else { try failed(.push, error, retrying: retrying) }
                }
                git.ownStamp = collection.manifestFile.writeStamp()
            case .pull(let counting)?:
                do {
                    let outcome = try await poll(counting: counting, base: &base, rounds: rounds, onStaleLock: onStaleLock)
                    if let result = outcome.report { succeeded(result) }
                    schedule.polled(counting: counting, outcome.kind, at: timing.now())
                } catch .interrupted {
                    return
                } catch {
                    let retrying = Self.worthRetrying(error)
                    schedule.polled(counting: counting, retrying ? .failedRetrying : .failed, at: timing.now())
                    if Self.isGitBusy(error) { git.resync = true } else { try failed(.pull, error, retrying: retrying) }
                }
                git.ownStamp = collection.manifestFile.writeStamp()
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

    /// One poll: with a change field and a mark, the change query first, and
    /// a pull only when it found something the base does not hold (an idle
    /// poll, or one that reads back the watch's own pushes, takes no lock and
    /// reads no record file; the query is handed to the pull, never paid twice).
    private func poll(counting: Bool, base: inout BaseSummary, rounds: RoundMemory,
                      onStaleLock: (Int32) -> Void) async throws(BooksyncError) -> (report: SyncReport?, kind: LiveSyncSchedule.PollOutcome) {
        var prefetched: PrefetchedChanges?
        if let field = collection.rules.changeField, let head = base.base(collection, remote: remote) {
            let mark = base.mark(of: head)
            let found: RemoteChanges?
            do {
                found = try await remote.changes(since: mark, counting: counting) { _ in }
            } catch {
                throw .remoteFailure(error)
            }
            if let found {
                let readTime = found.readTime.flatMap(Timestamp.init(serverTime:))
                let markTrusted = readTime.map { mark.time <= $0 } ?? true
                if markTrusted, base.holdsEverything(found, base: head, manifestPath: collection.paths.manifest, field: field) {
                    return (nil, found.documents.count > settings.readBackLimit ? .readBackMany : .readChanges)
                }
                // Handed to the pull only when it is asked from the manifest's own mark.
                if mark == head.changesSince { prefetched = PrefetchedChanges(mark: mark, changes: found) }
            }
        }
        let result = try await pull(counting: counting, prefetched: prefetched, rounds: rounds, onStaleLock: onStaleLock)
        // Polls slow down after a listing of every name only while the next
        // one would list again: not when this one recorded a change mark
        // (a base forgotten under the watch, a mark the server's time
        // contradicted), after which the change query answers again.
        if collection.rules.changeField != nil, case .everyName? = result.remoteRead, base.base(collection, remote: remote) == nil {
            return (result, .listedEveryName)
        }
        return (result, .readChanges)
    }

    /// One push of `ids` (nil: every record).
    private func push(_ ids: Set<RecordID>?, rounds: RoundMemory, onStaleLock: (Int32) -> Void) async throws(BooksyncError) -> SyncReport {
        var options = self.options
        options.round.deletesAlreadyMade = rounds.deletes[.push] ?? 0
        if let ids {
            options.scope = RecordScope(ids.sorted().map { RecordScope.Pattern(.record($0), text: $0.fileName) })
            options.round.scopeFromWatcher = true
        }
        return try await collection.push(remote: remote, options: options, onStaleLock: onStaleLock)
    }

    /// One pull; without `counting` a change field's query is trusted without a count.
    private func pull(counting: Bool, prefetched: PrefetchedChanges?, rounds: RoundMemory,
                      onStaleLock: (Int32) -> Void) async throws(BooksyncError) -> SyncReport {
        var options = self.options
        options.round.changesWithoutCount = !counting
        options.round.prefetchedChanges = prefetched
        options.round.deletesAlreadyMade = rounds.deletes[.pull] ?? 0
        return try await collection.pull(remote: remote, options: options, onStaleLock: onStaleLock)
    }

    /// Failures a later round gets past by itself: another command holds the
    /// lock, the network or the server failed. The others need the user (a
    /// refused mass delete, a file that cannot be written): a push's records
    /// then wait for the next push a save starts, and a poll comes back at
    /// its interval.
    static func worthRetrying(_ error: BooksyncError) -> Bool {
        switch error {
        case .lockHeld, .remote: true
        default: false
        }
    }

    /// Whether a round was refused because git changed the tree meanwhile:
    /// the watch then waits for git and looks at everything (`GitWatch`).
    static func isGitBusy(_ error: BooksyncError) -> Bool {
        if case .gitBusy = error { return true }
        return false
    }

    /// Failures no later round gets past: the watch stops with them.
    static func endsWatch(_ error: BooksyncError) -> Bool {
        switch error {
        case .notACollection, .damagedStateFile, .unfinishedGitMerge, .targetMismatch: true
        default: false
        }
    }
}

/// What the watch knows about git's work on the tree between rounds.
private struct GitWatch {
    /// The manifest's stamp as this watch's last round left it: another one
    /// was written by someone else (git).
    var ownStamp: FileStamp?
    /// Whether a round was refused because git changed the tree meanwhile.
    var resync: Bool
    /// Since when the watch waits for git.
    var waitingSince: Duration?
    /// What git is doing, once said while the watch waits.
    var said: String?
}
