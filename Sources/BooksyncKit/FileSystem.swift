import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The stat fields the stat cache compares to decide whether a file changed.
public struct FileStat: Sendable, Equatable {
    public let size: Int64
    public let mtimeNanoseconds: Int64
    public let ctimeNanoseconds: Int64
    public let inode: UInt64
    public let isRegularFile: Bool
    public let isDirectory: Bool
    /// Permission bits.
    public let mode: UInt32
}

/// An I/O failure with the path and the operation, phrased for users.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public let path: String
    public let operation: String
    public let code: Int32

    public var description: String {
        "\(path): cannot \(operation): \(String(cString: strerror(code)))"
    }

    public var isNotFound: Bool { code == ENOENT || code == ENOTDIR }
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

    /// The contents of a NUL-terminated name inside an open directory; nil on any error.
    static func readFile(directory: Int32, cName: UnsafePointer<CChar>) -> [UInt8]? {
        let fd = openat(directory, cName, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var s = CStat()
        guard fstat(fd, &s) == 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(s.st_size) + 1)
        var count = 0
        while true {
            if count == bytes.count { bytes.append(contentsOf: [UInt8](repeating: 0, count: max(bytes.count, 4096))) }
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            count += n
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

    public static func closeDirectory(_ fd: Int32) {
        close(fd)
    }

    public static func exists(_ path: String) -> Bool {
        var s = CStat()
        return lstat(path, &s) == 0
    }

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

    public static func readFile(_ path: String) throws(FileSystemError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "open", code: errno) }
        defer { close(fd) }
        var s = CStat()
        var capacity = 64 * 1024
        if fstat(fd, &s) == 0, s.st_size > 0 { capacity = Int(s.st_size) + 1 }
        var bytes = [UInt8](repeating: 0, count: capacity)
        var count = 0
        while true {
            if count == bytes.count { bytes.append(contentsOf: [UInt8](repeating: 0, count: bytes.count)) }
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(path: path, operation: "read", code: errno)
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// Replaces `path` atomically: readers see the old or the new content, never a mix.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, durable: Bool = false) throws(FileSystemError) {
        let (directory, _) = split(path)
        // Short, hidden, and unique per process: the target's own name could be
        // 255 bytes already, so it is not part of the temporary name.
        let temporary = directory + "/" + temporaryMarker + String(getpid()) + "-" + String(nextTemporaryNumber())
        // Keep the mode of the file being replaced (a 0600 record stays 0600).
        var existing = CStat()
        let mode: mode_t = lstat(path, &existing) == 0 ? existing.st_mode & 0o7777 : 0o644
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "create a temporary file", code: errno) }
        if mode != 0o644 { fchmod(fd, mode) }
        var failure = writeAll(bytes, to: fd)
        if failure == 0, durable, fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw FileSystemError(path: path, operation: "write", code: failure)
        }
    }

    /// Writes all of `bytes` to `fd`; the errno of a failure, or 0.
    static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32 {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
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
    @discardableResult
    public static func removeStaleTemporaries(in directory: String) -> Int {
        guard let names = try? listDirectory(directory) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(temporaryMarker) {
            let rest = name.dropFirst(temporaryMarker.count)
            guard let pid = Int32(rest.prefix { $0 != "-" }) else { continue }
            if pid == getpid() || (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)) { continue }
            if unlink(directory + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }

    public static func createDirectory(_ path: String) throws(FileSystemError) {
        if mkdir(path, 0o755) != 0, errno != EEXIST {
            throw FileSystemError(path: path, operation: "create directory", code: errno)
        }
    }

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

    /// The directory and the last component of a path.
    public static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    private static let temporaryCounter = Atomic<Int>(0)

    private static func nextTemporaryNumber() -> Int {
        temporaryCounter.add(1, ordering: .relaxed).newValue
    }
}

#if canImport(Glibc)
typealias CStat = Glibc.stat
#elseif canImport(Darwin)
typealias CStat = Darwin.stat
#endif

extension FileStat {
    init(_ s: CStat) {
        #if canImport(Darwin)
        let mtime = Int64(s.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(s.st_mtimespec.tv_nsec)
        let ctime = Int64(s.st_ctimespec.tv_sec) * 1_000_000_000 + Int64(s.st_ctimespec.tv_nsec)
        #else
        let mtime = Int64(s.st_mtim.tv_sec) * 1_000_000_000 + Int64(s.st_mtim.tv_nsec)
        let ctime = Int64(s.st_ctim.tv_sec) * 1_000_000_000 + Int64(s.st_ctim.tv_nsec)
        #endif
        self.init(
            size: Int64(s.st_size), mtimeNanoseconds: mtime, ctimeNanoseconds: ctime, inode: UInt64(s.st_ino),
            isRegularFile: (s.st_mode & S_IFMT) == S_IFREG, isDirectory: (s.st_mode & S_IFMT) == S_IFDIR,
            mode: UInt32(s.st_mode & 0o7777))
    }
}
