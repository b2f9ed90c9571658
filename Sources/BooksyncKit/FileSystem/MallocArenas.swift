import Synchronization

/// How the network helper's malloc is set up: how many arenas its threads
/// share, and from what size a block is mapped on its own (`mapBlocks`).
///
/// glibc gives threads that contend for malloc arenas of their own (up to
/// eight per core) and keeps what each arena once held. A remote command
/// allocates a listing answer's values on one thread, frees them on another,
/// and records the base on a third, so every arena grows to the size of the
/// largest batch it ever saw: RSS grows to several times the live heap, and
/// one arena is not slower (<doc:Benchmarks>). Elsewhere (macOS) there is
/// nothing to do.
package enum MallocArenas {
    /// Makes every thread allocate from one arena. Call first thing in
    /// `main`, before threads exist.
    /// - Returns: Whether the allocator took the setting (false where there is none to take).
    @discardableResult
    package static func useOne() -> Bool {
        let taken = setOption(-8, to: 1)  // M_ARENA_MAX in <malloc.h>
        helperSetUp.store(taken, ordering: .relaxed)
        return taken
    }

    /// The size from which a block gets a mapping of its own (`mapBlocks`).
    package static let largeBlock: Int32 = 1 << 20

    /// Gives every block of `bytes` or more a mapping of its own, which goes
    /// back to the system when it is freed.
    ///
    /// glibc starts at 128 KB but raises that threshold to the size of each
    /// mapped block freed, up to 32 MB: once a push had sorted and freed its
    /// scan's arrays, the next ones of that size came from the heap, and what
    /// they left there when freed stayed resident. A first push of a million
    /// records holds a few arrays of 4 to 32 MB that live for the whole
    /// command; the ones that do not must not stay.
    /// - Returns: Whether the allocator took the setting.
    @discardableResult
    package static func mapBlocks(atLeast bytes: Int32 = largeBlock) -> Bool {
        setOption(-3, to: bytes)  // M_MMAP_THRESHOLD in <malloc.h>
    }

    /// Gives the pages of freed blocks back to the system, wherever they are
    /// in the heap (glibc's `malloc_trim(0)`), in the network helper (once
    /// `useOne()` has set it up); nothing elsewhere.
    ///
    /// Each listing answer of 10,000 names is parsed into about 12 MB of
    /// small values and freed, and each chunk of a pull into its bodies;
    /// freed pages below a block still in use stay resident. Called once per
    /// answer or chunk, it walks the free blocks, not the heap (the
    /// Benchmarks article's pull memory rounds measure what it saves).
    /// - Returns: Whether it asked the allocator.
    @discardableResult
    package static func returnFreePages() -> Bool {
        guard helperSetUp.load(ordering: .relaxed), let trim = LibcShims.mallocTrim else { return false }
        _ = trim(0)
        return true
    }

    /// Whether `useOne()` set this process up as the network helper.
    private static let helperSetUp = Atomic<Bool>(false)

    /// glibc's `mallopt(option, value)`; false where there is none, or it refused.
    private static func setOption(_ option: Int32, to value: Int32) -> Bool {
        guard let mallopt = LibcShims.mallopt else { return false }
        return mallopt(option, value) == 1
    }
}
