#if os(Linux)
import BooksyncCore
import Synchronization
import Glibc

/// The collection's folders under inotify, shared by everyone who asks what
/// changed: a live sync's rounds (`InotifyChangeFeed`) and the status
/// server (`WatchServer`), each with a token of its own.
///
/// It keeps the watches whole: when events were lost or a folder that can
/// hold records was added, moved or removed, the folders are watched anew
/// (a new run of the journal, so every older token is answered
/// `cannotVouch` with that reason). A run is never asked to vouch for a
/// folder it does not watch, nor for a collection path that leads to
/// another folder than the one it watches.
package final class FolderWatch: Sendable {
    private struct State: ~Copyable {
        var watcher: InotifyWatcher?
        /// The device and inode of the folder the root's path led to when it was watched.
        var rootIdentity: FileIdentity?
        /// `/proc/self/mountinfo`, read to its end when the folders were
        /// watched: `poll` reports `POLLPRI` once anything is mounted or
        /// unmounted (a mount over a watched folder or file hides what was
        /// watched, and raises no event).
        var mounts: Int32 = -1
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
    /// The subcollections watched, as a question names them (`WatcherMessages.layout`).
    package var layout: String { WatcherMessages.layout(subcollections) }
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

    deinit {
        state.withLock { state in
            if state.mounts >= 0 { close(state.mounts) }
        }
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
        // inotify follows the folder, not the path: a folder moved away (or
        // one above it), or one mounted over, is not the collection any more.
        if FileIdentity(path: root) != state.rootIdentity {
            end(&state, run: watcher.journal.token.instance, reason: .rootMoved)
            return
        }
        if state.mounts >= 0 {
            var event = pollfd(fd: state.mounts, events: Int16(POLLPRI), revents: 0)
            if poll(&event, 1, 0) > 0, event.revents & Int16(POLLPRI | POLLERR) != 0 {
                end(&state, run: watcher.journal.token.instance, reason: .mountsChanged)
                return
            }
        }
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
        if let reason { end(&state, run: watcher.journal.token.instance, reason: reason) }
    }

    /// Ends `run` (its tokens are answered `reason` from now on) and watches anew.
    private func end(_ state: inout State, run: UInt64, reason: ChangeJournal.Reason) {
        state.ended[run] = reason
        if state.ended.count > 8, let oldest = state.ended.keys.min() { state.ended[oldest] = nil }
        Self.rewatch(&state, root: root, subcollections: subcollections)
    }

    /// Watches the folders as they are now; false (and `problem` set) when it cannot.
    ///
    /// A folder made between listing its parent and watching the parent
    /// raises no event, so the folders are listed again once all are
    /// watched: a folder the second listing has and the first had not means
    /// watching again (a few times, then giving up for now).
    @discardableResult
    private static func rewatch(_ state: inout State, root: String, subcollections: Subcollections) -> Bool {
        state.watcher = nil
        if state.mounts >= 0 { close(state.mounts) }
        state.mounts = openMounts()
        for _ in 0..<5 {
            state.run += 1
            let identity = FileIdentity(path: root)
            let folders = WatchedFolders.list(root: root, subcollections: subcollections)
            // The root's file system, and that of any folder mounted below it.
            for folder in folders where folder.isEmpty || FileIdentity(path: root + "/" + folder)?.device != identity?.device {
                if let problem = unwatchableFileSystem(folder.isEmpty ? root : root + "/" + folder) {
                    state.problem = problem
                    return false
                }
            }
            do {
                let fresh = try InotifyWatcher(root: root, folders: folders, instance: state.run)
                guard WatchedFolders.list(root: root, subcollections: subcollections) == folders, FileIdentity(path: root) == identity else {
                    continue
                }
                state.watcher = fresh
                state.rootIdentity = identity
                state.checked = fresh.journal.token
                state.problem = nil
                return true
            } catch {
                state.problem = error.description
                return false
            }
        }
        state.problem = "the collection's folders kept changing while they were being watched"
        return false
    }

    /// `/proc/self/mountinfo` opened and read to its end (so only later
    /// changes raise `POLLPRI`); -1 without `/proc`.
    private static func openMounts() -> Int32 {
        let fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return -1 }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
        return fd
    }

    /// Why `folder` cannot be watched for changes: on a network or FUSE file
    /// system a change made by another machine (or process behind the file
    /// system) raises no inotify event, as git's fsmonitor also refuses them.
    private static func unwatchableFileSystem(_ folder: String) -> String? {
        guard let type = LibcShims.fileSystemType(folder) else { return nil }
        let kinds: [Int: String] = [0x6969: "NFS", 0x517B: "SMB", 0xFF53_4D42: "CIFS", 0xFE53_4D42: "SMB2", 0x6573_5546: "FUSE",
                                    0x0102_1997: "9P", 0x00C3_6400: "Ceph", 0x0BD0_0BD0: "Lustre", 0x7461_636F: "OCFS2"]
        guard let kind = kinds[Int(UInt32(truncatingIfNeeded: type))] else { return nil }
        return "'\(folder)' is on a \(kind) file system, where a change made elsewhere raises no event"
    }
}
#endif
