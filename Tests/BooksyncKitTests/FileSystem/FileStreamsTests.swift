import Testing
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The block reader and the streaming atomic writer that let the stat cache be
/// read and rewritten without holding it.
@Suite struct FileStreamsTests {
    /// Every block ends at a newline, and the blocks add up to the file,
    /// whatever the block size and line lengths.
    @Test(arguments: [
        ("a\nbb\nccc\n", 4), ("a\nbb\nccc\n", 64), ("a\nbb\nccc", 4), ("", 4), ("\n\n\n", 1), ("line\n", 5),
    ])
    func blocksAreWholeLinesAndAddUpToTheFile(text: String, blockSize: Int) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/f"
        try FileSystem.writeAtomically(Array(text.utf8), to: path)
        let reader = try #require(LineBlockReader(path: path, blockSize: blockSize, maximumLine: 8))
        var all: [UInt8] = []
        var offsets: [Int] = []
        while let block = reader.next({ Array($0) }) {
            offsets.append(all.count)
            #expect(!block.isEmpty)
            if all.count + block.count < text.utf8.count { #expect(block.last == UInt8(ascii: "\n")) }
            all += block
        }
        #expect(!reader.failed)
        #expect(all == Array(text.utf8))
        #expect(reader.offset == text.utf8.count)
    }

    /// A line longer than the reader's bound (a damaged or hostile index)
    /// ends the stream as failed instead of growing without limit.
    @Test func aLineLongerThanTheBoundFails() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/f"
        try FileSystem.writeAtomically(Array("ok\n".utf8) + [UInt8](repeating: 0x61, count: 100) + [0x0A], to: path)
        let reader = try #require(LineBlockReader(path: path, blockSize: 4, maximumLine: 8))
        var blocks = 0
        while reader.next({ _ in () }) != nil { blocks += 1 }
        #expect(blocks == 1 && reader.failed)
    }

    /// A line longer than a block but within the bound (a base copy of a
    /// large document) is delivered whole, alone or between short lines.
    @Test(arguments: [0, 3, 100])
    func aLineLongerThanABlockButWithinTheBoundIsWhole(shortLines: Int) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/f"
        let long = [UInt8](repeating: 0x61, count: 1_000) + [0x0A]
        let short = Array(String(repeating: "s\n", count: shortLines).utf8)
        try FileSystem.writeAtomically(short + long + short + long, to: path)
        let reader = try #require(LineBlockReader(path: path, blockSize: 16, maximumLine: 2_000))
        var all: [UInt8] = []
        while let block = reader.next({ Array($0) }) {
            #expect(block.last == 0x0A)
            all += block
        }
        #expect(!reader.failed)
        #expect(all == short + long + short + long)
    }

    @Test func aLinkOrDirectoryIsNotRead() throws {
        let scratch = try ScratchDirectory()
        try FileSystem.writeAtomically(Array("x\n".utf8), to: scratch.path + "/target")
        symlink(scratch.path + "/target", scratch.path + "/link")
        #expect(LineBlockReader(path: scratch.path + "/link") == nil)
        #expect(LineBlockReader(path: scratch.path) == nil)
        #expect(LineBlockReader(path: scratch.path + "/missing") == nil)
    }

    @Test func writerReplacesOnCommitAndLeavesNothingWhenAbandoned() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/index"
        try FileSystem.writeAtomically(Array("old".utf8), to: path)
        do {
            let writer = try AtomicFileWriter(replacing: path)
            writer.append(Array("new".utf8))
            #expect(try FileSystem.readFile(path) == Array("old".utf8), "readers see the old file until commit")
        }
        #expect(try FileSystem.readFile(path) == Array("old".utf8))
        #expect(try FileSystem.listDirectory(scratch.path) == ["index"], "an abandoned writer removes its temporary file")
        let writer = try AtomicFileWriter(replacing: path)
        let big = [UInt8](repeating: 0x62, count: 3 << 20)
        writer.append(Array("new".utf8))
        big.withUnsafeBufferPointer { writer.append($0) }
        try writer.commit()
        #expect(try FileSystem.readFile(path) == Array("new".utf8) + big)
        #expect(try FileSystem.listDirectory(scratch.path) == ["index"])
    }

    @Test func copyPassesExactlyTheRange() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/f"
        try FileSystem.writeAtomically(Array("0123456789".utf8), to: path)
        var out: [UInt8] = []
        #expect(FileSystem.copy(path, from: 2, to: 7, into: { out += $0 }))
        #expect(out == Array("23456".utf8))
        #expect(!FileSystem.copy(path, from: 8, to: 20, into: { _ in }), "a range past the end is not all there")
    }
}
