#if os(Linux)
import Glibc

/// Linux's inotify behind the watcher seam: one watch per folder, events
/// read without blocking and recorded in a `ChangeJournal`.
///
/// Links are never followed (`IN_DONT_FOLLOW`): a watched folder that is a
/// link is refused, as the scan refuses it. What inotify cannot see is not
/// guessed at: a lost event queue (`IN_Q_OVERFLOW`), a watched folder deleted,
/// moved or replaced, all make the journal unable to vouch for older tokens.
///
/// A folder created, moved or deleted inside a watched one is recorded with
/// a trailing `/` (`dune/`): its own files are not watched until the caller
/// watches it.
///
/// One owner at a time (not `Sendable`): the watch loop that drains it.
package final class InotifyWatcher {
    /// Why watching could not start; each case a sentence.
    package enum StartError: Error, Equatable, CustomStringConvertible {
        case cannotStart(errno: Int32)
        case cannotWatch(folder: String, errno: Int32)
        case watchLimit(folder: String)

        package var description: String {
            switch self {
            case .cannotStart(let code): "cannot start watching: \(String(cString: strerror(code)))"
            case .cannotWatch(let folder, let code): "cannot watch '\(folder)': \(String(cString: strerror(code)))"
            case .watchLimit(let folder): ChangeJournal.Reason.watchLimit(folder).description
            }
        }
    }

    /// What the watcher has seen so far.
    package private(set) var journal: ChangeJournal
    private let descriptor: Int32
    private let root: String
    /// Watch descriptor → the folder, relative to `root` ("" for root itself).
    private var folders: [Int32: String] = [:]
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// The events that change what a scan would find, of a file or of the folder itself.
    private static let mask = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE
                                     | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW | IN_ONLYDIR | IN_EXCL_UNLINK)

    /// Watches `folders` (relative to `root`; "" is root itself).
    ///
    /// Each folder is opened from `root` one name at a time with
    /// `O_NOFOLLOW | O_DIRECTORY` and watched through `/proc/self/fd`, so a
    /// folder swapped for a link between listing and watching (a checkout
    /// while the watch runs) is refused, wherever on the way the link is;
    /// without `/proc`, the path is watched with `IN_DONT_FOLLOW`, which
    /// checks its last name only.
    /// - Throws: `StartError` when inotify or a folder cannot be watched;
    ///   the caller then scans everything, as without a watcher.
    package init(root: String, folders: [String], instance: UInt64) throws(StartError) {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw .cannotStart(errno: errno) }
        // Every stored property is set from here on: `deinit` closes the descriptor, also after a throw.
        self.descriptor = descriptor
        self.root = root
        self.journal = ChangeJournal(instance: instance)
        let procFolders = FileSystem.isDirectory("/proc/self/fd")
        for folder in folders {
            let watch: Int32
            if procFolders {
                let opened = FileSystem.openFolderWithoutLinks(root: root, folder)
                guard opened >= 0 else { throw .cannotWatch(folder: folder, errno: -opened) }
                watch = inotify_add_watch(descriptor, "/proc/self/fd/\(opened)", Self.mask & ~UInt32(IN_DONT_FOLLOW))
                let code = errno
                close(opened)
                errno = code
            } else {
                watch = inotify_add_watch(descriptor, folder.isEmpty ? root : root + "/" + folder, Self.mask)
            }
            guard watch >= 0 else {
                let code = errno
                throw code == ENOSPC ? .watchLimit(folder: folder) : .cannotWatch(folder: folder, errno: code)
            }
            self.folders[watch] = folder
        }
    }

    deinit {
        close(descriptor)
    }

    /// Reads every event queued now into the journal.
    /// - Returns: How many events were read.
    @discardableResult
    package func drain() -> Int {
        var events = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                while offset + 16 <= count {
                    let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = bytes[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                    if let name = String(validating: nameBytes, as: UTF8.self) {
                        record(watch: watch, mask: mask, name: name)
                    } else {
                        // A path the journal cannot spell: whoever asks scans everything.
                        journal.loseTrack(.undecodableName)
                    }
                    offset += 16 + length
                    events += 1
                }
            }
        }
        return events
    }

    private func record(watch: Int32, mask: UInt32, name: String) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            journal.loseTrack(.overflow)
            return
        }
        guard let folder = folders[watch] else { return }  // a watch already gone
        if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT) != 0 {
            folders[watch] = nil
            journal.loseTrack(.folderReplaced(folder))
            return
        }
        guard !name.isEmpty else { return }
        // A folder's own events end in "/", so a live sync tells a new
        // subcollection folder (which needs a watch of its own) from a file.
        let path = (folder.isEmpty ? name : folder + "/" + name) + (mask & UInt32(IN_ISDIR) != 0 ? "/" : "")
        journal.record(path)
    }
}
#endif
