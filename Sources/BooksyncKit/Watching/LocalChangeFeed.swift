import BooksyncCore

/// What a live sync learned from the file system since it last asked.
package enum LocalChanges: Equatable, Sendable {
    /// These records' files may have changed; nothing else did.
    case records(Set<RecordID>)
    /// Every file must be looked at, for this reason (a sentence); nil when
    /// the reason was already given (a fallback that looks at every file
    /// every few seconds says why once).
    case everything(String?)
}

/// The seam between a live sync and the file system's change notifications:
/// inotify on Linux (`InotifyChangeFeed`), a periodic look at every file
/// where there is no watcher (`RescanChangeFeed`).
package protocol LocalChangeFeed: AnyObject {
    /// What changed since the last call, without blocking; nil for nothing.
    /// - Parameter now: The time since the live sync started.
    func take(at now: Duration) -> LocalChanges?
}

/// Where no watcher runs: every file is looked at every `interval` (the scan
/// stats each file against the stat cache, so an unchanged collection costs
/// a directory listing and a stat per file, and no remote request).
package final class RescanChangeFeed: LocalChangeFeed {
    private let interval: Duration
    private let reason: String
    private var next: Duration
    private var told = false

    /// A feed that asks for a full look every `interval`, saying `reason`
    /// (why there is no watcher) the first time.
    package init(interval: Duration, reason: String) {
        self.interval = interval
        self.reason = reason
        next = interval
    }

    package func take(at now: Duration) -> LocalChanges? {
        guard now >= next else { return nil }
        defer { told = true }
        next = now + interval
        return .everything(told ? nil : reason)
    }
}

#if os(Linux)
/// inotify behind the seam: the records whose files the kernel saw change,
/// mapped from paths to ids; a lost event, a folder added, moved or removed
/// (its files were not watched), or a watcher that cannot start makes the
/// next round look at every file, and the folders are watched anew.
package final class InotifyChangeFeed: LocalChangeFeed {
    private let root: String
    private let subcollections: Subcollections
    private var watcher: InotifyWatcher?
    private var token: ChangeJournal.Token
    private var instance: UInt64 = 0
    /// Without a watcher (the watch limit): when to look at everything and try again.
    private var retryAt = Duration.zero
    private let retryInterval: Duration
    /// What the first `take` reports: why watching could not start, if it could not.
    private var startProblem: String?
    /// Whether the fallback's reason was given: it is given once, not every `retryInterval`.
    private var toldFallback = false

    /// Watches `root` and its subcollection folders. When watching cannot
    /// start (no inotify, the watch limit) the feed looks at everything
    /// every `retryInterval` and tries again; the first `take` says why.
    package init(root: String, subcollections: Subcollections, retryInterval: Duration = .seconds(5)) {
        // The user's own path to the collection may run through a link (the
        // watch refuses links inside the collection, not on the way to it).
        self.root = FileSystem.realPath(root) ?? root
        self.subcollections = subcollections
        self.retryInterval = retryInterval
        token = ChangeJournal.Token(instance: 0, sequence: 0)
        startProblem = rewatch()
    }

    package func take(at now: Duration) -> LocalChanges? {
        if let problem = startProblem {
            startProblem = nil
            return fallBack(problem, at: now)
        }
        guard let watcher else {
            guard now >= retryAt else { return nil }
            if let problem = rewatch() { return fallBack(problem, at: now) }
            toldFallback = false
            return .everything("watching started again")
        }
        watcher.drain()
        let answer = watcher.journal.changes(since: token)
        token = watcher.journal.token
        // Only the next answer matters: what is older is forgotten, so a long
        // watch's memory is the paths changed since the last round.
        watcher.forgetChanges(through: token)
        switch answer {
        case .cannotVouch(let reason):
            if let problem = rewatch() { return fallBack("\(reason); \(problem)", at: now) }
            return .everything(reason.description)
        case .changed(let paths):
            var ids = Set<RecordID>()
            for path in paths {
                if path.hasSuffix("/") {
                    // A folder of the collection's own, or one no record can be in.
                    guard !subcollections.isEmpty, !path.hasPrefix(".") else { continue }
                    if let problem = rewatch() { return fallBack("the folder '\(path.dropLast())' changed; \(problem)", at: now) }
                    return .everything("the folder '\(path.dropLast())' was added, moved or removed")
                }
                // Editors' temporary files and other names no record has are not records.
                if let id = try? RecordID.fromRelativePath(path, subcollections: subcollections) { ids.insert(id) }
            }
            return ids.isEmpty ? nil : .records(ids)
        }
    }

    /// Every file is looked at now, and again every `retryInterval` until
    /// watching starts; `problem` is told the first time only.
    private func fallBack(_ problem: String, at now: Duration) -> LocalChanges {
        retryAt = now + retryInterval
        defer { toldFallback = true }
        return .everything(toldFallback ? nil : problem)
    }

    /// Watches the folders as they are now; returns why it could not.
    private func rewatch() -> String? {
        watcher = nil
        instance += 1
        do {
            let fresh = try InotifyWatcher(root: root, folders: WatchedFolders.list(root: root, subcollections: subcollections),
                                           instance: instance)
            watcher = fresh
            token = fresh.journal.token
            return nil
        } catch {
            return "\(error.description); every file is looked at every \(retryInterval.components.seconds) s instead"
        }
    }
}
#endif
