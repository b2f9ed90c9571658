#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a line-oriented state file (the stat cache, the manifest, the base
/// pack) front to back in blocks of whole lines, so a million-line file costs
/// one block of memory, not its size.
///
/// Each block ends at a newline, except the last one when the file does not
/// end in one (its readers then see a damaged last line). The buffer grows for
/// a line longer than a block, up to `maximumLine`; a longer line ends the
/// stream as damaged.
final class LineBlockReader {
    private let fd: Int32
    private var buffer: [UInt8]
    /// Bytes at the front of `buffer` already read but not yet delivered.
    private var pending = 0
    private var atEnd = false
    private let blockSize: Int
    private let maximumLine: Int
    /// The file offset of the next block's first byte (while `body` runs, of
    /// the block it was given).
    private(set) var offset = 0
    /// True once a read failed or a line was too long; the stream then ends early.
    private(set) var failed = false
    /// The file's size when it was opened.
    let fileSize: Int

    /// Opens a regular file (never through a link, never a FIFO); nil when it
    /// cannot be opened.
    init?(path: String, blockSize: Int = 1 << 22, maximumLine: Int = 1 << 16) {
        let fd = open(path, FileSystem.readFlags)
        guard fd >= 0 else { return nil }
        var s = CStat()
        guard fstat(fd, &s) == 0, FileKind(mode: s.st_mode) == .regular else {
            close(fd)
            return nil
        }
        self.fd = fd
        self.blockSize = blockSize
        self.maximumLine = maximumLine
        fileSize = Int(s.st_size)
        // Room for one block and an ordinary line; grown only for a long line.
        buffer = [UInt8](repeating: 0, count: blockSize + min(maximumLine, 1 << 16))
    }

    deinit { close(fd) }

    /// Reads until `pending` reaches `target` bytes or the file ends; false on a read error.
    private func fill(to target: Int) -> Bool {
        while !atEnd, pending < target {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + pending, target - pending) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            if n == 0 { atEnd = true }
            pending += n
        }
        return true
    }

    /// Calls `body` with the next block of whole lines and returns its result;
    /// nil at the end of the file or after a failure (see `failed`).
    func next<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) -> T? {
        guard !failed else { return nil }
        guard fill(to: blockSize) else {
            failed = true
            return nil
        }
        var cut: Int
        while true {
            guard pending > 0 else { return nil }
            if let newline = buffer[..<pending].lastIndex(of: 0x0A) {
                cut = newline + 1
                break
            }
            if atEnd {
                cut = pending
                break
            }
            // One line longer than what is buffered: read on, with more room if need be.
            let limit = blockSize + maximumLine
            if pending == buffer.count {
                guard buffer.count < limit else {
                    failed = true
                    return nil
                }
                buffer += [UInt8](repeating: 0, count: min(buffer.count, limit - buffer.count))
            }
            guard fill(to: buffer.count) else {
                failed = true
                return nil
            }
        }
        let result = buffer.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[..<cut])) }
        buffer.withUnsafeMutableBufferPointer { b in
            for k in 0..<(pending - cut) { b[k] = b[cut + k] }
        }
        pending -= cut
        offset += cut
        return result
    }
}

/// A file written front to back and then put in place of `path` atomically,
/// like `FileSystem.writeAtomically`, without holding its bytes: readers see
/// the old file until `commit()`, and an uncommitted writer removes its
/// temporary file.
final class AtomicFileWriter {
    private let path: String
    private let temporary: String
    private var fd: Int32
    private var buffer: [UInt8] = []
    private var failure: Int32 = 0
    private let durable: Bool
    private static let flushSize = 1 << 20
    /// Bytes appended so far.
    private(set) var size = 0

    /// Creates the temporary file beside `path` (a regular file or nothing;
    /// anything else is refused).
    init(replacing path: String, durable: Bool = false) throws(FileSystemError) {
        (temporary, fd) = try FileSystem.createTemporary(beside: path)
        self.path = path
        self.durable = durable
        buffer.reserveCapacity(Self.flushSize + 4096)
    }

