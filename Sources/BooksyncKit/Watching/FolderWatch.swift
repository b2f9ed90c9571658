#if os(Linux)
import BooksyncCore
import Synchronization

/// The collection's folders under inotify, shared by everyone who asks what
/// changed: a live sync's rounds (`InotifyChangeFeed`) and the status
/// server (`WatchServer`), each with a token of its own.
///
/// It keeps the watches whole: when events were lost or a folder that can
/// hold records was added, moved or removed, the folders are watched anew
/// (a new run of the journal, so every older token is answered
/// `cannotVouch` with that reason). A run is never asked to vouch for a
/// folder it does not watch.
package final class FolderWatch: Sendable {
    private struct State: ~Copyable {
        var watcher: InotifyWatcher?
        var run: UInt64
        /// The last token checked for lost events and new folders.
        var checked: ChangeJournal.Token?
        /// Why earlier runs ended, for their tokens' answers (the last few).
        var ended: [UInt64: ChangeJournal.Reason] = [:]
        var problem: String?
    }

    /// The collection directory, links resolved.
    package let root: String
    private let subcollections: Subcollections
    private let state: Mutex<State>

    /// Watches `root` and its subcollection folders (`WatchedFolders`); when
    /// that cannot start, `ask` says why and tries again.
    package init(root: String, subcollections: Subcollections) {
        // The user's own path to the collection may run through a link (the
        // watch refuses links inside the collection, not on the way to it).
        self.root = FileSystem.realPath(root) ?? root
        self.subcollections = subcollections
        // Runs are numbered from a random start, so a token saved by an
        // earlier watcher process is not taken for one of this process.
        state = Mutex(State(run: UInt64.random(in: 1...(UInt64.max >> 16)) << 8))
        state.withLock { _ = Self.rewatch(&$0, root: self.root, subcollections: subcollections) }
    }

    /// Whether a change to the folder `path` can change what a scan finds (`WatchedFolders.folderMatters`).
    package func folderMatters(_ path: String) -> Bool {
        WatchedFolders.folderMatters(path, subcollections: subcollections)
    }

    /// Reads what the kernel has queued, and answers what changed since
    /// `token` (nil: only the token for now is wanted). Folders are watched
    /// anew first when they must be (see the type's comment).
    package func ask(since token: ChangeJournal.Token?) -> WatcherReply {
        state.withLock { state -> WatcherReply in
            if state.watcher == nil, !Self.rewatch(&state, root: root, subcollections: subcollections) {
                return WatcherReply(answer: token.map { _ in .cannotVouch(.notWatching) }, token: nil, problem: state.problem)
            }
            keepWhole(&state)
            let answer = token.map { token -> ChangeJournal.Answer in
                if let reason = state.ended[token.instance] { return .cannotVouch(reason) }
                return state.watcher?.journal.changes(since: token) ?? .cannotVouch(.notWatching)
            }
            return WatcherReply(answer: answer, token: state.watcher?.journal.token, problem: state.problem)
        }
    }

    /// Reads what the kernel has queued, so its queue does not overflow
    /// while nobody asks.
    package func drain() {
        state.withLock { state in keepWhole(&state) }
    }

    /// Drains the watcher, and watches anew when events were lost or a
    /// folder that matters changed since the last check.
    private func keepWhole(_ state: inout State) {
        guard let watcher = state.watcher else { return }
        watcher.drain()
        let since = state.checked ?? watcher.journal.token
        var reason: ChangeJournal.Reason?
        switch watcher.journal.changes(since: since) {
        case .cannotVouch(let lost):
            reason = lost
        case .changed(let paths):
            if let folder = paths.first(where: { $0.hasSuffix("/") && folderMatters(String($0.dropLast())) }) {
                reason = .folderChanged(String(folder.dropLast()))
            }
        }
        state.checked = watcher.journal.token
        if let reason {
            state.ended[watcher.journal.token.instance] = reason
            if state.ended.count > 8, let oldest = state.ended.keys.min() { state.ended[oldest] = nil }
            Self.rewatch(&state, root: root, subcollections: subcollections)
        }
    }

    /// Watches the folders as they are now; false (and `problem` set) when it cannot.
    @discardableResult
    private static func rewatch(_ state: inout State, root: String, subcollections: Subcollections) -> Bool {
        state.watcher = nil
        state.run += 1
        do {
            let fresh = try InotifyWatcher(root: root, folders: WatchedFolders.list(root: root, subcollections: subcollections),
                                           instance: state.run)
            state.watcher = fresh
            state.checked = fresh.journal.token
            state.problem = nil
            return true
        } catch {
            state.problem = error.description
            return false
        }
    }
}
#endif
