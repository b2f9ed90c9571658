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
        /// The changes since the token were forgotten (`forget(through:)`).
        case forgotten

        package var description: String {
            switch self {
            case .overflow: "the kernel's event queue overflowed, so events were lost"
            case .folderReplaced(let folder): "the watched folder '\(folder)' was replaced"
            case .watchLimit(let folder): "'\(folder)' could not be watched: the system's limit of watches is reached (fs.inotify.max_user_watches)"
            case .unknownToken: "the token is from another run of the watcher"
            case .forgotten: "the watcher no longer keeps the changes from that far back"
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
    /// Answers are complete only for tokens at or after this sequence, and why.
    private var lostTrack: (after: UInt64, reason: Reason)?

    /// An empty journal for one run of a watcher; `instance` tells its
    /// tokens from another run's (a random number, or the process id and start time).
    package init(instance: UInt64) {
        self.instance = instance
    }

    /// The token for now: a scan made now asks with it next time.
    package var token: Token { Token(instance: instance, sequence: sequence) }

    /// Notes that `path` may have changed.
    package mutating func record(_ path: String) {
        sequence += 1
        lastChange[path] = sequence
    }

    /// Notes that events were lost: no token from before now is vouched for.
    /// Paths recorded so far are forgotten, since every older token now scans anyway.
    package mutating func loseTrack(_ reason: Reason) {
        sequence += 1
        lostTrack = (sequence, reason)
        lastChange = [:]
    }

    /// Forgets the changes up to `token`: a caller that only ever asks
    /// about its latest token keeps the journal as small as one round's changes.
    /// Older tokens are then not vouched for (`forgotten`).
    package mutating func forget(through token: Token) {
        guard token.instance == instance, token.sequence <= sequence else { return }
        lastChange = lastChange.filter { $0.value > token.sequence }
        if (lostTrack?.after ?? 0) < token.sequence { lostTrack = (token.sequence, .forgotten) }
    }

    /// What changed since `token`.
    package func changes(since token: Token) -> Answer {
        guard token.instance == instance, token.sequence <= sequence else { return .cannotVouch(.unknownToken) }
        if let lost = lostTrack, token.sequence < lost.after { return .cannotVouch(lost.reason) }
        return .changed(Set(lastChange.compactMap { $0.value > token.sequence ? $0.key : nil }))
    }
}
