import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCLI
@testable import BooksyncCore

/// The Markdown of `plan --markdown` and `diff --markdown`, which a pull
/// request shows to a reviewer: record ids, field names and values come from
/// whoever edited the files or the documents, so none of them may end a
/// cell, open a code span, inject HTML, mention someone, hide text behind a
/// bidirectional override, or reach a terminal as a control character.
@Suite struct MarkdownRenderingTests {
    /// Text an attacker controls, one kind of markup each.
    static let hostile: [String] = [
        "a | b", "`code`", "```fence", "<script>alert(1)</script>", "line\nbreak", "cr\rhere", "tab\there",
        "\u{202E}txt.exe", "a\u{2066}b\u{2069}", "zero\u{200B}width", "@octocat", "#1", "[link](http://x)", "![img](http://x/i.png)",
        "*bold* _it_", "&amp;", "\\|", "\u{1B}[31mred", "\u{7F}\u{85}", "line\u{2028}sep", "~~strike~~", ":+1:",
        "hi\u{E0041}\u{E0042}", "soft\u{AD}hy", "\u{3164}filler", "\u{2800}braille",
    ]

    @Test(arguments: hostile) func escapedTextHasNoMarkupLeft(_ text: String) {
        let escaped = MarkdownText.escape(text)
        for scalar in escaped.unicodeScalars {
            #expect(!MarkdownText.isHidden(scalar), "\(escaped.debugDescription) keeps U+\(String(scalar.value, radix: 16))")
            #expect(!["<", ">"].contains(scalar), "\(escaped.debugDescription) keeps raw HTML")
        }
        // Every ASCII punctuation character is preceded by a backslash, except in the entities made for <, > and &.
        // …and except @ and #, which stand alone in a code span.
        let scalars = Array(escaped.replacingOccurrences(of: "&lt;", with: "").replacingOccurrences(of: "&gt;", with: "")
            .replacingOccurrences(of: "&amp;", with: "").replacingOccurrences(of: "`@`", with: "")
            .replacingOccurrences(of: "`#`", with: "").unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\\" {
                index += 2
                continue
            }
            #expect(!"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~".unicodeScalars.contains(scalar),
                    "\(escaped.debugDescription) has an unescaped \(scalar)")
            index += 1
        }
    }

    /// Two long values that differ only past the cut are shown from shortly
    /// before their first difference, so the cells differ as the values do.
    @Test func aChangePastTheCutIsShown() {
        let before = Value.array(Array(repeating: .integer(10), count: 40) + [.integer(99)])
        let after = Value.array(Array(repeating: .integer(10), count: 40) + [.integer(11)])
        let cells = MarkdownText.window([before, after])
        guard case .cut(let shownBefore) = cells[0], case .cut(let shownAfter) = cells[1] else {
            Issue.record("not cut: \(cells)")
            return
        }
        #expect(shownBefore != shownAfter)
        #expect(shownBefore.hasPrefix("… ") && shownBefore.contains("99") && shownAfter.contains("11"), "\(shownBefore) / \(shownAfter)")
        // Short values are shown whole; an absent one is a note.
        #expect(MarkdownText.window([.integer(1), nil]) == [.cut("1"), .note("absent")])
    }

    @Test func oneCharacterOfThousandsOfScalarsIsCutToo() {
        let grapheme = "a" + String(repeating: "\u{301}", count: 3_000)
        let shown = MarkdownText.shorten(grapheme, limit: 80)
        #expect(shown.unicodeScalars.count < 400, "\(shown.unicodeScalars.count) scalars")
        #expect(shown.hasSuffix("more characters)"))
    }

    @Test func longValuesAreShortenedAndSaySo() {
        let long = String(repeating: "x", count: 200)
        let short = MarkdownText.shorten(long, limit: 80)
        #expect(short.hasPrefix(String(repeating: "x", count: 79) + "…"))
        #expect(short.hasSuffix("(121 more characters)"))
        #expect(MarkdownText.shorten("short", limit: 80) == "short")
    }

    /// A plan of hostile ids, field names and values, against a golden file
    /// (`BOOKSYNC_UPDATE_GOLDEN=1` rewrites it); every row has exactly the
    /// table's five cells, so nothing ended a cell or a row.
    @Test func hostilePlanMatchesItsGoldenFile() throws {
        var writes: [SavedPlan.Write] = []
        for (index, text) in Self.hostile.enumerated() {
            guard let id = try? RecordID("r\(index)-" + text.filter { $0 != "/" }) else { continue }
            writes.append(.init(id: id, action: .update, fileHash: ContentHash(text: "sha256:0"), remoteRevision: "r",
                                changes: [.init(path: FieldPath(["stats", text]), before: .string(text), after: .map([text: .string(text)]))]))
        }
        let plan = SavedPlan(remoteName: "prod|<b>", target: TargetIdentity(endpoint: "https://firestore.googleapis.com/v1/",
                                                                           collection: "projects/p/databases/(default)/documents/b`o|oks"),
                             pathspecs: [], writes: writes, held: [.init(id: try RecordID("held|`x`"), reason: "reason <i>\n@you")],
                             scope: "title == \"|<b>`x`\n@you #1\"")
        let schema = RecordSchema(requiredFields: [FieldRequirement(name: "stats", type: .map, title: "Stats | <b>")], optionalFields: [])
        let rendered = PlanRenderer.markdown(plan, schema: { _ in schema })
        let rows = rendered.split(separator: "\n").filter { $0.hasPrefix("| ") && !$0.hasPrefix("| Record") && !$0.hasPrefix("| Held") && !$0.hasPrefix("| ---") }
        #expect(rows.count == writes.count + 1)
        for row in rows {
            // Cells are separated by " | " with an unescaped pipe: exactly one more than the cells.
            let unescapedPipes = row.split(separator: "|", omittingEmptySubsequences: false).count - 1
                - row.components(separatedBy: "\\|").count + 1
            #expect(unescapedPipes == (row.contains("*update*") ? 6 : 3), "\(row)")
        }
        let golden = Fixtures.root + "/markdown/hostile-plan.md"
        if ProcessInfo.processInfo.environment["BOOKSYNC_UPDATE_GOLDEN"] == "1" {
            try rendered.write(toFile: golden, atomically: true, encoding: .utf8)
        }
        #expect(rendered == (try String(contentsOfFile: golden, encoding: .utf8)))
    }
}
