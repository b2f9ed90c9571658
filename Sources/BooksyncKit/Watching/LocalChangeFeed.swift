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
/// next round look at every file. The watch itself (`FolderWatch`) may be
/// shared with the status server.
package final class InotifyChangeFeed: LocalChangeFeed {
    private let watch: FolderWatch
    private let subcollections: Subcollections
    private var token: ChangeJournal.Token?
    /// Without a watcher (the watch limit): when to look at everything and try again.
    private var retryAt = Duration.zero
    private let retryInterval: Duration
    /// What the first `take` reports: why watching could not start, if it could not.
    private var startProblem: String?
    /// Whether the fallback's reason was given: it is given once, not every `retryInterval`.
    private var toldFallback = false

    /// Takes what `watch` sees of the collection's folders. When watching
    /// cannot start (no inotify, the watch limit) the feed looks at
    /// everything every `retryInterval` and tries again; the first `take` says why.
    package init(watch: FolderWatch, subcollections: Subcollections, retryInterval: Duration = .seconds(5)) {
        self.watch = watch
        self.subcollections = subcollections
        self.retryInterval = retryInterval
        let reply = watch.ask(since: nil)
        token = reply.token
        startProblem = reply.problem
    }

    package func take(at now: Duration) -> LocalChanges? {
        if let problem = startProblem {
            startProblem = nil
            return fallBack(problem, at: now)
        }
        guard let token else {
            guard now >= retryAt else { return nil }
            let reply = watch.ask(since: nil)
            self.token = reply.token
            guard reply.token != nil else { return fallBack(reply.problem ?? "", at: now) }
            toldFallback = false
            return .everything("watching started again")
        }
        let reply = watch.ask(since: token)
        self.token = reply.token
        guard reply.token != nil else { return fallBack(reply.problem ?? "", at: now) }
        switch reply.answer {
        case .cannotVouch(let reason)?:
            return .everything(reason.description)
        case .changed(let paths)?:
            var ids = Set<RecordID>()
            for path in paths {
                if path.hasSuffix("/") {
                    let folder = String(path.dropLast())
                    guard watch.folderMatters(folder) else { continue }
                    return .everything(ChangeJournal.Reason.folderChanged(folder).description)
                }
                // Editors' temporary files and other names no record has are not records.
                if let id = try? RecordID.fromRelativePath(path, subcollections: subcollections) { ids.insert(id) }
            }
            return ids.isEmpty ? nil : .records(ids)
        case nil:
            return nil
        }
    }

    /// Every file is looked at now, and again every `retryInterval` until
    /// watching starts; `problem` is told the first time only.
    private func fallBack(_ problem: String, at now: Duration) -> LocalChanges {
        retryAt = now + retryInterval
        defer { toldFallback = true }
        let told = "\(problem); every file is looked at every \(retryInterval.components.seconds) s instead"
        return .everything(toldFallback ? nil : told)
    }
}
#endif
