import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@testable import BooksyncKit
#if canImport(Glibc)
import Glibc
#endif

@Suite struct LocalStatusTests {
    static func id(_ s: String) -> RecordID { try! RecordID(s) }

    @Test func sampleCollectionShowsEveryLocalClass() async throws {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("sample")
        let collection = try CollectionDirectory.open(searchingFrom: root + "/notes")
        #expect(collection.paths.root == root)
        let status = try await collection.status(remote: nil)
        #expect(status.records.map(\.id.rawValue) == ["broken", "foundation", "hyperion", "nogenre", "solaris"])
        #expect(status.records.map(\.state) == [
            .invalidLocal([RecordDiagnostic(position: SourcePosition(line: 4, column: 3), message: "expected ',' or '}'")]),
            .localChange(.modified), .localChange(.added),
            .invalidLocal([
                RecordDiagnostic(message: "field 'author' must be string, found integer"),
                RecordDiagnostic(message: "missing required field 'genre' (string)"),
            ]),
            .localChange(.deleted),
        ])
        #expect(status.unusableFiles.map(\.fileName) == ["bad%zz.json"])
        // neuromancer.json is minified by hand: same values, so not a change; README.md and notes/ are ignored.
        #expect(!status.records.contains { $0.id.rawValue == "neuromancer" || $0.id.rawValue == "dune" })
        #expect(status.recordCount == 6)
        #expect(status.needsAttention)
    }

    @Test func notACollection() throws {
        let scratch = try ScratchDirectory()
        #expect(throws: BooksyncError.notACollection(scratch.path)) { try CollectionDirectory.open(searchingFrom: scratch.path) }
    }

    @Test func unchangedTreeIsNotReadAgain() async throws {
        let scratch = try ScratchDirectory()
        let collection = try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
        for i in 0..<600 {  // more than one ParallelMap chunk
            try scratch.write("b\(i).json", #"{"id": "b\#(i)", "title": "T", "author": "A", "genre": "g", "n": \#(i)}"#)
        }
        try await Task.sleep(for: .milliseconds(250))  // older than the racy window
        let first = try await collection.status(remote: nil)
        #expect(first.filesRead == 600)
        #expect(first.records.count == 600)
        let second = try await collection.status(remote: nil)
        #expect(second.filesRead == 0)
        #expect(second.records.map(\.id) == first.records.map(\.id))

        try scratch.write("b7.json", #"{"id": "b7", "title": "T", "author": "A", "genre": "g", "n": 8}"#)
        try FileManager.default.removeItem(atPath: scratch.path + "/b8.json")
        let third = try await collection.status(remote: nil)
        #expect(third.filesRead == 1)
        #expect(third.recordCount == 599)
    }

    @Test func racilyCleanFileIsRehashedUntilItIsOld() async throws {
        let scratch = try ScratchDirectory()
        let collection = try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
        let file = scratch.path + "/r.json"
        try scratch.write("r.json", #"{"id": "r", "title": "1", "author": "A", "genre": "g"}"#)
        // Scanned in the same moment it was written: its entry is racy.
        let first = try await collection.scanLocal()
        #expect(first.filesRead == 1)
        // Same size, and the old mtime restored: the ctime or the racy rule must notice it
        // (which one depends on the clock tick; the rule alone is tested in racyRuleComparesAgainstScanStart).
        let mtime = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as! Date
        try scratch.write("r.json", #"{"id": "r", "title": "2", "author": "A", "genre": "g"}"#)
        try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: file)
        let second = try await collection.scanLocal()
        #expect(second.filesRead == 1)
        let expected = RecordRules().load(Array(#"{"id": "r", "title": "2", "author": "A", "genre": "g"}"#.utf8), id: try RecordID("r"))
        guard case .success(let record) = expected else { Issue.record("fixture record invalid"); return }
        #expect(second.files[try RecordID("r")] == .valid(hash: record.hash))
        // Once the file is older than the window, the rewritten index vouches for it.
        try await Task.sleep(for: .milliseconds(250))
        _ = try await collection.scanLocal()
        let settled = try await collection.scanLocal()
        #expect(settled.filesRead == 0)
    }

    @Test func wholeSecondTimesGetAWiderRacyMargin() {
        // A file system that keeps whole seconds: N.00 may stand for any moment up to N.99.
        let start: Int64 = 1_000_000_270_000_000  // N.27 s
        #expect(StatCache.isRacy(mtime: 1_000_000_000_000_000, ctime: 1_000_000_000_000_000, scanStartedAt: start))
        #expect(StatCache.isRacy(mtime: 998_000_000_000_000, ctime: 998_000_000_000_000, scanStartedAt: start) == false)
        #expect(!StatCache.isRacy(mtime: 1_000_000_000_000_001, ctime: 1_000_000_000_000_001, scanStartedAt: start))
    }

    @Test func symlinkedCollectionSeesNewFiles() async throws {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("clean")
        let link = scratch.path + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: root)
        try await Task.sleep(for: .milliseconds(250))
        let collection = try CollectionDirectory.open(searchingFrom: link)
        #expect(try await collection.status(remote: nil).isClean)
        try await Task.sleep(for: .milliseconds(250))
        #expect(try await collection.status(remote: nil).isClean)
        try scratch.write("clean/new.json", #"{"id": "new", "title": "t", "author": "a", "genre": "g"}"#)
        let status = try await collection.status(remote: nil)
        #expect(status.records.map(\.state) == [.localChange(.added)])
    }

    @Test func racyRuleComparesAgainstScanStart() {
        let entry = { (age: Int64) in StatCache.Entry(size: 1, mtime: 1_000_000_000_000 - age, ctime: 1_000_000_000_000 - age, inode: 1, hash: "sha256:x") }
        let cache = StatCache(scanStartedAt: 1_000_000_000_000, fingerprint: "f", entries: [:])
        #expect(cache.isRacy(entry(0)))
        #expect(cache.isRacy(entry(50_000_000)))
        #expect(!cache.isRacy(entry(200_000_000)))
    }

    @Test func changingTheSchemaInvalidatesTheCache() async throws {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("sample")
        try await Task.sleep(for: .milliseconds(250))
        _ = try await CollectionDirectory.open(searchingFrom: root).status(remote: nil)
        let configPath = root + "/.booksync/config.json"
        let config = try String(contentsOfFile: configPath, encoding: .utf8)
        try config.replacingOccurrences(of: "\"genre\"", with: "\"year\"").write(toFile: configPath, atomically: true, encoding: .utf8)
        let status = try await CollectionDirectory.open(searchingFrom: root).status(remote: nil)
        let hyperion = status.records.first { $0.id.rawValue == "hyperion" }
        #expect(hyperion?.state == .invalidLocal([RecordDiagnostic(message: "missing required field 'year' (string)")]))
    }

    @Test func coldScanTrustsBaseHashesOnlyUnderTheSameConfig() async throws {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("clean")
        var collection = try CollectionDirectory.open(searchingFrom: root)
        var manifest = try collection.loadManifest()
        manifest.configFingerprint = collection.configFingerprint
        try FileSystem.writeAtomically(manifest.encoded(), to: root + "/.booksync/manifest.json")
        #expect(try await collection.status(remote: nil).isClean)
        // The schema changes in a commit; a fresh clone has no index.
        try FileManager.default.removeItem(atPath: root + "/.booksync/index")
        let configPath = root + "/.booksync/config.json"
        let config = try String(contentsOfFile: configPath, encoding: .utf8)
        try config.replacingOccurrences(of: "\"genre\"", with: "\"year\"").write(toFile: configPath, atomically: true, encoding: .utf8)
        collection = try CollectionDirectory.open(searchingFrom: root)
        let status = try await collection.status(remote: nil)
        #expect(status.records.count == 2)
        #expect(status.records.allSatisfy { if case .invalidLocal = $0.state { true } else { false } })
    }

    @Test func damagedManifestIsReportedWithPosition() async throws {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("sample")
        try "{\n  \"version\": 1,\n  \"records\": {\n    \"dune\": {\"hash\": \"sha256:x\"\n}".write(toFile: root + "/.booksync/manifest.json", atomically: true, encoding: .utf8)
        await #expect(throws: BooksyncError.damagedStateFile(path: root + "/.booksync/manifest.json", StateFileError(position: SourcePosition(line: 5, column: 2), message: "unexpected end of file; expected ',' or '}'"))) {
            _ = try await CollectionDirectory.open(searchingFrom: root).status(remote: nil)
        }
    }
}

@Suite struct InitTests {
    @Test func createsStateFilesAndRefusesTwice() throws {
        let scratch = try ScratchDirectory()
        let config = CollectionConfig(remote: FirestoreTarget(project: "demo", collectionPath: "users/u1/books"))
        let collection = try CollectionDirectory.initialize(at: scratch.path, config: config)
        #expect(collection.config == config)
        for file in [".booksync/config.json", ".booksync/manifest.json", ".booksync/.gitignore"] {
            #expect(FileManager.default.fileExists(atPath: scratch.path + "/" + file), "\(file)")
        }
        #expect(try scratch.read(".booksync/.gitignore").contains("/index"))
        #expect(throws: BooksyncError.alreadyInitialized(scratch.path)) { try CollectionDirectory.initialize(at: scratch.path, config: config) }
    }

    @Test func rejectsADocumentPathAsCollection() throws {
        let scratch = try ScratchDirectory()
        let config = CollectionConfig(remote: FirestoreTarget(project: "demo", collectionPath: "users/u1"))
        #expect(throws: BooksyncError.self) { try CollectionDirectory.initialize(at: scratch.path, config: config) }
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/.booksync"))
    }
}

@Suite struct FormatTests {
    @Test func formattingTwiceIsByteIdenticalAndLeavesBrokenFilesAlone() async throws {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("sample")
        let collection = try CollectionDirectory.open(searchingFrom: root)
        let broken = try Data(contentsOf: URL(fileURLWithPath: root + "/broken.json"))
        let first = try await collection.format([], checkOnly: false)
        let outcomes = Dictionary(uniqueKeysWithValues: first.map { (URL(fileURLWithPath: $0.path).lastPathComponent, $0.outcome) })
        #expect(outcomes["neuromancer.json"] == .reformatted)
        #expect(outcomes["dune.json"] == .alreadyCanonical)
        #expect(outcomes["broken.json"] == .failed(RecordDiagnostic(position: SourcePosition(line: 4, column: 3), message: "expected ',' or '}'")))
        let afterFirst = try snapshot(root)
        let second = try await collection.format([], checkOnly: false)
        #expect(second.allSatisfy { $0.outcome != .reformatted })
        #expect(try snapshot(root) == afterFirst)
        #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/broken.json")) == broken)
        // Canonical bytes hash to the manifest's base hash: sha256sum of the file is the content hash.
        let neuromancer = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/neuromancer.json")))
        #expect(try collection.loadManifest().entries[try RecordID("neuromancer")]?.hash == SHA256.contentHash(neuromancer))
        #expect(try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.contains("booksync-tmp") }.isEmpty)
    }

    @Test func checkChangesNothing() async throws {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("sample")
        let before = try snapshot(root)
        let reports = try await CollectionDirectory.open(searchingFrom: root).format([], checkOnly: true)
        #expect(reports.filter { $0.outcome == .needsFormatting }.map { URL(fileURLWithPath: $0.path).lastPathComponent } == ["bad%zz.json", "neuromancer.json"])
        #expect(try snapshot(root) == before)
    }

    func snapshot(_ root: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: root) where name.hasSuffix(".json") {
            result[name] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + name))
        }
        return result
    }
}

