#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Where the C library differs between Linux (glibc) and macOS (Darwin), the
// difference is spelled here once; the code in FileSystem/ and the rest of the
// module calls these names. Files that call libc still import Glibc or Darwin
// themselves: Swift's imports are per file, and re-exporting libc from this
// module would hand it to every app that imports BooksyncStore.

/// `struct stat` of this platform.
#if canImport(Glibc)
typealias CStat = Glibc.stat
#elseif canImport(Darwin)
typealias CStat = Darwin.stat
#endif

/// What `opendir` returns on this platform.
#if canImport(Glibc)
typealias DirectoryHandle = OpaquePointer
#else
typealias DirectoryHandle = UnsafeMutablePointer<DIR>
#endif

/// C functions glibc has but Swift's Glibc module does not import (declared
/// only under `_GNU_SOURCE` or in headers the module leaves out), looked up by
/// name at run time; nil where the platform has none.
enum LibcShims {
    /// `renameat2(olddirfd, oldpath, newdirfd, newpath, flags)`, glibc 2.28 and later.
    typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
    /// `mallopt(option, value)` of `<malloc.h>`.
    typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
    /// `malloc_trim(pad)` of `<malloc.h>`.
    typealias MallocTrim = @convention(c) (Int) -> Int32
    /// `statfs(path, buffer)` of `<sys/vfs.h>`.
    typealias StatFS = @convention(c) (UnsafePointer<CChar>, UnsafeMutableRawPointer) -> Int32

    /// glibc's `renameat2`; nil on other platforms or an older glibc.
    static let renameat2: RenameAt2? = function("renameat2", as: RenameAt2.self)
    /// glibc's `mallopt`; nil on other platforms.
    static let mallopt: MallOpt? = function("mallopt", as: MallOpt.self)
    /// glibc's `malloc_trim`; nil on other platforms.
    static let mallocTrim: MallocTrim? = function("malloc_trim", as: MallocTrim.self)
    /// glibc's `statfs`; nil on other platforms.
    static let statfs: StatFS? = function("statfs", as: StatFS.self)

    /// The file system type of the folder at `path` (`f_type` of Linux's
    /// `struct statfs`, its first field, a `long`); nil where unknown.
    static func fileSystemType(_ path: String) -> Int? {
        guard let statfs else { return nil }
        // struct statfs is 120 bytes on 64-bit Linux; twice that is room enough.
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 8)
        defer { buffer.deallocate() }
        guard statfs(path, buffer) == 0 else { return nil }
        return buffer.load(as: Int.self)
    }

    private static func function<F>(_ name: String, as type: F.Type) -> F? {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(symbol, to: type)
        #else
        return nil
        #endif
    }
}
