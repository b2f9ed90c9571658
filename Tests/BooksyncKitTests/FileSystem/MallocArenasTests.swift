import Testing
@_spi(Remote) @testable import BooksyncKit

/// The network helper's malloc settings are taken by glibc, and its
/// `malloc_trim` is found (the memory they save is measured by
/// `scripts/bench` and the Benchmarks article's rounds, not here).
@Suite struct MallocArenasTests {
    @Test func glibcTakesTheSetting() {
        #if canImport(Glibc)
        #expect(MallocArenas.useOne())
        #expect(MallocArenas.mapBlocks())
        #expect(MallocArenas.returnFreePages(), "malloc_trim is found")
        #else
        #expect(!MallocArenas.useOne())
        #expect(!MallocArenas.mapBlocks())
        #expect(!MallocArenas.returnFreePages())
        #endif
    }
}
