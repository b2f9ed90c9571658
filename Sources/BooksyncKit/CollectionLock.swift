#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One writing command at a time per collection directory.
///
/// The lock is a file created with O_EXCL that names the holder's pid. A lock
/// whose pid is no longer alive (a killed booksync) is taken over, and the
/// caller is told so it can print a notice.
public final class CollectionLock: Sendable {
    public let path: String

    private init(path: String) {
        self.path = path
    }

    /// Takes the lock, or throws `lockHeld` naming the live holder.
    /// `onStaleLock` is called with the dead holder's pid when a stale lock is taken over.
    public static func acquire(at path: String, onStaleLock: (Int32) -> Void = { _ in }) throws(BooksyncError) -> CollectionLock {
        let me = Array("\(getpid())\n".utf8)
        for _ in 0..<3 {
            do {
                if try FileSystem.createExclusively(path, contents: me) { return CollectionLock(path: path) }
            } catch {
                throw .io(error)
            }
            let holder = (try? FileSystem.readFile(path)).flatMap { Int32(String(decoding: $0, as: UTF8.self).trimmingWhitespace) }
            if let holder, isAlive(holder) { throw .lockHeld(path: path, pid: holder) }
            // Dead holder or unreadable lock: take it over. Removing and retrying
            // through O_EXCL keeps two racing takeovers from both winning.
            onStaleLock(holder ?? 0)
            try? FileSystem.remove(path)
        }
        throw .lockHeld(path: path, pid: 0)
    }

    public func release() {
        try? FileSystem.remove(path)
    }

    static func isAlive(_ pid: Int32) -> Bool {
        guard pid > 0 else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }
}

extension String {
    /// The string without leading and trailing white space.
    public var trimmingWhitespace: String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}
