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

    /// The table, a line per row, each line ending in a newline.
    var rendered: String {
        var out = "| " + columns.map(MarkdownText.escape).joined(separator: " | ") + " |\n"
        out += "|" + String(repeating: " --- |", count: columns.count) + "\n"
        for row in rows {
            out += "| " + row.map(render).joined(separator: " | ") + " |\n"
        }
        return out
    }

    private func render(_ cell: Cell) -> String {
        switch cell {
        case .text(let text): MarkdownText.escape(MarkdownText.shorten(text, limit: limit))
        case .value(let value): MarkdownText.escape(MarkdownText.shorten(CanonicalJSON.encodeInline(value), limit: limit))
        case .note(let note): note.isEmpty ? "" : "*" + MarkdownText.escape(note) + "*"
        }
    }
}

/// Text made safe for GitHub-flavoured Markdown and for a terminal.
enum MarkdownText {
    /// Characters of a value shown in a table cell before it is shortened.
    static let defaultLimit = 80

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
    static func shorten(_ text: String, limit: Int) -> String {
        let count = text.count
        guard count > limit else { return text }
        let kept = max(1, limit - 1)
        return String(text.prefix(kept)) + "… (\(count - kept) more characters)"
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
    /// characters, the byte-order mark and interlinear annotations.
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x180E, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2069, 0xFEFF, 0xFFF9...0xFFFB: true
        default: false
        }
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