@Suite struct FileSystemTests {
    @Test func atomicWriteReplacesAndLeavesNoTemporaryFile() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/a.json"
        try FileSystem.writeAtomically(Array("old".utf8), to: path)
        try FileSystem.writeAtomically(Array("new content".utf8), to: path, durable: true)
        #expect(try FileSystem.readFile(path) == Array("new content".utf8))
        #expect(try FileSystem.listDirectory(scratch.path) == ["a.json"])
    }

    @Test func writeIntoMissingDirectoryFailsWithPath() {
        #expect(throws: FileSystemError.self) { try FileSystem.writeAtomically([1], to: "/nonexistent-dir/x.json") }
        do { try FileSystem.writeAtomically([1], to: "/nonexistent-dir/x.json") } catch {
            #expect(error.description == "/nonexistent-dir/x.json: cannot create a temporary file: No such file or directory")
        }
    }
}

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

@Suite struct FileModeTests {
    @Test func atomicReplacementKeepsTheFileMode() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/private.json"
        try FileSystem.writeAtomically(Array("a".utf8), to: path)
        chmod(path, 0o600)
        try FileSystem.writeAtomically(Array("b".utf8), to: path)
        #expect(try FileSystem.stat(path).mode == 0o600)
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
                StatCache.verifiesClean(indexAt: indexPath, fingerprint: collection.configFingerprint, baseStamp: collection.manifestStamp(),
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
            var manifest = try collection.loadManifest()
            manifest.entries[try RecordID("dune")] = BaseEntry(hash: "sha256:00", revision: "r")
            try FileSystem.writeAtomically(manifest.encoded(), to: root + "/.booksync/manifest.json")
        }
        #expect(collection.quickCleanStatus() == nil, "\(change)")
        let status = try await collection.status(remote: nil)
        #expect(!status.isClean, "\(change)")
    }
}

