import BooksyncCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin POSIX file access. booksync calls the C library directly instead of
/// FileManager: it is several times faster per file on Linux, reports errno
/// precisely, and `FileManager.replaceItemAt` loses data on this toolchain.
///
/// Durability choice: record files are replaced atomically (write a temporary
/// file in the same directory, then `rename(2)`), so a killed booksync never
/// leaves a half-written record. Record files are not fsynced (several times slower, <doc:Benchmarks>);
/// state files that describe what happened remotely are (`durable: true`).
/// Reads are in `FileSystem+Reads`, writes in `FileSystem+Writes`; this file
/// holds the path helpers.
package enum FileSystem {
    /// Temporary files are named `.booksync-tmp-PID-N`, so stale ones left by a
    /// killed process can be recognised (hidden, so never taken for records) and removed.
    package static let temporaryMarker = ".booksync-tmp-"

    /// The current directory, absolute.
    package static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Makes `path` absolute against the current directory and drops `.`/`..` segments.
    package static func absolute(_ path: String) -> String {
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
    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The directory and the last component of a path.
    package static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    private static let temporaryCounter = Atomic<Int>(0)

    static func nextTemporaryNumber() -> Int {
        temporaryCounter.add(1, ordering: .relaxed).newValue
    }
}
