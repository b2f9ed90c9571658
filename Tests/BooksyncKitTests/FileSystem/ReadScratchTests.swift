import Testing
import BooksyncCore
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one-read proof a touched file is unchanged (`ReadScratch`) and the
/// index rewrite it feeds (`StatCache.verifiesClean`).
@Suite struct ReadScratchTests {
    /// Makes `name` in `directory` as `kind` says; the bytes of a regular file are `text`.
    static func make(_ kind: String, _ path: String, _ text: String) throws {
        switch kind {
        case "file": try FileSystem.writeAtomically(Array(text.utf8), to: path)
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        case "directory": #expect(mkdir(path, 0o700) == 0)
        case "link":
            try FileSystem.writeAtomically(Array(text.utf8), to: path + ".target")
            #expect(symlink(path + ".target", path) == 0)
        default: break  // "missing"
        }
    }

    /// Only a file holding exactly the expected number of bytes is read; a
    /// FIFO (swapped in after the stat) does not block and reads as empty
    /// (the hash of no record), a link is not followed, and a file larger
    /// than the buffer grows it.
    @Test(arguments: [
        ("file", "0123456789", 10, "0123456789"), ("file", "", 0, ""), ("file", "0123456789", 9, nil),
        ("file", "0123456789", 11, nil), ("file", String(repeating: "x", count: 100_000), 100_000, String(repeating: "x", count: 100_000)),
        ("fifo", "", 0, ""), ("fifo", "", 10, nil), ("directory", "", 4096, nil), ("link", "0123456789", 10, nil),
        ("missing", "", 0, nil), ("file", "abc", -1, nil),
    ] as [(String, String, Int64, String?)])
    func readsExactlyTheStatedSize(kind: String, text: String, size: Int64, expected: String?) throws {
        let scratch = try ScratchDirectory()
        try Self.make(kind, scratch.path + "/r.json", text)
        let directory = try FileSystem.openDirectory(scratch.path)
        defer { FileSystem.closeDirectory(directory) }
        let buffer = ReadScratch(capacity: 16)
        let bytes = buffer.readExactly(directory: directory, cName: "r.json", size: size) { Array($0) }
        #expect(bytes == expected.map { Array($0.utf8) })
    }

    /// Reading a touched file to prove it unchanged does not set its access
    /// time on Linux (`O_NOATIME`): that would dirty every inode again.
    @Test func provingAFileDoesNotSetItsAccessTime() throws {
        #if os(Linux)
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/r.json"
        try FileSystem.writeAtomically(Array("{}".utf8), to: path)
        // Access time an hour before the modification time: `relatime` would update it on a read.
        var times = [timespec(tv_sec: time(nil) - 3600, tv_nsec: 0), timespec(tv_sec: time(nil), tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        var before = CStat()
        #expect(lstat(path, &before) == 0)
        let directory = try FileSystem.openDirectory(scratch.path)
        defer { FileSystem.closeDirectory(directory) }
        #expect(ReadScratch().readExactly(directory: directory, cName: "r.json", size: 2) { Array($0) } == Array("{}".utf8))
        var after = CStat()
        #expect(lstat(path, &after) == 0)
        #expect(after.st_atim.tv_sec == before.st_atim.tv_sec && after.st_atim.tv_nsec == before.st_atim.tv_nsec)
        #endif
    }

    /// Touched files spread over several runs of lines (the threads' unit,
    /// 1,024 lines) and several blocks: the rewritten index is the old one
    /// with exactly the touched lines' stats replaced, in the same order.
    @Test(arguments: [1 << 22, 1 << 12])
    func touchedLinesAreRewrittenInPlace(blockSize: Int) throws {
        let scratch = try ScratchDirectory()
        let count = 2_600
        let touched: Set<Int> = [0, 1, 1023, 1024, 2047, 2599]
        let old = timespec(tv_sec: time(nil) - 3600, tv_nsec: 123_456_789)
        var stats: [FileStat] = []
        var hashes: [String] = []
        for k in 0..<count {
            let path = scratch.path + "/r\(k).json"
            let bytes = Array("{\"id\": \"r\(k)\"}".utf8)
            try FileSystem.writeAtomically(bytes, to: path)
            var times = [old, old]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            stats.append(try FileSystem.stat(path))
            hashes.append(SHA256.contentHash(bytes).text)
        }
        func index(startedAt: Int64, stale: Set<Int>) -> [UInt8] {
            var out: [UInt8] = []
            StatCache.appendHeader(scanStartedAt: startedAt, fingerprint: "f", baseStamp: "b", baseCount: count, directoryStamp: "d", to: &out)
            for k in 0..<count {
                let s = stats[k]
                StatCache.appendLine(name: Array("r\(k).json".utf8), size: s.size, mtime: stale.contains(k) ? s.mtimeNanoseconds - 1 : s.mtimeNanoseconds,
                                     ctime: s.ctimeNanoseconds, inode: s.inode, hash: Array(hashes[k].utf8), clean: true, to: &out)
            }
            return out
        }
        usleep(250_000)  // setting the times set each ctime to now: let them age past the racy window
        let indexPath = scratch.path + "/index"
        let now = WallClock.nowNanoseconds()
        try FileSystem.writeAtomically(index(startedAt: now - 1, stale: touched), to: indexPath)
        let directory = try FileSystem.openDirectory(scratch.path)
        defer { FileSystem.closeDirectory(directory) }
        let proof = try #require(StatCache.verifiesClean(indexAt: indexPath, fingerprint: "f", baseStamp: "b", directoryStamp: "d",
                                                         directory: directory, scanStartedAt: now, blockSize: blockSize))
        #expect(proof.count == count && proof.rehashed == touched.count)
        #expect(try FileSystem.readFile(indexPath) == index(startedAt: now, stale: []))
        // A touched file whose bytes changed (same size) proves nothing and leaves the index alone.
        let rewritten = try FileSystem.readFile(indexPath)
        try FileSystem.writeAtomically(index(startedAt: now - 1, stale: [1500]), to: indexPath)
        try FileSystem.writeAtomically(Array("{\"id\": \"X1500\"}".utf8), to: scratch.path + "/r1500.json")
        #expect(StatCache.verifiesClean(indexAt: indexPath, fingerprint: "f", baseStamp: "b", directoryStamp: "d",
                                        directory: directory, scanStartedAt: now, blockSize: blockSize) == nil)
        #expect(try FileSystem.readFile(indexPath) == index(startedAt: now - 1, stale: [1500]))
        #expect(rewritten != index(startedAt: now - 1, stale: [1500]))
    }
}
