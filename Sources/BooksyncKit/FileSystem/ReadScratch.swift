#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One thread's reusable buffer for reading many small files in turn: after
/// a `touch` every record file is read once to prove its bytes unchanged, and
/// a fresh, zero-filled array per file cost more than the read itself.
final class ReadScratch {
    private var storage: UnsafeMutableRawBufferPointer
    /// Open flags: `readFlags`, plus `O_NOATIME` on Linux until the kernel
    /// refuses it (a file the user does not own).
    private var flags = FileSystem.readFlags | ReadScratch.noAccessTime

    /// A buffer of `capacity` bytes to start with; it grows for a larger file.
    init(capacity: Int = 1 << 16) {
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Passes the bytes of `cName` in `directory` to `body` when exactly
    /// `size` bytes are there to read, in one `read(2)`: a read of `size + 1`
    /// bytes that returns `size` has met the end of the file, without a second
    /// read to see it. Nil when the file cannot be opened or read, or holds
    /// more or fewer bytes. The bytes are valid only inside `body`.
    ///
    /// It does not check the file's kind: the caller has just stat-ed it as a
    /// regular file and proves the bytes by their content hash. Whatever may
    /// have been swapped in since cannot pass that proof and cannot block or
    /// be followed: the name is opened without following a link, a FIFO opens
    /// non-blocking and reads nothing (so it passes only as an empty file,
    /// whose hash is no record's), a directory fails to read.
    func readExactly<T>(directory: Int32, cName: UnsafePointer<CChar>, size: Int64,
                        _ body: (UnsafeRawBufferPointer) -> T) -> T? {
        guard size >= 0, size < Int64(Int.max) else { return nil }
        let count = Int(size)
        if storage.count < count + 1 {
            storage.deallocate()
            storage = .allocate(byteCount: count + 1, alignment: 16)
        }
        var fd = openat(directory, cName, flags)
        if fd < 0, errno == EPERM, flags != FileSystem.readFlags {
            flags = FileSystem.readFlags
            fd = openat(directory, cName, flags)
        }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var n: Int
        repeat {
            n = read(fd, storage.baseAddress!, count + 1)
        } while n < 0 && errno == EINTR
        guard n == count else { return nil }
        return body(UnsafeRawBufferPointer(rebasing: storage[..<count]))
    }
}

extension ReadScratch {
    /// Linux's `O_NOATIME` (not exported by the Glibc module): reading a file
    /// just touched would otherwise set its access time (`relatime` updates it
    /// once the modification time is newer), dirtying every inode a second time
    /// and costing a journal update per file; `status` only proves the bytes
    /// unchanged, which is not a use of the file worth recording. Allowed only
    /// on files the user owns, so `readExactly` drops it after one `EPERM`.
    #if os(Linux) && (arch(x86_64) || arch(arm64) || arch(i386) || arch(arm))
    static let noAccessTime: Int32 = 0o1000000
    #else
    static let noAccessTime: Int32 = 0
    #endif
}
