import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes: atomic replaces through hidden temporaries, their clean-up after a
/// killed process, directories and removals; never through a link.
extension FileSystem {
    /// Replaces `path` atomically: readers see the old or the new content, never a mix.
    /// Whatever is at `path` must be a regular file: a symbolic link or other
    /// entry is refused, never replaced or written through.
    package static func writeAtomically(_ bytes: [UInt8], to path: String, durable: Bool = false) throws(FileSystemError) {
        let temporary = try writeTemporary(bytes, beside: path, durable: durable)
        if rename(temporary, path) != 0 {
            let code = errno
            unlink(temporary)
            throw FileSystemError(path: path, operation: "write", code: code)
        }
    }

    /// Writes `bytes` to a new temporary file in `path`'s directory, with the
    /// mode of the regular file at `path` (0644 for a new one, less the umask),
    /// and returns its path. Refuses when `path` is not a regular file.
    /// A new temporary name in `path`'s directory: short, hidden, and unique per
    /// process (the target's own name could be 255 bytes already, so it is not
    /// part of it), with the PID that `removeStaleTemporaries` checks.
    static func temporaryPath(beside path: String, marker: String = temporaryMarker) -> String {
        split(path).directory + "/" + marker + String(getpid()) + "-" + String(nextTemporaryNumber())
    }

    static func writeTemporary(_ bytes: [UInt8], beside path: String, durable: Bool = false,
                               marker: String = temporaryMarker) throws(FileSystemError) -> String {
        let (temporary, fd) = try createTemporary(beside: path, marker: marker)
        var failure = writeAll(bytes, to: fd)
        if failure == 0, durable, fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure != 0 {
            unlink(temporary)
            throw FileSystemError(path: path, operation: "write", code: failure)
        }
        return temporary
    }

    /// Creates a new temporary file beside `path` with `path`'s mode (see
    /// `writeTemporary`) and returns its path and write descriptor.
    static func createTemporary(beside path: String, marker: String = temporaryMarker) throws(FileSystemError) -> (String, Int32) {
        let temporary = temporaryPath(beside: path, marker: marker)
        // Keep the permissions of the file being replaced (a 0600 record stays
        // 0600), never set-id or sticky bits; a new file gets 0644.
        var existing = CStat()
        var mode: mode_t = 0o644
        if lstat(path, &existing) == 0 {
            let kind = FileKind(mode: existing.st_mode)
            guard kind == .regular else { throw .notRegular(path, kind, operation: "write") }
            mode = existing.st_mode & 0o777
        }
        // O_EXCL never opens an existing file, nor follows a link planted at the name.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "create a temporary file", code: errno) }
        if mode != 0o644 { fchmod(fd, mode) }
        return (temporary, fd)
    }

    /// Writes all of `bytes` to `fd`; the errno of a failure, or 0.
    /// Opens (creating it) a state file that booksync appends to, for
    /// reading and appending: never through a link, and refused unless it is
    /// a regular file with this one name. The caller closes the descriptor.
    static func openForAppending(_ path: String) throws(FileSystemError) -> Int32 {
        let fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard fd >= 0 else {
            let code = errno
            throw refusedKind(path, code: code, operation: "append to") ?? FileSystemError(path: path, operation: "open", code: code)
        }
        do {
            try requireOwnRegularFile(fd, path: path, operation: "append to")
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32 {
        bytes.withUnsafeBytes { writeAll($0, to: fd) }
    }

    /// Writes all of `bytes` to `fd`; the errno of a failure, or 0.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32 {
        var written = 0
        while written < bytes.count {
            let n = write(fd, bytes.baseAddress! + written, bytes.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            written += n
        }
        return 0
    }

    /// Removes temporary files that a killed booksync left in `directory`
    /// (`.booksync-tmp-PID-N` whose PID is no longer running). Returns how
    /// many were removed. Called while holding the collection lock.
    ///
    /// Files of a guarded replace (`swapMarker`) may hold what an editor saved,
    /// swapped out just before the process was killed: they are moved into
    /// `recoverInto`, never deleted. One whose bytes `isOwnWrite` recognises
    /// (what the killed pull was writing, by its journal) holds no one's
    /// save but booksync's own download, and is deleted like a temporary.
    @discardableResult
    package static func removeStaleTemporaries(in directory: String, recoverInto: String? = nil,
                                               isOwnWrite: ([UInt8]) -> Bool = { _ in false }) -> Int {
        // Listed in batches, keeping only the marked names: the top of a
        // collection holds every record file, and a million names held at once
        // were the peak of a whole push (the Benchmarks article).
        guard let lister = try? DirectoryLister(directory) else { return 0 }
        var names: [String] = []
        while true {
            let batch = lister.next(8192)
            if batch.isEmpty { break }
            names += batch.filter { $0.hasPrefix(temporaryMarker) || $0.hasPrefix(swapMarker) }
        }
        var removed = 0
        for name in names {
            let marker = name.hasPrefix(temporaryMarker) ? temporaryMarker : (name.hasPrefix(swapMarker) ? swapMarker : nil)
            guard let marker else { continue }
            let rest = name.dropFirst(marker.count)
            guard let pid = Int32(rest.prefix { $0 != "-" }) else { continue }
            if pid == getpid() || (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)) { continue }
            if marker == swapMarker, let recoverInto, !((try? readFile(directory + "/" + name)).map(isOwnWrite) ?? false) {
                if (try? createDirectory(recoverInto)) != nil, rename(directory + "/" + name, recoverInto + "/" + name) == 0 { removed += 1 }
            } else if unlink(directory + "/" + name) == 0 {
                removed += 1
            }
        }
        return removed
    }

    /// Temporary files of a guarded replace (see `replace(_:with:ifCurrent:)`).
    package static let swapMarker = ".booksync-swap-"

    /// Creates a directory unless one is there. A link or file in its place is
    /// refused: state directories are never created or used through a link.
    package static func createDirectory(_ path: String) throws(FileSystemError) {
        if mkdir(path, 0o755) != 0 {
            let code = errno
            guard code == EEXIST else { throw FileSystemError(path: path, operation: "create directory", code: code) }
            let kind = try stat(path).kind
            if kind != .directory { throw .notRegular(path, kind, operation: "create directory") }
        }
    }

    /// Creates a directory and its missing parents, as `mkdir -p` does (a
    /// folder the user names for `clone`, never one inside a collection).
    package static func createDirectories(_ path: String) throws(FileSystemError) {
        let parent = split(path).directory
        if parent != path, parent != ".", !exists(parent) { try createDirectories(parent) }
        try createDirectory(path)
    }

    /// Throws the refusal when `path` exists and is not a real directory (a link to one included).
    package static func requireDirectoryOrAbsent(_ path: String) throws(FileSystemError) {
        var s = CStat()
        guard lstat(path, &s) == 0 else {
            if errno == ENOENT { return }
            throw FileSystemError(path: path, operation: "read file status", code: errno)
        }
        let kind = FileKind(mode: s.st_mode)
        if kind != .directory { throw .notRegular(path, kind, operation: "use directory") }
    }

    /// Unlinks the file (or link) at `path`; one already gone is not an error.
    /// Directories are not removed.
    /// - Throws: `FileSystemError` for any failure but absence.
    package static func remove(_ path: String) throws(FileSystemError) {
        if unlink(path) != 0, errno != ENOENT {
            throw FileSystemError(path: path, operation: "remove", code: errno)
        }
    }
}
