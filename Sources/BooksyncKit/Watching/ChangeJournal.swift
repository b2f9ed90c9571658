/// What changed in the watched folders since a token, as far as a watcher
/// can vouch for it: the question git's fsmonitor protocol asks ("what
/// changed since token T?"), whose answer is either a list of paths or "I
/// cannot say, scan everything".
///
/// The answer is never wrong, only sometimes unhelpful. When the watcher
/// lost events (the kernel's queue overflowed, a watched folder was replaced,
/// the watch limit was reached, the watcher restarted) every token from
/// before that moment gets `cannotVouch`, and the caller falls back to the
/// full scan. A path may be reported that did not change in the end (written
/// back as it was); a change is never left out.
///
/// Memory is one entry per distinct path changed, not per event.
package struct ChangeJournal: Sendable {
    /// A point in the journal's history: a command keeps the token of its
    /// last scan and asks for what changed since.
    package struct Token: Hashable, Sendable, CustomStringConvertible {
        /// Which run of the watcher made it: a token from another run is unknown.
        package let instance: UInt64
        /// How many changes had been recorded when it was made.
        package let sequence: UInt64

        package init(instance: UInt64, sequence: UInt64) {
            self.instance = instance
            self.sequence = sequence
        }

        /// `instance:sequence`, as a command stores it with its stat cache.
        package var description: String { "\(instance):\(sequence)" }

        /// The token of `description`; nil for anything else.
        package init?(_ text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let instance = UInt64(parts[0]), let sequence = UInt64(parts[1]) else { return nil }
            self.init(instance: instance, sequence: sequence)
        }
    }

    /// Why the journal cannot say what changed since a token.
    package enum Reason: Equatable, Sendable, CustomStringConvertible {
        /// The kernel dropped events (`IN_Q_OVERFLOW`).
        case overflow
        /// A watched folder was deleted, moved or replaced: what is there now was never watched.
        case folderReplaced(String)
        /// A folder could not be watched (`max_user_watches` reached).
        case watchLimit(String)
        /// The token is from another run of the watcher, or from its future.
        case unknownToken
        /// More distinct paths changed than the journal keeps.
        case forgotten
        /// A folder that can hold records was added, moved or removed, so the folders were watched anew.
        case folderChanged(String)
        /// Nothing is watched now (the watcher could not start again).
        case notWatching
        /// A reason a watcher process gave, as it gave it (`WatcherMessages`).
        case told(String)
        /// The collection's path leads to another folder now (the folder, or
        /// one above it, was moved or replaced, or something was mounted over it).
        case rootMoved
        /// A file whose name is not UTF-8 changed: only a full scan reads such names.
        case undecodableName
        /// Something was mounted or unmounted: what is under a watched path may not be what was watched.
        case mountsChanged

        package var description: String {
            switch self {
            case .overflow: "the kernel's event queue overflowed, so events were lost"
            case .folderReplaced(let folder): "the watched folder '\(folder)' was replaced"
            case .watchLimit(let folder): "'\(folder)' could not be watched: the system's limit of watches is reached (fs.inotify.max_user_watches)"
            case .unknownToken: "the token is from another run of the watcher"
            case .forgotten: "more files changed than the watcher keeps track of"
            case .folderChanged(let folder): "the folder '\(folder)' was added, moved or removed"
            case .notWatching: "the watcher is not watching the folders now"
            case .told(let reason): reason
            case .rootMoved: "the collection's folder was moved or replaced, or something was mounted over it"
            case .undecodableName: "a file whose name is not UTF-8 changed"
            case .mountsChanged: "something was mounted or unmounted"
            }
        }
    }

    /// The answer to "what changed since this token?".
    package enum Answer: Equatable, Sendable {
        /// These paths may have changed, and nothing else did.
        case changed(Set<String>)
        /// Scan everything: events were lost since the token.
        case cannotVouch(Reason)
    }

    private let instance: UInt64
    private var sequence: UInt64 = 0
    /// Each path's last change.
    private var lastChange: [String: UInt64] = [:]
    /// The changes in the order they came, so "since T" reads only what
    /// came after T; an entry whose path changed again later is stale
    /// (`lastChange` holds a later sequence) and skipped.
    private var log: [(sequence: UInt64, path: String)] = []
    /// Answers are complete only for tokens at or after this sequence, and why.
    private var lostTrack: (after: UInt64, reason: Reason)?
    /// The most distinct paths kept; one more forgets them all (`forgotten`).
    private let maximumPaths: Int

    /// An empty journal for one run of a watcher; `instance` tells its
    /// tokens from another run's (a random number). It keeps up to
    /// `maximumPaths` distinct paths: memory grows with what changed, and
    /// a watcher running for weeks stops at that.
    package init(instance: UInt64, maximumPaths: Int = 100_000) {
        self.instance = instance
        self.maximumPaths = maximumPaths
    }

    /// The token for now: a scan made now asks with it next time.
    package var token: Token { Token(instance: instance, sequence: sequence) }

    /// Notes that `path` may have changed.
    package mutating func record(_ path: String) {
        sequence += 1
        if lastChange.updateValue(sequence, forKey: path) == nil, lastChange.count > maximumPaths {
            forgetAll(.forgotten)
            return
        }
        log.append((sequence, path))
        // Stale entries are dropped once they are half the log, so it stays
        // within twice the distinct paths.
        if log.count > 2 * max(lastChange.count, 1024) {
            log.removeAll { lastChange[$0.path] != $0.sequence }
        }
    }

    /// Notes that events were lost: no token from before now is vouched for.
    /// Paths recorded so far are forgotten, since every older token now scans anyway.
    package mutating func loseTrack(_ reason: Reason) {
        sequence += 1
        forgetAll(reason)
    }

    private mutating func forgetAll(_ reason: Reason) {
        lostTrack = (sequence, reason)
        lastChange = [:]
        log = []
    }

    /// What changed since `token`: the paths recorded after it, read from
    /// the end of the log, so an answer costs what changed since, not what
    /// the journal holds.
    package func changes(since token: Token) -> Answer {
        guard token.instance == instance, token.sequence <= sequence else { return .cannotVouch(.unknownToken) }
        if let lost = lostTrack, token.sequence < lost.after { return .cannotVouch(lost.reason) }
        var paths = Set<String>()
        for entry in log.reversed() {
            guard entry.sequence > token.sequence else { break }
            if lastChange[entry.path] == entry.sequence { paths.insert(entry.path) }
        }
        return .changed(paths)
    }
}
