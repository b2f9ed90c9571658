import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The stat fields the stat cache compares to decide whether a file changed.
/// Links are never followed: a symbolic link's stat describes the link itself.
package struct FileStat: Sendable, Equatable {
    /// Size in bytes.
    package let size: Int64
    /// Last modification, in nanoseconds since 1970 (as fine as the file system keeps it).
    package let mtimeNanoseconds: Int64
    /// Last status change (any write, rename or chmod), in nanoseconds since 1970.
    package let ctimeNanoseconds: Int64
    /// The inode number: a file replaced by rename gets a new one.
    package let inode: UInt64
    /// What the entry is, from the mode bits alone (never `.hardLinked`; see `linkCount`).
    package let kind: FileKind
    /// Permission bits.
    package let mode: UInt32
    /// How many names the file has (hard links).
    package let linkCount: UInt64
    /// The owner's user id.
    package let owner: UInt32

    /// A regular file (not a link, FIFO, device or directory).
    package var isRegularFile: Bool { kind == .regular }
    /// A real directory (a symbolic link to one is `.symbolicLink`).
    package var isDirectory: Bool { kind == .directory }
}

/// What a directory entry is. Only regular files can be records or state
/// files: a cloned collection may hold links, and a local one FIFOs or
/// devices, and booksync reads and writes none of them (the manual's Safety article).
public enum FileKind: Sendable, Equatable {
    case regular, directory, symbolicLink, fifo, device, socket, other
    /// A regular file with more than one name: written in place (the lock, the
    /// base pack), the write would also change a file elsewhere.
    case hardLinked

    /// The kind as a noun for messages: "a symbolic link".
    package var noun: String {
        switch self {
        case .regular: "a regular file"
        case .directory: "a directory"
        case .symbolicLink: "a symbolic link"
        case .fifo: "a FIFO (named pipe)"
        case .device: "a device"
        case .socket: "a socket"
        case .other: "not a regular file"
        case .hardLinked: "a file with other hard links"
        }
    }
}

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
            kind: FileKind(mode: s.st_mode), mode: UInt32(s.st_mode & 0o7777), linkCount: UInt64(s.st_nlink), owner: UInt32(s.st_uid))
    }
}

extension FileKind {
    init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symbolicLink
        case S_IFIFO: self = .fifo
        case S_IFCHR, S_IFBLK: self = .device
        case S_IFSOCK: self = .socket
        default: self = .other
        }
    }
}

/// Which folder or file a path leads to now (device and inode), to tell
/// when the same path leads somewhere else.
package struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of what `path` leads to (links followed); nil when nothing is there.
    package init?(path: String) {
        var s = CStat()
        guard stat(path, &s) == 0 else { return nil }
        device = UInt64(s.st_dev)
        inode = UInt64(s.st_ino)
    }
}
