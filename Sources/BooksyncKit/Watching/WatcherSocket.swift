import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a watcher process listens for a collection, and how a command asks
/// it: a Unix socket in a folder only the user can reach.
///
/// Nothing of it is in the collection: a cloned repository can neither start
/// a watcher nor point a command at one. The folder is
/// `$XDG_RUNTIME_DIR/booksync` when that is set (systemd makes it private to
/// the user), else `/tmp/booksync-UID`; it is used only when it is a real
/// folder (not a link) owned by the user with no access for group or others,
/// as the lock refuses a lock file that is not the user's own. Both ends also
/// check that the process at the other end runs as the same user.
/// Each collection's socket is named after the SHA-256 of its root.
package struct WatcherSocket: Sendable, Equatable {
    /// The socket's path.
    package let path: String
    /// The collection root the socket serves, links resolved.
    package let root: String
    /// Where status keeps its last full scan for this watcher (`WatchedScan`).
    package var scanRecordPath: String { String(path.dropLast(".sock".count)) + ".scan" }
    /// The lock a serving watch holds for as long as it serves (one per collection).
    var lockPath: String { String(path.dropLast(".sock".count)) + ".lock" }

    /// Why no socket can be used; a sentence.
    package struct Problem: Error, Equatable, CustomStringConvertible {
        package let description: String
        /// The folder does not exist: no watch ever ran (nothing to tell a command's user).
        package var missingFolder = false
    }

    /// The variable that overrides the folder (tests, or a user who keeps it elsewhere).
    package static let folderVariable = "BOOKSYNC_WATCH_DIR"

    /// The socket of the collection at `root`, its folder checked (and
    /// created if `create`: a watcher creates it, a command only looks).
    /// - Throws: `Problem` when the folder is missing or not private to the user.
    package static func forCollection(root: String, environment: [String: String], create: Bool) throws(Problem) -> WatcherSocket {
        let folder = try privateFolder(environment: environment, create: create)
        let real = FileSystem.realPath(root) ?? root
        let name = Hex.string(Array(SHA256.hash(Array(real.utf8)).prefix(16)), .lower)
        let path = folder + "/" + name + ".sock"
        // sockaddr_un holds 104 bytes on macOS, 108 on Linux.
        guard path.utf8.count < 104 else { throw Problem(description: "the watcher's socket path '\(path)' is too long") }
        return WatcherSocket(path: path, root: real)
    }

    /// The folder for sockets, created private if missing.
    static func privateFolder(environment: [String: String], create: Bool) throws(Problem) -> String {
        let user = geteuid()
        let folder: String
        if let chosen = environment[folderVariable], !chosen.isEmpty {
            guard chosen.hasPrefix("/") else { throw Problem(description: "\(folderVariable) must be an absolute path, not '\(chosen)'") }
            folder = chosen
        } else if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"), isPrivate(runtime, user: user) == nil {
            folder = runtime + "/booksync"
        } else {
            folder = "/tmp/booksync-\(user)"
        }
        if create, mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw Problem(description: "cannot create the watcher's folder '\(folder)': \(String(cString: strerror(errno)))")
        }
        if !create, !FileSystem.exists(folder) {
            throw Problem(description: "the watcher's folder '\(folder)' does not exist (no watch has run)", missingFolder: true)
        }
        if let problem = isPrivate(folder, user: user) { throw Problem(description: problem) }
        return folder
    }

    /// Nil when `folder` is a real folder of `user` that nobody else can
    /// enter; else why not.
    private static func isPrivate(_ folder: String, user: uid_t) -> String? {
        var s = CStat()
        guard lstat(folder, &s) == 0 else { return "cannot check the watcher's folder '\(folder)': \(String(cString: strerror(errno)))" }
        guard (s.st_mode & S_IFMT) == S_IFDIR else { return "the watcher's folder '\(folder)' is not a folder (a link?)" }
        guard s.st_uid == user else { return "the watcher's folder '\(folder)' belongs to user \(s.st_uid), not to you" }
        guard s.st_mode & 0o077 == 0 else {
            return "the watcher's folder '\(folder)' can be entered by others (mode \(String(s.st_mode & 0o777, radix: 8))); run 'chmod 700 \(folder)'"
        }
        return nil
    }

    /// How long a command waits for the watcher's whole answer, connecting
    /// included; past it, status scans everything, as without a watcher.
    package static let answerWait = Duration.seconds(2)

    /// Asks the watcher what changed since `token` (nil: only the token for
    /// now). Nil when no watcher has answered in full within `answerWait`
    /// (however it trickles its answer in), when the one that answers runs
    /// as another user, or when its answer is not about this collection: the
    /// caller then scans everything.
    /// `wait` is `answerWait` for a command; tests that must get an answer
    /// on a machine busy with other tests wait longer.
    package func ask(since token: ChangeJournal.Token?, layout: String, wait: Duration = answerWait) -> WatcherReply? {
        let deadline = ContinuousClock.now + wait
        let fd = Self.newSocket()
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // Bounds `connect`, which waits while the watcher's backlog is full.
        Self.setTimeouts(fd, milliseconds: Int32(wait.components.seconds * 1000))
        guard Self.withAddress(path, { connect(fd, $0, $1) }) == 0, Self.peerIsSelf(fd) else { return nil }
        let question = WatcherMessages.question(root: root, layout: layout, since: token)
        guard SocketExchange.sendAll(question, to: fd, deadline: deadline), shutdown(fd, Int32(SHUT_WR)) == 0,
              let bytes = SocketExchange.readAll(fd, limit: WatcherMessages.maximumAnswerBytes, deadline: deadline)
        else { return nil }
        return WatcherMessages.parseAnswer(bytes, root: root)
    }

    static func newSocket() -> Int32 {
        #if canImport(Glibc)
        socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
    }

    static func setTimeouts(_ fd: Int32, milliseconds: Int32) {
        var time = timeval(tv_sec: Int(milliseconds / 1000), tv_usec: .init((milliseconds % 1000) * 1000))
        let size = socklen_t(MemoryLayout<timeval>.size)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, size)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, size)
    }

    /// Calls `body` with `path` as a `sockaddr_un`.
    static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return -1 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Whether the process at the other end of `fd` runs as this user.
    static func peerIsSelf(_ fd: Int32) -> Bool {
        #if canImport(Glibc)
        // struct ucred: pid, uid, gid (Swift's Glibc leaves it out: it needs _GNU_SOURCE).
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var size = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 else { return false }
        return credentials.1 == geteuid()
        #else
        var user: uid_t = 0
        var group: gid_t = 0
        guard getpeereid(fd, &user, &group) == 0 else { return false }
        return user == geteuid()
        #endif
    }
}
