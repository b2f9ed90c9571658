import BooksyncCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An I/O failure with the path and the operation, phrased for users.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path the operation was on (a bare name for `stat(directory:name:)`).
    public let path: String
    /// What booksync tried, as a verb phrase after "cannot": "read", "remove", "list directory".
    public let operation: String
    /// The `errno` value (`EINVAL` for an `unsafeKind` refusal).
    public let code: Int32
    /// Set when the path is there but is not what booksync may touch (a link, a FIFO…).
    public let unsafeKind: FileKind?

    /// An error; `code` is an `errno` value, `operation` a verb phrase.
    public init(path: String, operation: String, code: Int32, unsafeKind: FileKind? = nil) {
        self.path = path
        self.operation = operation
        self.code = code
        self.unsafeKind = unsafeKind
    }

    /// `path` is a link, FIFO, device or directory where booksync expected a regular file.
    public static func notRegular(_ path: String, _ kind: FileKind, operation: String) -> FileSystemError {
        FileSystemError(path: path, operation: operation, code: EINVAL, unsafeKind: kind)
    }

    public var description: String {
        if let unsafeKind { return "\(path): " + (operation == Self.folderOperation ? Self.folderRefusal(unsafeKind) : Self.refusal(unsafeKind)) }
        return "\(path): cannot \(operation): \(String(cString: strerror(code)))"
    }

    /// The one sentence every command uses for an entry it will not touch.
    public static func refusal(_ kind: FileKind) -> String {
        switch kind {
        case .symbolicLink: "is a symbolic link; booksync never follows links inside a collection (replace it with a plain file)"
        case .directory: "is a directory where a file belongs; booksync leaves it alone"
        case .regular: "is a file where a directory belongs; booksync leaves it alone"
        case .hardLinked: "has other hard links, so writing it in place would change another file too; booksync leaves it alone (remove it, booksync makes a new one)"
        default: "is \(kind.noun); booksync only reads and writes regular files and leaves it alone"
        }
    }

    /// The problem as a diagnostic of the file it concerns (without repeating its path).
    public var diagnostic: RecordDiagnostic {
        RecordDiagnostic(message: unsafeKind.map(Self.refusal) ?? "cannot \(operation): \(String(cString: strerror(code)))")
    }

    /// The path (or a directory on the way) does not exist: `ENOENT` or
    /// `ENOTDIR`, never a refusal of an unsafe kind. Lets a caller take the
    /// path as absent instead of failing.
    public var isNotFound: Bool { unsafeKind == nil && (code == ENOENT || code == ENOTDIR) }
}

/// Thin POSIX file access. booksync calls the C library directly instead of
/// FileManager: it is several times faster per file on Linux, reports errno
/// precisely, and `FileManager.replaceItemAt` loses data on this toolchain.
///
/// Durability choice: record files are replaced atomically (write a temporary
/// file in the same directory, then `rename(2)`), so a killed booksync never
/// leaves a half-written record. Record files are not fsynced (3–4× slower);
/// state files that describe what happened remotely are (`durable: true`).
public enum FileSystem {
    /// Temporary files are named `.booksync-tmp-PID-N`, so stale ones left by a
    /// killed process can be recognised (hidden, so never taken for records) and removed.
    public static let temporaryMarker = ".booksync-tmp-"

    /// `lstat(2)` of `path`: a symbolic link is reported as one, never followed.
    /// - Throws: `FileSystemError` (`isNotFound` when nothing is there).
    public static func stat(_ path: String) throws(FileSystemError) -> FileStat {
        var s = CStat()
        guard lstat(path, &s) == 0 else { throw FileSystemError(path: path, operation: "read file status", code: errno) }
        return FileStat(s)
    }

    /// `lstat` of `name` inside an open directory: no path walk per file.
    public static func stat(directory: Int32, name: String) throws(FileSystemError) -> FileStat {
        var s = CStat()
        guard fstatat(directory, name, &s, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw FileSystemError(path: name, operation: "read file status", code: errno)
        }
        return FileStat(s)
    }

