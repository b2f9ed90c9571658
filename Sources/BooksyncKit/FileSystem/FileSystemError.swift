import BooksyncCore
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
    package init(path: String, operation: String, code: Int32, unsafeKind: FileKind? = nil) {
        self.path = path
        self.operation = operation
        self.code = code
        self.unsafeKind = unsafeKind
    }

    /// `path` is a link, FIFO, device or directory where booksync expected a regular file.
    package static func notRegular(_ path: String, _ kind: FileKind, operation: String) -> FileSystemError {
        FileSystemError(path: path, operation: operation, code: EINVAL, unsafeKind: kind)
    }

    public var description: String {
        if let unsafeKind { return "\(path): " + (operation == Self.folderOperation ? Self.folderRefusal(unsafeKind) : Self.refusal(unsafeKind)) }
        return "\(path): cannot \(operation): \(String(cString: strerror(code)))"
    }

    /// The one sentence every command uses for an entry it will not touch.
    package static func refusal(_ kind: FileKind) -> String {
        switch kind {
        case .symbolicLink: "is a symbolic link; booksync never follows links inside a collection (replace it with a plain file)"
        case .directory: "is a directory where a file belongs; booksync leaves it alone"
        case .regular: "is a file where a directory belongs; booksync leaves it alone"
        case .hardLinked: "has other hard links, so writing it in place would change another file too; booksync leaves it alone (remove it, booksync makes a new one)"
        default: "is \(kind.noun); booksync only reads and writes regular files and leaves it alone"
        }
    }

    /// The problem as a diagnostic of the file it concerns (without repeating its path).
    package var diagnostic: RecordDiagnostic {
        RecordDiagnostic(message: unsafeKind.map(Self.refusal) ?? "cannot \(operation): \(String(cString: strerror(code)))")
    }

    /// The path (or a directory on the way) does not exist: `ENOENT` or
    /// `ENOTDIR`, never a refusal of an unsafe kind. Lets a caller take the
    /// path as absent instead of failing.
    public var isNotFound: Bool { unsafeKind == nil && (code == ENOENT || code == ENOTDIR) }

    /// The file is larger than the limit a read was given (`EFBIG`).
    package var isTooLarge: Bool { unsafeKind == nil && code == EFBIG }
}
