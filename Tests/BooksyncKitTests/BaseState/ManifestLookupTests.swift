import Testing
import BooksyncCore
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit

/// Binary search in a canonical manifest against the manifest read whole:
/// every id found with its exact entry, ids between, before and after them
/// absent, across sizes that put the search on every kind of boundary; and a
/// manifest not as booksync writes it is never searched.
@Suite struct ManifestLookupTests {
    static func id(_ i: Int) -> String {
        // Mixed lengths, a character JSON escapes, and characters past ASCII, so byte order and line lengths vary.
        ["b\(i)", "é\(i * 7)", "x\"\(i)", String(repeating: "z", count: 1 + i % 200) + "\(i)"][i % 4]
    }

    @Test(arguments: [0, 1, 2, 3, 17, 1_000])
    func everyIDIsFoundAndNothingElse(count: Int) throws {
        let scratch = try ScratchDirectory()
        var entries: [RecordID: BaseEntry] = [:]
        for i in 0..<count {
            entries[try RecordID(Self.id(i))] = BaseEntry(hash: ContentHash(text: "sha256:" + String(repeating: "\(i % 10)", count: 64)),
                                                          revision: "2024-01-01T00:00:00.\(100_000 + i)Z")
        }
        let path = scratch.path + "/manifest.json"
        try FileSystem.writeAtomically(Manifest(entries: entries).encoded(), to: path)
        let lookup = try #require(ManifestLookup(path: path))
        for (id, entry) in entries { #expect(lookup.find(id) == .entry(entry), "\(id)") }
        for absent in ["", "a", "b", "b1x", "zzzz", "\u{10FFFF}", "é", "x\""] where !absent.isEmpty {
            let id = try RecordID(absent)
            #expect(lookup.find(id) == (entries[id].map { .entry($0) } ?? .absent), "\(absent)")
        }
    }

    @Test(arguments: [
        "{\"version\": 1, \"records\": {\"a\": {\"hash\": \"sha256:00\", \"revision\": \"r\"}}}",  // one line
        "{\n  \"version\": 1,\n  \"records\": {\n    \"a\": {\"hash\": \"sha256:00\", \"revision\": \"r\"}\n  }\n}",  // no final newline
    ])
    func aManifestNotAsBooksyncWritesItIsNotSearched(text: String) throws {
        let scratch = try ScratchDirectory()
        try scratch.write("manifest.json", text)
        #expect(ManifestLookup(path: scratch.path + "/manifest.json") == nil)
    }

    /// Lines as booksync writes them, but not sorted (edited by hand): the
    /// manifest reads, and is not taken as searchable.
    @Test func aManifestOutOfOrderIsNotSearchable() throws {
        let scratch = try ScratchDirectory()
        let collection = try CollectionDirectory.open(searchingFrom: try scratch.copyFixture("sample"))
        var canonical = false
        let manifest = try collection.manifestFile.load(canonical: &canonical)
        #expect(canonical)
        var lines = String(decoding: manifest.encoded(), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let records = lines.indices.filter { lines[$0].hasPrefix("    \"") }
        let reordered = records.reversed().map { lines[$0].hasSuffix(",") ? String(lines[$0].dropLast()) : lines[$0] }
        for (k, index) in records.enumerated() { lines[index] = reordered[k] + (k < records.count - 1 ? "," : "") }
        try FileSystem.writeAtomically(Array(lines.joined(separator: "\n").utf8), to: collection.paths.manifest)
        let reread = try collection.manifestFile.load(canonical: &canonical)
        #expect(reread.entries == manifest.entries)
        #expect(!canonical)
    }
}
