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
package final class CollectionLock: Sendable {
    /// The lock file, `.booksync/lock`.
    package let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Takes the lock, or throws `lockHeld` naming the live holder. Never
    /// waits for a holder that names itself; a lock held by no named process
    /// is tried again for `releasedLockPatience`. Call `release()` once when
    /// the command is done. This one sleeps between tries: for synchronous
    /// callers; async code calls the async overload, which frees its thread.
    /// - Parameters:
    ///   - path: The lock file, normally `CollectionPaths.lock`; created if missing.
    ///   - onStaleLock: Called with the PID of a holder that died without
    ///     releasing the lock (the lock is taken all the same).
    /// - Throws: `BooksyncError.lockHeld` (no PID when the file names no
    ///   positive one), or `.io` when the
    ///   file cannot be opened, is a link, is hard-linked or is not a regular file.
    package static func acquire(at path: String, onStaleLock: (Int32) -> Void = { _ in }) throws(BooksyncError) -> CollectionLock {
        let attempt = try Attempt(path: path, patience: releasedLockPatience)
        while try !attempt.take() { usleep(retryMicroseconds) }
        return attempt.locked(onStaleLock: onStaleLock)
    }

    /// The same as the synchronous `acquire`, but waits with `Task.sleep`:
    /// up to `releasedLockPatience` of waiting must not hold one of the few
    /// threads Swift concurrency runs every task on (an app's `RecordStore`
    /// calls, many at once).
    /// - Throws: as the synchronous one, and `.interrupted` when the task is
    ///   cancelled while it waits.
    package static func acquire(at path: String, onStaleLock: (Int32) -> Void = { _ in }) async throws(BooksyncError) -> CollectionLock {
        try await acquire(at: path, patience: releasedLockPatience, onStaleLock: onStaleLock)
    }

    /// The async `acquire` with its patience given; `onWait` is called once
    /// when it first has to wait (tests use both).
    static func acquire(at path: String, patience: Duration, onStaleLock: (Int32) -> Void = { _ in },
                        onWait: () -> Void = {}) async throws(BooksyncError) -> CollectionLock {
        let attempt = try Attempt(path: path, patience: patience)
        var waited = false
        while try !attempt.take() {
            if !waited { onWait() }
            waited = true
            do {
                try await Task.sleep(for: .microseconds(retryMicroseconds))
            } catch {
                attempt.abandon()
                throw .interrupted
            }
        }
        return attempt.locked(onStaleLock: onStaleLock)
    }

    /// The pause between two tries of a held lock.
    static let retryMicroseconds: UInt32 = 10_000

    /// How long a lock held without a PID is tried again before it is
    /// reported held: a released lock's descriptor copied into a forked child
    /// lasts until that child execs.
    static let releasedLockPatience = Duration.seconds(2)

    /// Empties the file (a clean release) and drops the lock.
    package func release() {
        _ = ftruncate(descriptor, 0)
        close(descriptor)
    }

    /// One acquisition under way: the open lock file and the tries so far.
    /// It never sleeps itself, so that each `acquire` waits in its own way.
    private struct Attempt {
        let path: String
        let fd: Int32
        let deadline: ContinuousClock.Instant

        init(path: String, patience: Duration) throws(BooksyncError) {
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
            self.path = path
            self.fd = fd
            deadline = .now + patience
        }

        /// Tries the flock once: true when taken, false to try again after
        /// a pause; throws `lockHeld` (and closes the file) when refused.
        func take() throws(BooksyncError) -> Bool {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
            // The holder writes its PID just after taking the flock: an empty
            // file is read again at the next try, and a holder still unnamed
            // when patience runs out is reported unknown, never as PID 0.
            let holder = CollectionLock.readPID(fd)
            // Held, yet naming no live process: a lock just released (emptied),
            // or left by a killed holder, whose descriptor lives on in a child
            // that another thread of its process forked and that has not
            // reached exec yet. That copy goes within moments; a live holder
            // names itself at once and is refused at once.
            let namesLiveProcess = holder.map { kill($0, 0) == 0 || errno == EPERM } ?? false
            guard !namesLiveProcess, ContinuousClock.now < deadline else {
                close(fd)
                throw .lockHeld(path: path, pid: holder)
            }
            return false
        }

        /// Gives up (a cancelled wait): closes the file.
        func abandon() {
            close(fd)
        }

        /// The lock, once `take` took it: names this process in the file.
        func locked(onStaleLock: (Int32) -> Void) -> CollectionLock {
            if let previous = CollectionLock.readPID(fd), previous > 0, previous != getpid() {
                // Released locks are emptied, so a PID here means its holder was killed
                // (a "0" or "-7" someone wrote names no process, so no notice for it).
                onStaleLock(previous)
            }
            let me = Array("\(getpid())\n".utf8)
            _ = ftruncate(fd, 0)
            _ = me.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
            return CollectionLock(path: path, descriptor: fd)
        }
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
