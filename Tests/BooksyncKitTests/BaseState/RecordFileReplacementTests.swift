import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// What pull writes over a record file keeps the file's `$schema` hint first,
/// learnt from the file the guarded swap displaces (no read beforehand).
@Suite struct RecordFileReplacementTests {
    static let rules = RecordRules()
    static let id = try! RecordID("dune")
    static let fields: Fields = ["id": .string("dune"), "title": .string("Dune"), "author": .string("FH"), "genre": .string("sf")]

    @Test(arguments: [
        (nil, nil),
        (#"{"id": "dune", "title": "Old", "author": "FH", "genre": "sf"}"#, nil),
        (#"{"title": "Old", "$schema": "./.booksync/record.schema.json", "id": "dune", "author": "FH", "genre": "sf"}"#, "./.booksync/record.schema.json"),
        (#"{"\u0024schema": "https://example.com/s.json", "id": "dune", "title": "Old", "author": "FH", "genre": "sf"}"#, "https://example.com/s.json"),
    ] as [(String?, String?)])
    func theDisplacedFilesHintIsKept(before: String?, hint: String?) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/dune.json"
        if let before { try scratch.write("dune.json", before) }
        #expect(try Self.rules.replaceFile(path, id: Self.id, with: Self.fields, ifCurrent: { _ in true }))
        #expect(try FileSystem.readFile(path) == Self.rules.fileBytes(Self.fields, id: Self.id, hint: hint))
    }

    @Test func nothingIsWrittenWhenTheFileIsNotTheExpectedOne() throws {
        let scratch = try ScratchDirectory()
        let text = #"{"$schema": "x", "id": "dune", "title": "Mine", "author": "FH", "genre": "sf"}"#
        try scratch.write("dune.json", text)
        #expect(try !Self.rules.replaceFile(scratch.path + "/dune.json", id: Self.id, with: Self.fields, ifCurrent: { _ in false }))
        #expect(try scratch.read("dune.json") == text)
    }
}
