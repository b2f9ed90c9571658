import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

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
        let first = try LocalScanner(for: collection, base: nil).scan()
        #expect(first.filesRead == 1)
        // Same size, and the old mtime restored: the ctime or the racy rule must notice it
        // (which one depends on the clock tick; the rule alone is tested in racyRuleComparesAgainstScanStart).
        let mtime = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as! Date
        try scratch.write("r.json", #"{"id": "r", "title": "2", "author": "A", "genre": "g"}"#)
        try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: file)
        let second = try LocalScanner(for: collection, base: nil).scan()
        #expect(second.filesRead == 1)
        let expected = RecordRules().load(Array(#"{"id": "r", "title": "2", "author": "A", "genre": "g"}"#.utf8), id: try RecordID("r"))
        guard case .success(let record) = expected else { Issue.record("fixture record invalid"); return }
        #expect(second.files[try RecordID("r")] == .valid(hash: record.hash))
        // Once the file is older than the window, the rewritten index vouches for it.
        try await Task.sleep(for: .milliseconds(250))
        _ = try LocalScanner(for: collection, base: nil).scan()
        let settled = try LocalScanner(for: collection, base: nil).scan()
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
        var manifest = try collection.manifestFile.load()
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
