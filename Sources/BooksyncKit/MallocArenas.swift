#if canImport(Glibc)
import Glibc
#endif

/// How many malloc arenas the network helper's threads share.
///
/// glibc gives threads that contend for malloc arenas of their own (up to
/// eight per core) and keeps what each arena once held. A remote command
/// allocates a listing answer's values on one thread, frees them on another,
/// and records the base on a third, so every arena grows to the size of the
/// largest batch it ever saw: a first pull of 100,000 documents peaked at
/// 184–247 MB of RSS with a live heap under 80 MB, and 107 MB with one arena,
/// not slower in those runs. Elsewhere (macOS) there is nothing to do.
public enum MallocArenas {
    /// Makes every thread allocate from one arena. Call first thing in
    /// `main`, before threads exist.
    /// - Returns: Whether the allocator took the setting (false where there is none to take).
    @discardableResult
    public static func useOne() -> Bool {
        #if canImport(Glibc)
        // mallopt is in <malloc.h>, which the Glibc module leaves out: found by name.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        let arenaMaximum: Int32 = -8  // M_ARENA_MAX in <malloc.h>
        return mallopt(arenaMaximum, 1) == 1
        #else
        return false
        #endif
    }
}