/// A scan without hashes (push's) classifies every record as the full scan
/// does, and push walks and chunks exactly the records that differ, in id order.
@Suite struct LeanScanTests {
    static func id(_ s: String) -> RecordID { try! RecordID(s) }

    /// The sample collection (one of each local class) plus added records
    /// that sort before, between and after the others.
    static func collection() throws -> (ScratchDirectory, CollectionDirectory) {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("sample")
        for name in ["aaa", "g", "zzz"] {
            try scratch.write("sample/\(name).json", #"{"id": "\#(name)", "title": "T", "author": "A", "genre": "g"}"#)
        }
        return (scratch, try CollectionDirectory.open(searchingFrom: root))
    }

    @Test func aScanWithoutHashesClassifiesAsTheFullScan() async throws {
        let (scratch, collection) = try Self.collection()
        defer { withExtendedLifetime(scratch) {} }
        let manifest = try collection.loadManifest()
        let full = try await collection.scanLocal(base: manifest)
        let lean = try await collection.scanLocal(base: manifest, keepHashes: false)
        #expect(Set(lean.files.keys) == Set(full.files.keys))
        #expect(lean.files.count == full.files.count && Array(lean.files.keys).count == full.files.count)
        #expect(lean.files[Self.id("hyperion")] == .valid(hash: LocalFiles.hashNotKept))
        #expect(lean.files[Self.id("foundation")] == .valid(hash: LocalFiles.hashNotKept))
        #expect(lean.files[Self.id("solaris")] == nil && lean.files[Self.id("nobody")] == nil)
        var reads: [RecordID: LocalRead] = [:]
        for id in Set(full.files.keys).union(manifest.entries.keys).union([Self.id("nobody")]) {
            let expected = collection.classifiedRecord(id, scan: full, manifest: manifest, remote: nil, localReads: &reads)
            let got = collection.classifiedRecord(id, scan: lean, manifest: manifest, remote: nil, localReads: &reads)
            #expect(got.state == expected.state, "\(id)")
        }
    }

    @Test(arguments: [1, 2, 4, 500])
    func pushWalksAndChunksTheDifferingRecordsInIDOrder(chunkSize: Int) async throws {
        let (scratch, collection) = try Self.collection()
        defer { withExtendedLifetime(scratch) {} }
        let manifest = try collection.loadManifest()
        let scan = try await collection.scanLocal(base: manifest, keepHashes: false)
        let candidates = DifferingRecords(scan: scan, manifest: manifest)
        var walked: [String] = []
        candidates.walk { id in
            walked.append(id.rawValue)
            return true
        }
        #expect(walked == ["aaa", "broken", "foundation", "g", "hyperion", "nogenre", "solaris", "zzz"])
        let plan = collection.planPush(candidates, scan: scan, manifest: manifest, chunkSize: chunkSize)
        let writes = ["aaa", "foundation", "g", "hyperion", "solaris", "zzz"]
        #expect(plan.steps == writes.count && plan.deletes == 1)
        // The dry run's report: every record acted on or reported, in id order.
        #expect(plan.events.map(\.id.rawValue) == walked)
        #expect(plan.events.filter { if case .invalidLocal = $0.kind { true } else { false } }.map(\.id.rawValue) == ["broken", "nogenre"])
        // Each chunk holds the next `chunkSize` writes.
        let chunks = plan.chunks.map { plan.steps(in: $0).map(\.id.rawValue) }
        #expect(chunks == stride(from: 0, to: writes.count, by: chunkSize).map { Array(writes[$0..<min($0 + chunkSize, writes.count)]) })
    }

    /// Lookups in a scan without hashes, while it runs (the added ids not yet
    /// sorted: the blocked-folder check asks then) and after: a base id is
    /// settled by its slot, never by searching the added ids.
    @Test func lookupsBeforeAndAfterTheScanEnds() {
        let hash = ContentHash(text: "sha256:" + String(repeating: "ab", count: 32))
        let base = ManifestEntries(Dictionary(uniqueKeysWithValues: (0..<300).map { (Self.id("b\($0)"), BaseEntry(hash: hash, revision: "r")) }))
        var files = LocalFiles(base: base, keepsHashes: false)
        for i in (0..<500).reversed() { files.set(Self.id("n\(i)"), .valid(hash: hash), baseSlot: nil, clean: false) }
        files.set(Self.id("b1"), .valid(hash: hash), baseSlot: base.slot(of: Self.id("b1")), clean: true)
        files.set(Self.id("b2"), .valid(hash: "sha256:other"), baseSlot: base.slot(of: Self.id("b2")), clean: false)
        for finished in [false, true] {
            if finished { files.finish() }
            #expect(files[Self.id("b0")] == nil && files[Self.id("b299")] == nil)
            #expect(files[Self.id("b1")] == .valid(hash: hash))
            #expect(files[Self.id("b2")] == .valid(hash: LocalFiles.hashNotKept))
            #expect(files[Self.id("n0")] == .valid(hash: LocalFiles.hashNotKept) && files[Self.id("n499")] != nil)
            #expect(files[Self.id("n500")] == nil)
            #expect(files.count == 502)
        }
        #expect(Array(files.added) == (0..<500).map { Self.id("n\($0)") }.sorted())
    }
}
