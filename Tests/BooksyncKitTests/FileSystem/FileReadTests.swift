import Testing
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit

/// Whole-file reads (`FileSystem.readFile`, `readUserFile`): the buffer is
/// sized from the file's stated size, and the read goes on past it when the
/// file holds more.
@Suite struct FileReadTests {
    /// Sizes around the first buffer (4 KiB, or the stated size and a byte more).
    @Test(arguments: [0, 1, 4095, 4096, 4097, 100_000])
    func readsExactlyTheFile(size: Int) throws {
        let scratch = try ScratchDirectory()
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try FileSystem.writeAtomically(bytes, to: scratch.path + "/f")
        #expect(try FileSystem.readFile(scratch.path + "/f") == bytes)
        #expect(try FileSystem.readUserFile(scratch.path + "/f", limit: size) == bytes)
        if size > 0 {
            #expect(throws: FileSystemError.self) { try FileSystem.readUserFile(scratch.path + "/f", limit: size - 1) }
        }
    }

    /// A file that holds more than its stated size (procfs states 0) is read
    /// to its end, and the limit still applies past the first buffer.
    @Test func aFileLargerThanItsStatedSizeIsReadToTheEnd() throws {
        #if os(Linux)
        let maps = try FileSystem.readUserFile("/proc/self/maps", limit: 1 << 24)
        #expect(maps.count > 4096, "a test process maps more than a page of text")
        #expect(maps.last == UInt8(ascii: "\n"))
        #expect(String(decoding: maps, as: UTF8.self).contains("[stack]"))
        #expect(throws: FileSystemError.self) { try FileSystem.readUserFile("/proc/self/maps", limit: 4096) }
        #endif
    }
}
