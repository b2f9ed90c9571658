import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads and checks: `lstat` without following links, reads of regular files
/// only (a FIFO never blocks), directory listings.
extension FileSystem {
    /// `lstat(2)` of `path`: a symbolic link is reported as one, never followed.
    /// - Throws: `FileSystemError` (`isNotFound` when nothing is there).
    package static func stat(_ path: String) throws(FileSystemError) -> FileStat {
        var s = CStat()
        guard lstat(path, &s) == 0 else { throw FileSystemError(path: path, operation: "read file status", code: errno) }
        return FileStat(s)
    }

    /// `lstat` of `name` inside an open directory: no path walk per file.
    package static func stat(directory: Int32, name: String) throws(FileSystemError) -> FileStat {
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
    package static func stat(descriptor: Int32) throws(FileSystemError) -> FileStat {
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
    package static func openDirectory(_ path: String) throws(FileSystemError) -> Int32 {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "open directory", code: errno) }
        return fd
    }

    /// The folder `folder` below `root` (relative, "" for root itself),
    /// opened name by name without following a link on the way; the
    /// descriptor, or minus errno (`ELOOP` or `ENOTDIR` for a link). Close it
    /// with `closeDirectory`.
    package static func openFolderWithoutLinks(root: String, _ folder: String) -> Int32 {
        var current = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard current >= 0 else { return -errno }
        for name in folder.split(separator: "/") {
            let next = openat(current, String(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let code = errno
            close(current)
            guard next >= 0 else { return -code }
            current = next
        }
        return current
    }

    /// Closes a descriptor from `openDirectory`; once per descriptor.
    package static func closeDirectory(_ fd: Int32) {
        close(fd)
    }

    /// Whether anything is at `path`, without following a link (a dangling
    /// symbolic link exists). Errors other than absence also give false.
    package static func exists(_ path: String) -> Bool {
        var s = CStat()
        return lstat(path, &s) == 0
    }

    /// Whether `path` is a directory, following a symbolic link (for paths the user chose).
    package static func isDirectory(_ path: String) -> Bool {
        var s = CStat()
        return fstatat(AT_FDCWD, path, &s, 0) == 0 && (s.st_mode & S_IFMT) == S_IFDIR
    }

    /// Names in a directory (without `.` and `..`), unsorted.
    package static func listDirectory(_ path: String) throws(FileSystemError) -> [String] {
        try DirectoryLister(path).all()
    }

    /// The contents of the regular file at `path`. A symbolic link (as the
    /// last component), FIFO, device or directory is refused, never read.
    /// - Parameters:
    ///   - path: The file.
    ///   - limit: The most bytes read: a larger file fails with
    ///     `EFBIG` (`isTooLarge`), before or while it is read, never read whole.
    package static func readFile(_ path: String, limit: Int = .max) throws(FileSystemError) -> [UInt8] {
        let fd = open(path, readFlags)
        guard fd >= 0 else {
            let code = errno
            throw refusedKind(path, code: code, operation: "read") ?? FileSystemError(path: path, operation: "open", code: code)
        }
        defer { close(fd) }
        return try readRegular(fd, path: path, limit: limit)
    }

    /// The first `count` bytes (or fewer) of the regular file at `path`,
    /// refused like `readFile` when it is a link or not a regular file.
    package static func readFilePrefix(_ path: String, count: Int) throws(FileSystemError) -> [UInt8] {
        let fd = open(path, readFlags)
        guard fd >= 0 else {
            let code = errno
            throw refusedKind(path, code: code, operation: "read") ?? FileSystemError(path: path, operation: "open", code: code)
        }
        defer { close(fd) }
        var s = CStat()
        guard fstat(fd, &s) == 0 else { throw FileSystemError(path: path, operation: "read file status", code: errno) }
        let kind = FileKind(mode: s.st_mode)
        guard kind == .regular else { throw .notRegular(path, kind, operation: "read") }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, count - filled) }
            if n < 0, errno == EINTR { continue }
            if n < 0 { throw FileSystemError(path: path, operation: "read", code: errno) }
            if n == 0 { break }
            filled += n
        }
        return Array(bytes[..<filled])
    }

    /// The contents of a regular file the user named outside any collection
    /// (their own settings or credentials file), following a symbolic link:
    /// there a link is the user's own choice, while inside a collection it
    /// could be planted by a clone (`readFile`). Anything but a regular file
    /// is refused without blocking (a FIFO opens non-blocking), and a file
    /// over `limit` bytes fails with `EFBIG`.
    package static func readUserFile(_ path: String, limit: Int) throws(FileSystemError) -> [UInt8] {
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
    package static func requireRegularOrAbsent(_ path: String, operation: String) throws(FileSystemError) {
        var s = CStat()
        guard lstat(path, &s) == 0 else {
            if errno == ENOENT { return }
            throw FileSystemError(path: path, operation: "read file status", code: errno)
        }
        let kind = FileKind(mode: s.st_mode)
        if kind != .regular { throw .notRegular(path, kind, operation: operation) }
    }
}
