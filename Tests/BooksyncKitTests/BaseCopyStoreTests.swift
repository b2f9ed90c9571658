import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@testable import BooksyncKit

/// The base copies in `base/pack`: exact round trips, only the copy the
/// manifest names is believed, and a pack cut short by a crash loses nothing else.
@Suite struct BaseCopyStoreTests {
    /// Every demo book: all value types, non-ASCII ids and text.
    static func demoRecords(rules: RecordRules) throws -> [Record] {
        let directory = Fixtures.root + "/demo/books"
        return try FileManager.default.contentsOfDirectory(atPath: directory).sorted().compactMap { name in
            guard let id = try RecordID.fromFileName(name) else { return nil }
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
            return try rules.load(bytes, id: id).get()
        }
    }

    static func store(in scratch: ScratchDirectory) throws -> CollectionDirectory {
        try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
    }

    @Test func everyValueTypeRoundTripsThroughThePack() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.store(in: scratch)
        let records = try Self.demoRecords(rules: collection.rules)
        #expect(records.count == 30)
        try collection.baseCopies.append(records.flatMap { BasePack.line(for: $0) })
        for record in records {
            #expect(collection.baseCopies.fields(record.id, hash: record.hash) == record.fields, "\(record.id)")
        }
    }

    @Test func onlyTheCopyWithTheManifestHashIsBelieved() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.store(in: scratch)
        let rules = collection.rules
        let id = try RecordID("dune")
        func record(_ title: String) throws -> Record {
            try rules.load(Array(#"{"id": "dune", "title": "\#(title)", "author": "Herbert", "genre": "sf"}"#.utf8), id: id).get()
        }
        let old = try record("Dune")
        let new = try record("Dune Messiah")
        try collection.baseCopies.append(BasePack.line(for: old))
        try collection.baseCopies.append(BasePack.line(for: new))
        #expect(collection.baseCopies.fields(id, hash: old.hash)?["title"] == .string("Dune"))
        #expect(collection.baseCopies.fields(id, hash: new.hash)?["title"] == .string("Dune Messiah"))
        #expect(collection.baseCopies.fields(id, hash: "sha256:0000") == nil)
        #expect(collection.baseCopies.fields(id, hash: nil) == nil)

        // A line whose record does not hash to its stated hash (edited by hand) is not believed.
        let forged = Array("dune\t\(old.hash)\t{\"id\": \"dune\", \"title\": \"Forged\", \"author\": \"Herbert\", \"genre\": \"sf\"}\n".utf8)
        let other = try RecordID("other")
        try collection.baseCopies.append(Array(String(decoding: forged, as: UTF8.self).replacingOccurrences(of: "dune", with: "other").utf8))
        #expect(collection.baseCopies.fields(other, hash: old.hash) == nil)

        // A base file of an earlier version is read when its content has the hash.
        try scratch.write(".booksync/base/other.json", String(decoding: rules.canonicalBytes(old.fields), as: UTF8.self))
        #expect(collection.baseCopies.fields(other, hash: SHA256.contentHash(rules.canonicalBytes(old.fields))) != nil)
        #expect(collection.baseCopies.fields(other, hash: new.hash) == nil)
    }

    @Test func aLineCutShortIsIgnoredAndTheNextAppendStartsAfreshLine() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.store(in: scratch)
        let records = try Self.demoRecords(rules: collection.rules)
        try collection.baseCopies.append(BasePack.line(for: records[0]))
        // A killed append: half a line, no newline.
        let half = BasePack.line(for: records[1]).prefix(40)
        let handle = try #require(FileHandle(forWritingAtPath: collection.baseCopies.packPath))
        handle.seekToEndOfFile()
        handle.write(Data(half))
        try handle.close()
        #expect(collection.baseCopies.fields(records[1].id, hash: records[1].hash) == nil)
        try collection.baseCopies.append(BasePack.line(for: records[2]))
        #expect(collection.baseCopies.fields(records[0].id, hash: records[0].hash) == records[0].fields)
        #expect(collection.baseCopies.fields(records[2].id, hash: records[2].hash) == records[2].fields)
    }

    @Test func compactionKeepsExactlyTheCurrentCopiesOnceThePackHasGrown() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.store(in: scratch)
        let records = try Self.demoRecords(rules: collection.rules)
        var manifest = Manifest()
        for record in records { manifest.entries[record.id] = BaseEntry(hash: record.hash, revision: "r") }
        try collection.baseCopies.append(records.flatMap { BasePack.line(for: $0) })
        let fresh = try FileSystem.stat(collection.baseCopies.packPath).size
        try collection.baseCopies.compactIfGrown(manifest: manifest)
        #expect(try FileSystem.stat(collection.baseCopies.packPath).size == fresh, "a fresh pack is left alone")

        // Many stale copies: the same records appended again and again.
        let lines = records.flatMap { BasePack.line(for: $0) }
        for _ in 0..<(2 * BaseCopyStore.compactionSlack / lines.count + 3) { try collection.baseCopies.append(lines) }
        #expect(try FileSystem.stat(collection.baseCopies.packPath).size > Int64(BaseCopyStore.compactionSlack))
        manifest.entries[records[0].id] = nil  // forgotten since
        try collection.baseCopies.compactIfGrown(manifest: manifest)
        let pack = try Array(Data(contentsOf: URL(fileURLWithPath: collection.baseCopies.packPath)))
        let index = BasePack.index(pack)
        #expect(index.values.reduce(0) { $0 + $1.count } == records.count - 1)
        #expect(index[records[0].id.encodedName] == nil)
        #expect(BaseCopyStore.compactedSize(collection.baseCopies.packPath) == pack.count)
        for record in records.dropFirst() {
            #expect(collection.baseCopies.fields(record.id, hash: record.hash) == record.fields)
        }
    }

    /// Two branches that both synced both appended to the pack: git merges it
    /// without a conflict (union), and every copy of both sides is there.
    @Test func gitMergesPacksOfTwoBranches() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.store(in: scratch)
        let records = try Self.demoRecords(rules: collection.rules)
        try collection.baseCopies.append(BasePack.line(for: records[0]))
        #expect(try scratch.read(".booksync/base/.gitattributes") == BaseCopyStore.gitAttributes)
        func git(_ arguments: String...) -> Int32 {
            Subprocess.run(["git", "-C", scratch.path, "-c", "user.name=t", "-c", "user.email=t@t"] + arguments).status
        }
        #expect(git("init", "-q", "-b", "main") == 0)
        #expect(git("add", "-A") == 0)
        #expect(git("commit", "-qm", "base") == 0)
        #expect(git("checkout", "-qb", "other") == 0)
        try collection.baseCopies.append(BasePack.line(for: records[1]))
        #expect(git("commit", "-qam", "other") == 0)
        #expect(git("checkout", "-q", "main") == 0)
        try collection.baseCopies.append(BasePack.line(for: records[2]))
        #expect(git("commit", "-qam", "main") == 0)
        #expect(git("merge", "-q", "--no-edit", "other") == 0)
        for record in records.prefix(3) {
            #expect(collection.baseCopies.fields(record.id, hash: record.hash) == record.fields)
        }
    }
}
