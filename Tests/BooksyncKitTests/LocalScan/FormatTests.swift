import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

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
        #expect(try collection.manifestFile.load().entries[try RecordID("neuromancer")]?.hash == SHA256.contentHash(neuromancer))
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
