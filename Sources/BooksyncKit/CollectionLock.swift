#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One writing command at a time per collection directory.
///
/// The lock is an advisory `flock` on `.booksync/lock`, which holds the PID of
/// the holder. The kernel releases it when the process ends, however it ends,
/// so a lock left by a killed booksync is simply taken over (the PID still in
/// the file tells whose it was, for the notice). The file itself is never
/// removed: removing it would let two processes lock two different files.
public final class CollectionLock: Sendable {
    /// The lock file, `.booksync/lock`.
    public let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Takes the lock, or throws `lockHeld` naming the live holder. Never
    /// waits for a holder that names itself; a lock held by no named process
    /// is tried again for `releasedLockPatience`. Call `release()` once when
    /// the command is done.
    /// - Parameters:
    ///   - path: The lock file, normally `CollectionPaths.lock`; created if missing.
    ///   - onStaleLock: Called with the PID of a holder that died without
    ///     releasing the lock (the lock is taken all the same).
    /// - Throws: `BooksyncError.lockHeld` (no PID when the file names no
    ///   positive one), or `.io` when the
    ///   file cannot be opened, is a link, is hard-linked or is not a regular file.
    public static func acquire(at path: String, onStaleLock: (Int32) -> Void = { _ in }) throws(BooksyncError) -> CollectionLock {
        // Never through a link a cloned repository planted: O_NOFOLLOW, and only a regular file.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard fd >= 0 else {
            let code = errno
            throw .io(FileSystem.refusedKind(path, code: code, operation: "lock") ?? FileSystemError(path: path, operation: "open the lock file", code: code))
        }
        do {
            try FileSystem.requireOwnRegularFile(fd, path: path, operation: "lock")
        } catch {
            close(fd)
            throw .io(error)
        }
        let patience = ContinuousClock.now + releasedLockPatience
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let holder = holderPID(fd)
            // Held, yet naming no live process: a lock just released (emptied),
            // or left by a killed holder, whose descriptor lives on in a child
            // that another thread of its process forked and that has not
            // reached exec yet. That copy goes within moments; a live holder
            // names itself at once and is refused at once.
            let namesLiveProcess = holder.map { kill($0, 0) == 0 || errno == EPERM } ?? false
            guard !namesLiveProcess, ContinuousClock.now < patience else {
                close(fd)
                throw .lockHeld(path: path, pid: holder)
            }
            usleep(10_000)
        }
        if let previous = readPID(fd), previous > 0, previous != getpid() {
            // Released locks are emptied, so a PID here means its holder was killed
            // (a "0" or "-7" someone wrote names no process, so no notice for it).
            onStaleLock(previous)
        }
        let me = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = me.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return CollectionLock(path: path, descriptor: fd)
    }

    /// How long a lock held without a PID is tried again before it is
    /// reported held: a released lock's descriptor copied into a forked child
    /// lasts until that child execs.
    static let releasedLockPatience = Duration.seconds(2)

    /// Empties the file (a clean release) and drops the lock.
    public func release() {
        _ = ftruncate(descriptor, 0)
        close(descriptor)
    }

    /// The PID of the live holder. A holder writes it just after taking the
    /// flock, so an empty file is read again a few times (50 ms at most)
    /// before the holder is reported as unknown, never as PID 0.
    private static func holderPID(_ fd: Int32) -> Int32? {
        for attempt in 0..<6 {
            if let pid = readPID(fd) { return pid }
            if attempt < 5 { usleep(10_000) }
        }
        return nil
    }

    /// The positive PID in the first 32 bytes of the file, or nil (empty,
    /// junk, 0, negative, or longer than a PID: the file may be planted).
    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0, let pid = Int32(String(decoding: buffer[0..<n], as: UTF8.self).trimmingWhitespace), pid > 0 else { return nil }
        return pid
    }
}

extension String {
    /// The string without leading and trailing white space. `package`, not
    /// `public`: the CLI needs it, but an app importing BooksyncKit must not
    /// find a new member on every `String`.
    package var trimmingWhitespace: String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}
