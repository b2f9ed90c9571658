/// Text from outside (record ids, field names, file names, server messages)
/// made safe to show on a terminal (the manual's Safety article).
///
/// A cloned collection or a shared Firestore project is written by others: a
/// document id like `x\u{1B}]0;PWNED\u{07}\u{1B}[2J` would retitle and clear
/// the terminal of whoever runs `booksync status`, a carriage return or a
/// newline would forge a line of output, and a right-to-left override would
/// reorder what is displayed. Every scalar that a terminal acts on instead of
/// showing is therefore written visibly:
///
/// | scalars | written as |
/// |---|---|
/// | `\n`, `\r`, `\t` | `\n`, `\r`, `\t` |
/// | other C0 controls (U+0000–U+001F), DEL (U+007F) | `\x1b`, `\x07`, `\x7f` (two lowercase hex digits) |
/// | C1 controls (U+0080–U+009F) | `\u{9b}` |
/// | bidi overrides, embeddings, isolates and marks (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) | `\u{202e}` |
/// | line and paragraph separators (U+2028, U+2029) | `\u{2028}` |
///
/// Backslashes need a rule of their own, or an id that really contains the six
/// characters `a\x1b` would read like the id `a` + ESC:
/// - names (`escapeName`: record ids, field names, file names) always write
///   `\` as `\\`, so every escaped name reads back to exactly one name;
/// - messages (`escapeMessage`: server text, parser diagnostics, paths) are
///   shown exactly as they are when nothing in them needs escaping, so that
///   "invalid escape '\q'" stays readable; when something does, every `\` in
///   the message is doubled too.
///
/// Pure and total: every String has an escaped form, and the escaped form
/// contains none of the scalars above.
package enum TerminalEscaping {
    /// Whether a terminal may act on `scalar` instead of showing it.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `U+202E, a bidirectional formatting character`: an unsafe scalar named
    /// for a sentence that refuses it, since the scalar itself shows nothing.
    package static func describeUnsafe(_ scalar: Unicode.Scalar) -> String {
        let code = "U+" + Hex.string(scalar.value, minimumDigits: 4, .upper)
        switch scalar.value {
        case 0x2028: return code + ", a line separator"
        case 0x2029: return code + ", a paragraph separator"
        case 0x00...0x1F, 0x7F...0x9F: return code + ", a control character"
        default: return code + ", a bidirectional formatting character"
        }
    }

    /// Whether `text` would be changed by `escapeMessage`.
    package static func needsEscaping(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isUnsafe)
    }

    /// A name (record id, field name, file name) as it may be shown: unsafe
    /// scalars written visibly and `\` always written `\\`.
    package static func escapeName(_ name: String) -> String {
        escape(name)
    }

    /// A message as it may be shown: unchanged when nothing in it is unsafe;
    /// otherwise unsafe scalars written visibly and every `\` doubled.
    package static func escapeMessage(_ message: String) -> String {
        needsEscaping(message) ? escape(message) : message
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                out += "\\\\"
            } else if isUnsafe(scalar) {
                out += visible(scalar)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func visible(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default:
            if scalar.value < 0x80 { return "\\x" + Hex.string(scalar.value, minimumDigits: 2, .lower) }
            return "\\u{" + Hex.string(scalar.value, minimumDigits: 1, .lower) + "}"
        }
    }

    /// Text longer than `limit` UTF-8 bytes cut to its first `keep` bytes (at a
    /// scalar boundary) followed by `…[N bytes, sha256 xxxxxxxx]`: the byte count
    /// says how much is missing and the hash tells two long ids with the same
    /// beginning apart (`printf %s ID | sha256sum` gives the same digits).
    /// Shorter text is returned unchanged. Not escaped: escape the result.
    ///
    /// A Firestore id may be 1,500 bytes; printed whole, twice in one line, it
    /// buries the message it belongs to.
    package static func abbreviate(_ text: String, limit: Int = 100, keep: Int = 80) -> String {
        let count = text.utf8.count
        guard count > limit else { return text }
        var kept = ""
        var bytes = 0
        for scalar in text.unicodeScalars {
            let size = UTF8.width(scalar)
            if bytes + size > keep { break }
            kept.unicodeScalars.append(scalar)
            bytes += size
        }
        let digest = Hex.string(SHA256.hash(Array(text.utf8)), .lower)
        return kept + "…[\(count) bytes, sha256 \(digest.prefix(8))]"
    }

    /// JSON text with every unsafe scalar that JSON allows raw inside strings
    /// (DEL, C1 controls, bidi controls, line separators) written as `\uXXXX`,
    /// for `--json` output on a terminal. The result parses to the same value:
    /// outside strings, JSON text has only ASCII punctuation, digits, letters
    /// and whitespace, so every such scalar is inside a string. C0 controls
    /// are already escaped by `CanonicalJSON`; raw ones (the whitespace between
    /// tokens) are left as they are.
    package static func terminalSafeJSON(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { isUnsafe($0) && $0.value >= 0x7F }) else { return json }
        var out = ""
        out.reserveCapacity(json.utf8.count)
        for scalar in json.unicodeScalars {
            if scalar.value >= 0x7F, isUnsafe(scalar) {
                out += "\\u" + Hex.string(scalar.value, minimumDigits: 4, .lower)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
