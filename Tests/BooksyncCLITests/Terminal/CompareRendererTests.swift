import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCLI
@_spi(Remote) @testable import BooksyncKit
@testable import BooksyncCore

/// `booksync compare`'s renderings of hostile records: ids, field names,
/// values and problems with pipes, backticks, HTML, newlines, bidi controls
/// and mentions, held against golden files in fixtures/compare/.
///
/// `BOOKSYNC_UPDATE_GOLDEN=1 swift test --filter CompareRendererTests`
/// rewrites them from the current behaviour; review the diff before committing.
@Suite struct CompareRendererTests {
    static let folder = Fixtures.root + "/compare"

    /// Everything a comparison can hold, written by someone hostile.
    static func hostile() throws -> ComparedTargets {
        let pipe = try RecordID("a|b`c`")
        let script = try RecordID("<script>alert(1)<script>")
        let bidi = try RecordID("invoice\u{202E}fdp.exe")
        let mention = try RecordID("@octocat #1 [x](javascript:alert)")
        var result = TargetComparison()
        result.onlyA = [pipe]
        result.onlyB = [mention]
        result.different = [
            TargetComparison.Difference(id: script, fields: [
                TargetComparison.Field(path: FieldPath(field: "line\nbreak|cell"), a: .string("x"), b: nil),
                TargetComparison.Field(path: FieldPath(field: "stats").appending("`rating`"), a: .integer(4), b: .integer(5)),
                TargetComparison.Field(path: FieldPath(field: "title"), a: .string("<img src=x onerror=alert(1)> | **bold**"),
                                       b: .string("line one\nline two\u{202E}\u{1B}[31m @admin")),
            ]),
        ]
        result.invalid = [
            TargetComparison.InvalidDocument(id: bidi, side: .b, problems: [RecordDiagnostic(message: "title: expected a string, found `1` | <b>")]),
        ]
        result.unusable = [TargetComparison.UnusableDocument(side: .a, document: UnusableRemoteDocument(name: "..", message: "'..' is not a record id"))]
        result.identical = 1_204
        result.readsA = TargetComparison.Reads(compared: 1_209, shown: 1)
        result.readsB = TargetComparison.Reads(compared: 1_207, shown: 0)
        return ComparedTargets(result: result,
                               a: .init(remote: "staging", place: "firestore demo/(default) books (emulator)", billedReads: 1_210),
                               b: .init(remote: "production", place: "firestore demo-prod/(default) books|`x`", billedReads: 1_207))
    }

    static func expect(_ actual: String, golden name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = folder + "/" + name
        if ProcessInfo.processInfo.environment["BOOKSYNC_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try actual.write(toFile: path, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOfFile: path, encoding: .utf8)
        #expect(actual == expected, "\(name) differs from its golden file", sourceLocation: sourceLocation)
    }

    @Test func markdownEscapesEveryOutsideString() throws {
        let markdown = CompareRenderer.markdown(try Self.hostile())
        try Self.expect(markdown, golden: "hostile.md")
        // Whatever the golden says: nothing a record holds can break out.
        #expect(!markdown.unicodeScalars.contains { MarkdownText.isHidden($0) && $0 != "\n" })
        #expect(!markdown.contains("<script>") && !markdown.contains("<img") && !markdown.contains("](javascript"))
        // Every @ stands alone in a code span: GitHub links mentions in rendered text.
        #expect(markdown.replacingOccurrences(of: "`@`", with: "").contains("@") == false, "every @ is in a code span")
        let rows = markdown.split(separator: "\n").filter { $0.hasPrefix("| ") }
        #expect(rows.count == 2 + 3 + 3 + 1, "heading, rule, a row per differing field, per record on one side or invalid, the unusable name")
        for row in rows {
            // Every row has the five cells: no pipe in a value ended one.
            let cells = row.replacingOccurrences(of: "\\|", with: "").split(separator: "|", omittingEmptySubsequences: false)
            #expect(cells.count == 7, "\(row)")
        }
        #expect(markdown.contains("read 1,209 documents from staging and 1,207 from production: 2,416 billed reads, plus 1 to show the differences"))
    }

    @Test func linesEscapeEveryOutsideString() throws {
        let lines = CompareRenderer.lines(try Self.hostile(), color: false, quiet: false)
        let text = lines.map(\.rendered).joined(separator: "\n") + "\n"
        try Self.expect(text, golden: "hostile.txt")
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x202E || $0.value == 0x1B })
        #expect(lines.last?.rendered == "read 1,209 documents from staging and 1,207 from production: 2,416 billed reads, plus 1 to show the differences")
    }

    @Test func theSameTargetsSaySoAndShowNoTable() throws {
        var same = try Self.hostile()
        same = ComparedTargets(result: { var r = TargetComparison(); r.identical = 3; r.readsA.compared = 3; r.readsB.compared = 3; return r }(),
                               a: same.a, b: .init(remote: "production", place: "p", billedReads: 3))
        let markdown = CompareRenderer.markdown(same)
        #expect(markdown.contains("staging and production hold the same 3 records\n"))
        #expect(!markdown.contains("| Record"))
        let lines = CompareRenderer.lines(same, color: false, quiet: false).map(\.rendered)
        #expect(lines == ["staging and production hold the same 3 records",
                          "read 1,210 documents from staging and 3 from production: 1,213 billed reads"])
    }

    /// The JSON document: version 1 first, each part where the Commands article says.
    @Test func jsonDocument() throws {
        let document = CompareRenderer.json(try Self.hostile())
        #expect(document["version"] == .integer(1) && document["same"] == .bool(false) && document["identical"] == .integer(1_204))
        #expect(document["billedReads"] == .integer(2_417))
        guard case .map(let a)? = document["a"], case .array(let different)? = document["different"],
              case .map(let first)? = different.first, case .array(let fields)? = first["fields"] else {
            Issue.record("unexpected shape: \(document)")
            return
        }
        #expect(a["remote"] == .string("staging") && a["billedReads"] == .integer(1_210))
        #expect(a["reads"] == .map(["compared": .integer(1_209), "shown": .integer(1)]))
        #expect(fields.count == 3)
        #expect(fields.first == .map(["name": .string("`line\nbreak|cell`"), "path": .array([.string("line\nbreak|cell")]), "a": .string("x")]))
        #expect(document["onlyA"] == .array([.map(["id": .string("a|b`c`"), "file": .string("a%7Cb%60c%60.json")])]))
        #expect(document["unusable"] == .array([.map(["side": .string("a"), "id": .string(".."), "problem": .string("'..' is not a record id")])]))
        let text = JSONDocuments.text(document).rendered
        #expect(text.hasPrefix("{\n  \"version\": 1,"), "\(text)")
    }
}
