import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The base copies in `base/pack`: exact round trips, only the copy the
/// manifest names is believed, and a pack cut short by a crash loses nothing else.
@Suite struct BaseCopyStoreTests {
    /// Every demo book: all value types, non-ASCII ids and text.
    static func demoRecords(rules: RecordRules) throws -> [CanonicalRecord] {
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
        func record(_ title: String) throws -> CanonicalRecord {
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
        let packLines = pack.split(separator: BasePack.newline)
        #expect(packLines.count == records.count, "the header and one line per current record")
        let names = packLines.dropFirst().map { String(decoding: $0.prefix { $0 != BasePack.tab }, as: UTF8.self) }
        #expect(names == records.dropFirst().map(\.id.encodedName), "in file order, each once")
        #expect(BaseCopyStore.compactedSize(collection.baseCopies.packPath) == pack.count)
        for record in records.dropFirst() {
            #expect(collection.baseCopies.fields(record.id, hash: record.hash) == record.fields)
        }
    }

    /// Compaction keeps the copies of subcollection records (`dune/reviews/r1`):
    /// it once read each line's name back with the top-level file-name rule,
    /// which refuses a path, so every compaction dropped them and a later
    /// merge of a review saw no base (a conflict on every field).
    @Test func compactionKeepsTheCopiesOfSubcollectionRecords() throws {
        let scratch = try ScratchDirectory()
        let subcollections = Subcollections(entries: [Subcollections.Entry(path: "reviews"), Subcollections.Entry(path: "reviews/likes")])
        let collection = try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(
            remote: FirestoreTarget(project: "p", collectionPath: "books"), subcollections: subcollections))
        let rules = collection.rules
        var records: [CanonicalRecord] = []
        for raw in ["dune", "dune/reviews/r1", "cfg.json/reviews/r.json", "a b/reviews/%2F", "dune/reviews/r1/likes/l1"] {
            let id = try RecordID(path: raw, subcollections: subcollections)
            let fields: Fields = ["id": .string(id.documentID), "title": .string("T " + raw), "author": .string("A"), "genre": .string("g")]
            records.append(try rules.load(rules.canonicalBytes(fields, id: id), id: id).get())
        }
        var manifest = Manifest()
        for record in records { manifest.entries[record.id] = BaseEntry(hash: record.hash, revision: "r") }
        let lines = records.flatMap { BasePack.line(for: $0) }
        try collection.baseCopies.append(lines)
        for _ in 0..<(2 * BaseCopyStore.compactionSlack / lines.count + 3) { try collection.baseCopies.append(lines) }
        try collection.baseCopies.compactIfGrown(manifest: manifest)
        let pack = try Array(Data(contentsOf: URL(fileURLWithPath: collection.baseCopies.packPath)))
        #expect(pack.count < BaseCopyStore.compactionSlack, "compacted")
        let names = pack.split(separator: BasePack.newline).dropFirst().map { String(decoding: $0.prefix { $0 != BasePack.tab }, as: UTF8.self) }
        #expect(names == records.map(\.id.encodedName), "every record's copy kept, once")
        for record in records {
            #expect(collection.baseCopies.fields(record.id, hash: record.hash) == record.fields, "\(record.id)")
        }
    }

    /// Ids that differ only by Unicode normalization (or by bytes JSON
    /// escapes) have lines of their own, and each finds its own copy, even
    /// with the same content hash (no id field in the document).
    @Test(arguments: [["caf\u{E9}", "cafe\u{301}"], ["a\"b", "a\\b"], ["\u{212B}ngstrom", "\u{C5}ngstrom", "A\u{30A}ngstrom"]])
    func twinIdsFindTheirOwnCopies(ids: [String]) throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.store(in: scratch)
        let rules = collection.rules
        var records: [CanonicalRecord] = []
        for raw in ids {
            let record = CanonicalRecord(id: try RecordID(raw), fields: ["id": .string(raw), "title": .string("T " + raw), "author": .string("A"), "genre": .string("g")],
                                leadingKeys: rules.schema.leadingKeys)
            records.append(record)
            try collection.baseCopies.append(BasePack.line(for: record))
        }
        for record in records {
            #expect(collection.baseCopies.fields(record.id, hash: record.hash) == record.fields, "\(record.id)")
            for other in records where other.id != record.id {
                #expect(collection.baseCopies.fields(other.id, hash: record.hash) == nil, "\(other.id) must not take \(record.id)'s copy")
            }
        }
    }

    /// A copy longer than the first read of a lookup (16 KiB) and than an
    /// ordinary state-file line (64 KiB) is found, and compaction keeps it
    /// whole. (Lines longer than a 4 MiB block: `FileStreamsTests`.)
    @Test func aCopyLongerThanABlockIsFoundAndKept() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.store(in: scratch)
        let rules = collection.rules
        let id = try RecordID("long")
        let long = try rules.load(Array(#"{"id": "long", "title": "\#(String(repeating: #"\u0001"#, count: 20_000))", "author": "A", "genre": "g"}"#.utf8), id: id).get()
        #expect(BasePack.line(for: long).count > 1 << 16, "longer than an ordinary line")
        let short = try rules.load(Array(#"{"id": "short", "title": "S", "author": "A", "genre": "g"}"#.utf8), id: try RecordID("short")).get()
        try collection.baseCopies.append(BasePack.line(for: short))  // the pack's first size: small
        try collection.baseCopies.append(BasePack.line(for: long) + BasePack.line(for: short))
        // Stale duplicates enough to make the pack worth compacting.
        let duplicates = Array(repeating: BasePack.line(for: short), count: BaseCopyStore.compactionSlack / 50).flatMap { $0 }
        try collection.baseCopies.append(duplicates)
        #expect(collection.baseCopies.fields(id, hash: long.hash) == long.fields)
        #expect(collection.baseCopies.fields(short.id, hash: short.hash) == short.fields)
        var manifest = Manifest()
        for record in [long, short] { manifest.entries[record.id] = BaseEntry(hash: record.hash, revision: "r") }
        try collection.baseCopies.compactIfGrown(manifest: manifest)
        let pack = try Array(Data(contentsOf: URL(fileURLWithPath: collection.baseCopies.packPath)))
        #expect(pack.split(separator: BasePack.newline).count == 3, "header, short once, long once")
        #expect(collection.baseCopies.fields(id, hash: long.hash) == long.fields)
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