    deinit {
        if fd >= 0 {
            close(fd)
            unlink(temporary)
        }
    }

    /// Appends bytes; written out in large blocks.
    func append(_ bytes: some Collection<UInt8>) {
        size += bytes.count
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.flushSize { flush() }
    }

    /// Appends bytes that the caller built in a scratch buffer.
    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        size += bytes.count
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.flushSize { flush() }
    }

    private func flush() {
        if failure == 0, !buffer.isEmpty { failure = FileSystem.writeAll(buffer, to: fd) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Passes the bytes written so far, from `start` on, to `body` (read back
    /// from the temporary file); false when they cannot be read.
    func readBack(from start: Int, into body: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        flush()
        return failure == 0 && FileSystem.copy(temporary, from: start, to: size, into: body)
    }

    /// Overwrites bytes already appended, at `offset` (a header whose value is
    /// known only at the end); the size does not change.
    func patch(_ bytes: [UInt8], at offset: Int) {
        precondition(offset + bytes.count <= size)
        flush()
        guard failure == 0 else { return }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + written, bytes.count - written, off_t(offset + written)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                failure = n < 0 ? errno : EIO
                return
            }
            written += n
        }
    }

    /// Writes what is left and renames the file over `path`.
    /// - Throws: the first write error, naming `path`.
    func commit() throws(FileSystemError) {
        flush()
        if failure == 0, durable, fsync(fd) != 0 { failure = errno }
        close(fd)
        fd = -1
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw FileSystemError(path: path, operation: "write", code: failure)
        }
    }
}

extension FileSystem {
    /// Passes the bytes `from..<to` of the regular file at `path` to `body`
    /// in blocks; false when they cannot all be read.
    static func copy(_ path: String, from start: Int, to end: Int, into body: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        guard start < end else { return true }
        let fd = open(path, readFlags)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var block = [UInt8](repeating: 0, count: min(end - start, 1 << 20))
        var position = start
        while position < end {
            let n = block.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, min($0.count, end - position), off_t(position)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            block.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[..<n])) }
            position += n
        }
        return true
    }
}

extension FileSystem {
    /// How many entries of the directory at `path` (not `.`, `..`) pass
    /// `include`, without holding their names; nil when it cannot be listed.
    static func countEntries(_ path: String, where include: (String) -> Bool) -> Int? {
        guard let lister = try? DirectoryLister(path) else { return nil }
        var count = 0
        while let name = lister.nextName() {
            if include(name) { count += 1 }
        }
        return count
    }
}

/// Lists a directory: the one `readdir` loop of booksync. In batches of
/// names (`next(_:)`), so a million entries are never one array, or whole.
final class DirectoryLister {
    private let dir: DirectoryHandle
    private let path: String

    /// Opens the directory at `path`.
    /// - Throws: `FileSystemError` naming `path` when it cannot be listed.
    init(_ path: String) throws(FileSystemError) {
        guard let dir = opendir(path) else { throw FileSystemError(path: path, operation: "list directory", code: errno) }
        self.dir = dir
        self.path = path
    }

    /// Lists a directory already open as `descriptor`, from its start; the
    /// descriptor stays open (a copy is listed). `path` names it in errors.
    init(descriptor: Int32, path: String) throws(FileSystemError) {
        let copy = dup(descriptor)
        guard copy >= 0, let dir = fdopendir(copy) else {
            let code = errno
            if copy >= 0 { close(copy) }
            throw FileSystemError(path: path, operation: "list directory", code: code)
        }
        rewinddir(dir)
        self.dir = dir
        self.path = path
    }

    deinit { closedir(dir) }

    /// The next name (not `.`, `..`); nil at the end.
    func nextName() -> String? {
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { return name }
        }
        return nil
    }

    /// Up to `limit` more names; empty at the end.
    func next(_ limit: Int) -> [String] {
        var names: [String] = []
        names.reserveCapacity(limit)
        while names.count < limit, let name = nextName() { names.append(name) }
        return names
    }

    /// Every name left, unsorted.
    func all() -> [String] {
        var names: [String] = []
        while let name = nextName() { names.append(name) }
        return names
    }
}
