/// The only ways text from config.json enters generated Swift source
/// (`SwiftDTOSource`): as `///` comment lines, or as a string literal.
///
/// config.json may be a stranger's (a cloned collection), and the source is
/// printed to a terminal and pasted into an app, so nothing from it may end a
/// comment or a literal and become code, nor make the code look other than
/// it is ("Trojan Source"). Field names become identifiers separately
/// (`SwiftDTOSource.identifier`), which keeps ASCII letters and digits only.
package enum SwiftSourceText {
    /// `text` as `///` lines at `indent`. A `\n` (or `\r\n`) starts the next
    /// line, so every line of the text stays inside a comment; every other
    /// scalar a terminal or an editor acts on instead of showing
    /// (`TerminalEscaping.isUnsafe`: controls, DEL, U+2028 and U+2029, which
    /// editors draw as line breaks, bidi overrides and isolates) becomes
    /// U+FFFD. `*/` and `"""` need nothing: only a line break ends a `//` comment.
    package static func docComment(_ text: String, indent: String) -> [String] {
        var lines: [String] = []
        var line = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        var pending = scalars.next()
        while let scalar = pending {
            pending = scalars.next()
            if scalar == "\n" || scalar == "\r" && pending == "\n" {
                if scalar == "\r" { pending = scalars.next() }
                lines.append(indent + "/// " + String(line))
                line = String.UnicodeScalarView()
            } else {
                line.append(TerminalEscaping.isUnsafe(scalar) ? "\u{FFFD}" : scalar)
            }
        }
        lines.append(indent + "/// " + String(line))
        return lines
    }

    /// `text` as a one-line Swift string literal that holds exactly `text`
    /// (a coding key must match its field byte for byte): `"` and `\` are
    /// escaped, and every scalar `TerminalEscaping.isUnsafe` names is written
    /// `\u{…}`, so the literal shows no control, line break or bidi override
    /// and no `\(` starts an interpolation.
    package static func stringLiteral(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case _ where TerminalEscaping.isUnsafe(scalar): quoted += "\\u{" + Hex.string(scalar.value, minimumDigits: 1, .lower) + "}"
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}
