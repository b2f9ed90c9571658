import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit
#if canImport(Glibc)
import Glibc
#endif

/// The stat cache (.booksync/index): its format, and the quick proof of a clean tree from it.
@Suite struct StatCacheFormatTests {
    @Test func extremeStatValuesRoundTrip() {
        let entry = StatCache.Entry(size: 5, mtime: -86_400_000_000_000, ctime: Int64.max, inode: UInt64.max, hash: "sha256:ab")
        let cache = StatCache(scanStartedAt: 1, fingerprint: "f", entries: ["a.json": entry])
        #expect(StatCache.decode(cache.encoded(), fingerprint: "f")?.entries == ["a.json": entry])
    }

    /// The bytes of the documented format, so a codec change cannot silently
    /// change what existing indexes mean.
    @Test func writesAndReadsTheDocumentedFormat() throws {
        let entry = StatCache.Entry(size: 5, mtime: -3, ctime: 7, inode: 9, hash: "sha256:ab", clean: true)
        let cache = StatCache(scanStartedAt: 1, fingerprint: "f", baseStamp: "1:2:3:4", baseCount: 1, directoryStamp: "5:6:7:8",
                              entries: ["a.json": entry])
        let text = "booksync-index\t3\t1\tf\t1:2:3:4\t1\t5:6:7:8\na.json\t5\t-3\t7\t9\tsha256:ab\tc\n"
        #expect(String(decoding: cache.encoded(), as: UTF8.self) == text)
        #expect(StatCache.directoryStamp(of: Array(text.utf8)) == "5:6:7:8")
        let decoded = try #require(StatCache.decode(Array(text.utf8), fingerprint: "f"))
        #expect(decoded.entries == ["a.json": entry] && decoded.baseStamp == "1:2:3:4" && decoded.baseCount == 1)
        #expect(StatCache.decode(Array(text.utf8), fingerprint: "g") == nil)
    }

    @Test(arguments: ["99999999999999999999", "-", "1x", "", "+1", "9223372036854775808"])
    func damagedNumbersInvalidateTheCurrentFormat(number: String) {
        let index = { (mtime: String) in Array("booksync-index\t3\t5\tf\t-\t1\t-\na.json\t1\t\(mtime)\t1\t1\tsha256:ab\tc\n".utf8) }
        #expect(StatCache.decode(index("-12"), fingerprint: "f")?.entries["a.json"]?.mtime == -12)
        #expect(StatCache.decode(index(number), fingerprint: "f") == nil)
    }

    @Test(arguments: ["99999999999999999999", "-", "1x", ""])
    func damagedNumbersInvalidateTheCacheWithoutCrashing(number: String) {
        let text = "booksync-index\t1\t5\tf\na.json\t1\t\(number)\t1\t1\tsha256:ab\n"
        #expect(StatCache.decode(Array(text.utf8), fingerprint: "f") == nil)
    }
}

/// The stat-cache-only proof of a clean tree must fall back whenever anything changed.
@Suite struct QuickCleanStatusTests {
    func synced() async throws -> (ScratchDirectory, String, CollectionDirectory) {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("clean")
        try await Task.sleep(for: .milliseconds(250))  // files and manifest older than the racy window
        let collection = try CollectionDirectory.open(searchingFrom: root)
        let first = try await collection.status(remote: nil)
        #expect(first.isClean)
        return (scratch, root, collection)
    }

    @Test func unchangedTreeIsProvedCleanWithoutTheManifest() async throws {
        let (scratch, _, collection) = try await synced()
        try withExtendedLifetime(scratch) {
            let quick = try #require(collection.quickCleanStatus())
            #expect(quick.isClean && quick.recordCount == 2 && quick.filesRead == 0)
        }
    }

