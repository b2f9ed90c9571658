import BooksyncCore

/// A GitHub-flavoured Markdown table for a pull-request comment
/// (`plan --markdown`, `diff --markdown`, `compare --markdown`).
///
/// Every cell is text from outside — record ids, field names, values — and is
/// escaped by `MarkdownText.escape`, so nothing in a record can end a cell,
/// open a code span, inject HTML, mention a user or reach a terminal as a
/// control character. Only `MarkdownTable.Cell.note` adds markup of booksync's own.
struct MarkdownTable: Sendable {
    /// One cell of a row.
    enum Cell: Sendable, Equatable {
        /// Text from a record, a file name or a document: escaped, shortened past `limit` characters.
        case text(String)
        /// A value as record files write it, on one line (escaped and shortened like text).
        case value(Value)
        /// Text already cut to size (`MarkdownText.window`): escaped, not shortened again.
        case cut(String)
        /// booksync's own words in italics, such as "absent".
        case note(String)
    }

    /// The column headings (booksync's own words).
    let columns: [String]
    /// The rows, each with one cell per column.
    private(set) var rows: [[Cell]] = []
    /// Characters of a cell's text shown before it is cut with "…".
    let limit: Int

    /// An empty table with these headings.
    init(columns: [String], limit: Int = MarkdownText.defaultLimit) {
        self.columns = columns
        self.limit = limit
    }

    /// Appends a row; missing cells are empty, extra ones dropped.
    mutating func add(_ cells: [Cell]) {
        rows.append(Array((cells + Array(repeating: .note(""), count: max(0, columns.count - cells.count))).prefix(columns.count)))
    }

    /// The table, a line per row, each line ending in a newline; rows past
    /// `budget` characters are left out and counted in a last line (GitHub
    /// refuses a comment over 65,536 characters).
    func rendered(budget: Int = MarkdownText.commentBudget) -> String {
        var out = "| " + columns.map(MarkdownText.escape).joined(separator: " | ") + " |\n"
        out += "|" + String(repeating: " --- |", count: columns.count) + "\n"
        for (index, row) in rows.enumerated() {
            let line = "| " + row.map(render).joined(separator: " | ") + " |\n"
            guard out.utf8.count + line.utf8.count <= budget else {
                out += "\n*\(rows.count - index) more rows not shown; the terminal output has them all*\n"
                break
            }
            out += line
        }
        return out
    }

    private func render(_ cell: Cell) -> String {
        switch cell {
        case .text(let text): MarkdownText.escape(MarkdownText.shorten(text, limit: limit))
        case .value(let value): MarkdownText.escape(MarkdownText.shorten(CanonicalJSON.encodeInline(value), limit: limit))
        case .cut(let text): MarkdownText.escape(text)
        case .note(let note): note.isEmpty ? "" : "*" + MarkdownText.escape(note) + "*"
        }
    }
}

/// Text made safe for GitHub-flavoured Markdown and for a terminal.
enum MarkdownText {
    /// Characters of a value shown in a table cell before it is shortened.
    static let defaultLimit = 80
    /// Characters of a comment's tables: GitHub takes at most 65,536 in a comment.
    static let commentBudget = 60_000

    /// The values of one row (before and after, or base, local and remote)
    /// as cells that show where they differ: when one is longer than `limit`
    /// and they share a long start, each begins shortly before the first
    /// difference ("… " marks what is left out), so a change past the cut is
    /// never shown as two equal cells. Absent values become `absent` notes.
    static func window(_ values: [Value?], limit: Int = defaultLimit, absent: String = "absent") -> [MarkdownTable.Cell] {
        let texts = values.map { $0.map(CanonicalJSON.encodeInline) }
        let present = texts.compactMap { $0 }.map { Array($0) }
        var skip = 0
        if present.count > 1, present.contains(where: { $0.count > limit }) {
            var common = 0
            while present.allSatisfy({ common < $0.count }), present.allSatisfy({ $0[common] == present[0][common] }) { common += 1 }
            skip = max(0, common - limit / 4)
        }
        return texts.map { text -> MarkdownTable.Cell in
            guard let text else { return .note(absent) }
            let characters = Array(text)
            let rest = skip > 0 ? "… " + String(characters[min(skip, characters.count)...]) : text
            return .cut(shorten(rest, limit: limit))
        }
    }

    /// `text` with every character GitHub could read as markup written so it
    /// reads as itself: ASCII punctuation backslash-escaped (`|` cannot end a
    /// cell, `` ` `` open a code span, `*` or `_` emphasise, `[`/`!` make a
    /// link or image, `:`/`.` complete an autolink), `@` and `#` each in a code
    /// span of its own (no mention, no issue link), `<`, `>` and `&` as
    /// entities (no HTML), and every control, bidirectional-override,
    /// invisible or line-separating scalar as a visible `\uXXXX` (a newline
    /// would end the row; a bidi control reorders what the reviewer reads).
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            // GitHub links mentions and issue numbers in the rendered text, where a
            // backslash is gone; text in a code span it leaves alone.
            case "@": out += "`@`"
            case "#": out += "`#`"
            case _ where scalar.isASCII && isASCIIPunctuation(scalar):
                out += "\\"
                out.unicodeScalars.append(scalar)
            case _ where isHidden(scalar):
                out += "\\\\u" + hex4(scalar.value)
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` cut to `limit` characters (grapheme clusters), with "…" and the
    /// number of characters left out, so a reviewer knows it goes on.
    /// Also at most four scalars per character kept: one character of a
    /// letter and thousands of combining marks is cut too.
    static func shorten(_ text: String, limit: Int) -> String {
        let count = text.count
        let scalarLimit = limit * 4
        guard count > limit || text.unicodeScalars.count > scalarLimit else { return text }
        let kept = max(1, limit - 1)
        var cut = String(text.prefix(kept))
        if cut.unicodeScalars.count > scalarLimit {
            var scalars = String.UnicodeScalarView()
            scalars.append(contentsOf: cut.unicodeScalars.prefix(scalarLimit))
            cut = String(scalars)
        }
        return cut + "… (\(max(1, count - cut.count)) more characters)"
    }

    /// CommonMark's ASCII punctuation: each may be backslash-escaped, and each
    /// can start markup somewhere, so all are escaped.
    private static func isASCIIPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return (0x21...0x2F).contains(v) || (0x3A...0x40).contains(v) || (0x5B...0x60).contains(v) || (0x7B...0x7E).contains(v)
    }

    /// Scalars a reader would not see, or that change how the rest of the
    /// line reads: controls (C0, DEL, C1), line and paragraph separators,
    /// bidirectional marks, embeddings, overrides and isolates, zero-width
    /// characters, the byte-order mark, interlinear annotations, and the
    /// characters that show as nothing (soft hyphen, Hangul fillers, the
    /// blank Braille pattern, tag characters that smuggle hidden text).
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x180E, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x206F, 0x2800, 0x3164,
             0xFEFF, 0xFFA0, 0xFFF9...0xFFFB, 0xE0000...0xE007F: true
        default: false
        }
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
