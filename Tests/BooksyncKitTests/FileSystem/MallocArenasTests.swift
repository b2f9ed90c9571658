import Testing
@_spi(Remote) @testable import BooksyncKit

/// The network helper's one-arena setting is taken by glibc (the memory it
/// saves is measured by `scripts/bench`, not here).
@Suite struct MallocArenasTests {
    @Test func glibcTakesTheSetting() {
        #if canImport(Glibc)
        #expect(MallocArenas.useOne())
        #expect(MallocArenas.mapBlocks())
        #else
        #expect(!MallocArenas.useOne())
        #expect(!MallocArenas.mapBlocks())
        #endif
    }
}