    @Test func unchangedDirectoryIsVerifiedFromTheIndexAlone() async throws {
        let (scratch, root, collection) = try await synced()
        try withExtendedLifetime(scratch) {
            let directory = try FileSystem.openDirectory(root)
            defer { FileSystem.closeDirectory(directory) }
            let now = WallClock.nowNanoseconds()
            let directoryStamp = StatCache.stamp(of: try FileSystem.stat(root), scanStartedAt: now)
            let indexPath = root + "/.booksync/index"
            let index = try FileSystem.readFile(indexPath)
            let verify = { (stamp: FileStamp?) in
                StatCache.verifiesClean(indexAt: indexPath, fingerprint: collection.configFingerprint, baseStamp: collection.manifestFile.stamp(),
                                        directoryStamp: stamp, directory: directory, scanStartedAt: now)
            }
            #expect(verify(directoryStamp)?.count == 2)
            #expect(verify(directoryStamp)?.rehashed == 0)
            #expect(try FileSystem.readFile(indexPath) == index, "nothing re-hashed, nothing rewritten")
            #expect(verify("1:2:3:4") == nil)
            // Without the directory's stamp the names must be sorted: then the caller's count proves the set.
            #expect(verify(nil)?.count == 2)
            // Without the stamp a duplicated line could stand in for a missing
            // file: names must be distinct (their order does not matter).
            let lines = index.split(separator: UInt8(ascii: "\n")).map { Array($0) + [UInt8(ascii: "\n")] }
            #expect(lines.count == 3)
            try FileSystem.writeAtomically(lines[0] + lines[2] + lines[1], to: indexPath)
            #expect(verify(nil)?.count == 2)
            try FileSystem.writeAtomically(lines[0] + lines[1] + lines[1], to: indexPath)
            #expect(verify(nil) == nil)
            try FileSystem.writeAtomically(index, to: indexPath)
            // Touched, same bytes: still clean, with a refreshed index line for that file.
            let dune = root + "/dune.json"
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: dune)
            #expect(verify(nil) == nil, "without the directory's stamp a changed stat is not re-hashed")
            let touched = try #require(verify(directoryStamp))
            #expect(touched.count == 2 && touched.rehashed == 1)
            let refreshed = try FileSystem.readFile(indexPath)
            #expect(StatCache.decode(refreshed, fingerprint: collection.configFingerprint)?.entries["dune.json"]?.mtime
                == (try FileSystem.stat(dune)).mtimeNanoseconds)
            // A same-size edit in place keeps the directory stamp; the file's own stat catches it.
            var bytes = try FileSystem.readFile(dune)
            bytes[bytes.count - 3] = UInt8(ascii: "7")
            let fd = open(dune, O_WRONLY)
            _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
            close(fd)
            #expect(verify(directoryStamp) == nil)
        }
    }

    /// A damaged count in the header once sized an allocation: 2^63-1 trapped
    /// and 10^12 ran out of memory. It must only make the index useless.
    @Test(arguments: ["9223372036854775807", "1000000000000", "3"])
    func aDamagedEntryCountFallsBackWithoutCrashing(count: String) async throws {
        let (scratch, root, collection) = try await synced()
        defer { withExtendedLifetime(scratch) {} }
        let indexPath = root + "/.booksync/index"
        let index = try FileSystem.readFile(indexPath)
        let headerEnd = try #require(index.firstIndex(of: UInt8(ascii: "\n")))
        var fields = index[..<headerEnd].split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false).map(Array.init)
        #expect(fields.count == 7 && fields[5] == Array("2".utf8), "the header's sixth field counts the entries")
        fields[5] = Array(count.utf8)
        let damaged = Array(fields.joined(separator: [UInt8(ascii: "\t")])) + index[headerEnd...]
        try FileSystem.writeAtomically(damaged, to: indexPath)
        #expect(collection.quickCleanStatus() == nil)
        let status = try await collection.status(remote: nil)
        #expect(status.isClean && status.recordCount == 2)
    }

    @Test(arguments: ["delete", "add", "modify", "invalid", "manifest"])
    func anyChangeFallsBackToTheFullComparison(change: String) async throws {
        let (scratch, root, collection) = try await synced()
        defer { withExtendedLifetime(scratch) {} }
        switch change {
        case "delete": try FileManager.default.removeItem(atPath: root + "/dune.json")
        case "add": try Data(#"{"id": "new", "title": "t", "author": "a", "genre": "g"}"#.utf8).write(to: URL(fileURLWithPath: root + "/new.json"))
        case "modify": try Data(#"{"id": "dune", "title": "t", "author": "a", "genre": "g"}"#.utf8).write(to: URL(fileURLWithPath: root + "/dune.json"))
        case "invalid": try Data("{".utf8).write(to: URL(fileURLWithPath: root + "/dune.json"))
        default:
            var manifest = try collection.manifestFile.load()
            manifest.entries[try RecordID("dune")] = BaseEntry(hash: "sha256:00", revision: "r")
            try FileSystem.writeAtomically(manifest.encoded(), to: root + "/.booksync/manifest.json")
        }
        #expect(collection.quickCleanStatus() == nil, "\(change)")
        let status = try await collection.status(remote: nil)
        #expect(!status.isClean, "\(change)")
    }
}