    /// `lstat` of a NUL-terminated name inside an open directory; nil on any error.
    static func stat(directory: Int32, cName: UnsafePointer<CChar>) -> FileStat? {
        var s = CStat()
        guard fstatat(directory, cName, &s, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return FileStat(s)
    }

    /// `fstat` of an open descriptor: the directory itself, even when its path is a symlink.
    public static func stat(descriptor: Int32) throws(FileSystemError) -> FileStat {
        var s = CStat()
        guard fstat(descriptor, &s) == 0 else { throw FileSystemError(path: "descriptor \(descriptor)", operation: "read file status", code: errno) }
        return FileStat(s)
    }

    /// The contents of a NUL-terminated name inside an open directory; nil on
    /// any error, and for anything but a regular file (never followed, never blocks).
    static func readFile(directory: Int32, cName: UnsafePointer<CChar>) -> [UInt8]? {
        let fd = openat(directory, cName, readFlags)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return try? readRegular(fd, path: "")
    }

    /// Flags for every read: a symlink is not followed (ELOOP), and a FIFO
    /// opens without waiting for a writer (and is then refused by its kind).
    static let readFlags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY

    /// All bytes of an open descriptor, which must be a regular file of at
    /// most `limit` bytes (larger: `EFBIG`, checked as it is read too, since
    /// the size a file system reports may be wrong).
    static func readRegular(_ fd: Int32, path: String, limit: Int = .max) throws(FileSystemError) -> [UInt8] {
        var s = CStat()
        guard fstat(fd, &s) == 0 else { throw FileSystemError(path: path, operation: "read file status", code: errno) }
        let kind = FileKind(mode: s.st_mode)
        guard kind == .regular else { throw .notRegular(path, kind, operation: "read") }
        guard Int(s.st_size) <= limit else { throw FileSystemError(path: path, operation: "read", code: EFBIG) }
        // Room for the stated size and a byte more (the end shows as a read of
        // nothing), not zero-filled: only bytes `read` wrote are kept. Zeroing
        // a fresh 4 KiB per record file was 8 % of the instructions of a status
        // that re-reads every file.
        var failure: Int32 = 0
        var atEnd = false
        var bytes = [UInt8](unsafeUninitializedCapacity: max(Int(s.st_size), 4095) + 1) { buffer, count in
            while count < buffer.count {
                let n = read(fd, buffer.baseAddress! + count, buffer.count - count)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if n == 0 {
                    atEnd = true
                    return
                }
                count += n
            }
        }
        if failure != 0 { throw FileSystemError(path: path, operation: "read", code: failure) }
        if bytes.count > limit { throw FileSystemError(path: path, operation: "read", code: EFBIG) }
        if atEnd { return bytes }
        // Larger than its stated size (it grew, or its file system does not know it): read on.
        var count = bytes.count
        while true {
            if count == bytes.count { bytes.append(contentsOf: [UInt8](repeating: 0, count: bytes.count)) }
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(path: path, operation: "read", code: errno)
            }
            if n == 0 { break }
            count += n
            if count > limit { throw FileSystemError(path: path, operation: "read", code: EFBIG) }
        }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// Opens a directory for `stat(directory:name:)`; close it with `closeDirectory`.
    public static func openDirectory(_ path: String) throws(FileSystemError) -> Int32 {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "open directory", code: errno) }
        return fd
    }

    /// Closes a descriptor from `openDirectory`; once per descriptor.
    public static func closeDirectory(_ fd: Int32) {
        close(fd)
    }

    /// Whether anything is at `path`, without following a link (a dangling
    /// symbolic link exists). Errors other than absence also give false.
    public static func exists(_ path: String) -> Bool {
        var s = CStat()
        return lstat(path, &s) == 0
    }

    /// Whether `path` is a directory, following a symbolic link (for paths the user chose).
    public static func isDirectory(_ path: String) -> Bool {
        var s = CStat()
        return fstatat(AT_FDCWD, path, &s, 0) == 0 && (s.st_mode & S_IFMT) == S_IFDIR
    }

    /// Names in a directory (without `.` and `..`), unsorted.
    public static func listDirectory(_ path: String) throws(FileSystemError) -> [String] {
        guard let dir = opendir(path) else { throw FileSystemError(path: path, operation: "list directory", code: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The contents of the regular file at `path`. A symbolic link (as the
    /// last component), FIFO, device or directory is refused, never read.
    public static func readFile(_ path: String) throws(FileSystemError) -> [UInt8] {
        let fd = open(path, readFlags)
        guard fd >= 0 else {
            let code = errno
            throw refusedKind(path, code: code, operation: "read") ?? FileSystemError(path: path, operation: "open", code: code)
        }
        defer { close(fd) }
        return try readRegular(fd, path: path)
    }

    /// The contents of a regular file the user named outside any collection
    /// (their own settings or credentials file), following a symbolic link:
    /// there a link is the user's own choice, while inside a collection it
    /// could be planted by a clone (`readFile`). Anything but a regular file
    /// is refused without blocking (a FIFO opens non-blocking), and a file
    /// over `limit` bytes fails with `EFBIG`.
    public static func readUserFile(_ path: String, limit: Int) throws(FileSystemError) -> [UInt8] {
        let fd = open(path, readFlags & ~O_NOFOLLOW)
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "open", code: errno) }
        defer { close(fd) }
        return try readRegular(fd, path: path, limit: limit)
    }

    /// Refuses an open state file that booksync writes in place unless it is a
    /// regular file with this one name.
    static func requireOwnRegularFile(_ fd: Int32, path: String, operation: String) throws(FileSystemError) {
        let stat = try stat(descriptor: fd)
        guard stat.isRegularFile else { throw .notRegular(path, stat.kind, operation: operation) }
        guard stat.linkCount == 1 else { throw .notRegular(path, .hardLinked, operation: operation) }
    }

    /// The refusal for a path that failed to open with O_NOFOLLOW because it is a
    /// link (ELOOP, or EMLINK/EFTYPE on some systems); nil for other failures.
    static func refusedKind(_ path: String, code: Int32, operation: String) -> FileSystemError? {
        guard code == ELOOP || code == EMLINK || code == ENXIO || code == EOPNOTSUPP || code == EISDIR,
              let kind = try? stat(path).kind, kind != .regular else { return nil }
        return .notRegular(path, kind, operation: operation)
    }

    /// Throws the refusal when something other than a regular file is at `path`.
    public static func requireRegularOrAbsent(_ path: String, operation: String) throws(FileSystemError) {
        var s = CStat()
        guard lstat(path, &s) == 0 else {
            if errno == ENOENT { return }
            throw FileSystemError(path: path, operation: "read file status", code: errno)
        }
        let kind = FileKind(mode: s.st_mode)
        if kind != .regular { throw .notRegular(path, kind, operation: operation) }
    }

    /// Replaces `path` atomically: readers see the old or the new content, never a mix.
    /// Whatever is at `path` must be a regular file: a symbolic link or other
    /// entry is refused, never replaced or written through.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, durable: Bool = false) throws(FileSystemError) {
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
    /// `recoverInto`, never deleted.
    @discardableResult
    public static func removeStaleTemporaries(in directory: String, recoverInto: String? = nil) -> Int {
        guard let names = try? listDirectory(directory) else { return 0 }
        var removed = 0
        for name in names {
            let marker = name.hasPrefix(temporaryMarker) ? temporaryMarker : (name.hasPrefix(swapMarker) ? swapMarker : nil)
            guard let marker else { continue }
            let rest = name.dropFirst(marker.count)
            guard let pid = Int32(rest.prefix { $0 != "-" }) else { continue }
            if pid == getpid() || (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)) { continue }
            if marker == swapMarker, let recoverInto {
                if (try? createDirectory(recoverInto)) != nil, rename(directory + "/" + name, recoverInto + "/" + name) == 0 { removed += 1 }
            } else if unlink(directory + "/" + name) == 0 {
                removed += 1
            }
        }
        return removed
    }

    /// Temporary files of a guarded replace (see `replace(_:with:ifCurrent:)`).
    public static let swapMarker = ".booksync-swap-"

    /// Creates a directory unless one is there. A link or file in its place is
    /// refused: state directories are never created or used through a link.
    public static func createDirectory(_ path: String) throws(FileSystemError) {
        if mkdir(path, 0o755) != 0 {
            let code = errno
            guard code == EEXIST else { throw FileSystemError(path: path, operation: "create directory", code: code) }
            let kind = try stat(path).kind
            if kind != .directory { throw .notRegular(path, kind, operation: "create directory") }
        }
    }

    /// Throws the refusal when `path` exists and is not a real directory (a link to one included).
    public static func requireDirectoryOrAbsent(_ path: String) throws(FileSystemError) {
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
    public static func remove(_ path: String) throws(FileSystemError) {
        if unlink(path) != 0, errno != ENOENT {
            throw FileSystemError(path: path, operation: "remove", code: errno)
        }
    }

    /// The current directory, absolute.
    public static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Makes `path` absolute against the current directory and drops `.`/`..` segments.
    public static func absolute(_ path: String) -> String {
        let joined = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        var parts: [Substring] = []
        for part in joined.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// `path` with every link resolved, as the kernel sees it; nil if it does not exist.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The directory and the last component of a path.
    public static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    private static let temporaryCounter = Atomic<Int>(0)

    static func nextTemporaryNumber() -> Int {
        temporaryCounter.add(1, ordering: .relaxed).newValue
    }
}
