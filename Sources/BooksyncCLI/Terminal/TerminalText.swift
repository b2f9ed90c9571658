import BooksyncCore

/// A line (or more) on its way to the terminal, safe by construction.
///
/// `Console` writes nothing else, so no renderer can forget to escape: the
/// literal parts of `"pull     \(path)"` are booksync's own text and go out as
/// written; every interpolated value is escaped with `TerminalEscaping`
/// (the manual's Safety article) unless it is itself a `TerminalText`. A `String` built
/// elsewhere does not convert implicitly; it must be interpolated (escaped) or
/// passed to `init(trusted:)`, which is for booksync's own help texts only.
///
/// - A `RecordID` is escaped as a name (`\` always `\\`) and abbreviated past
///   100 bytes (`TerminalEscaping.abbreviate`); `\(full: id)` keeps it whole
///   for `status --short`, which scripts read.
/// - `\(name: text)` escapes and abbreviates other names: field names, file
///   names, remote document ids that are not valid record ids.
/// - Any other value is escaped as a message (`TerminalEscaping.escapeMessage`).
///
/// Colour is added by `Style.apply`, the one place that writes escape
/// sequences, around text that is already escaped.
struct TerminalText: Sendable, Equatable, ExpressibleByStringInterpolation {
    /// The bytes as they will be written: escaped text and booksync's own SGR sequences.
    private(set) var rendered: String

    init(stringLiteral literal: String) {
        rendered = literal
    }

    init(stringInterpolation: StringInterpolation) {
        rendered = stringInterpolation.rendered
    }

    /// Text written by booksync itself (help, usage): never anything read from a
    /// file, the remote, the environment or the command line.
    init(trusted text: String) {
        rendered = text
    }

    /// JSON text for `--json` (made by `CanonicalJSON`, which escapes C0
    /// controls): the unsafe scalars JSON allows raw are written as `\uXXXX`.
    init(json: String) {
        rendered = TerminalEscaping.terminalSafeJSON(json)
    }

    /// `text` between an SGR sequence and the reset: only `Style` makes these,
    /// so its sequences are the only control characters booksync prints
    /// (besides newlines, tabs of its own layout, and the progress bar's
    /// carriage return and erase-line, which `Console.progress` adds).
    fileprivate init(sgr: String, around text: TerminalText) {
        rendered = "\u{1B}[\(sgr)m" + text.rendered + "\u{1B}[0m"
    }

    var isEmpty: Bool { rendered.isEmpty }

    static func + (lhs: TerminalText, rhs: TerminalText) -> TerminalText {
        TerminalText(trusted: lhs.rendered + rhs.rendered)
    }

    static func += (lhs: inout TerminalText, rhs: TerminalText) {
        lhs.rendered += rhs.rendered
    }

    struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var rendered = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            rendered.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        mutating func appendLiteral(_ literal: String) {
            rendered += literal
        }

        mutating func appendInterpolation(_ text: TerminalText) {
            rendered += text.rendered
        }

        /// A record id, escaped and abbreviated past 100 bytes.
        mutating func appendInterpolation(_ id: RecordID) {
            rendered += TerminalEscaping.escapeName(TerminalEscaping.abbreviate(id.rawValue))
        }

        /// A record id, escaped but whole (for `--short`).
        mutating func appendInterpolation(full id: RecordID) {
            rendered += TerminalEscaping.escapeName(id.rawValue)
        }

        /// A name that is not a `RecordID` (field name, file name, remote
        /// document id), escaped and abbreviated; `full` keeps it whole.
        mutating func appendInterpolation(name: String, full: Bool = false) {
            rendered += TerminalEscaping.escapeName(full ? name : TerminalEscaping.abbreviate(name))
        }

        /// Anything else: a message, a path, a number.
        mutating func appendInterpolation(_ value: some CustomStringConvertible) {
            rendered += TerminalEscaping.escapeMessage(value.description)
        }
    }
}

extension Array where Element == TerminalText {
    func joined(separator: TerminalText) -> TerminalText {
        var result: TerminalText = ""
        for (i, text) in enumerated() {
            if i > 0 { result += separator }
            result += text
        }
        return result
    }
}

/// ANSI styles, applied only when colour is on.
enum Style: String {
    case red = "31", green = "32", yellow = "33", cyan = "36", bold = "1", dim = "2"

    func apply(_ text: TerminalText, enabled: Bool) -> TerminalText {
        enabled ? TerminalText(sgr: rawValue, around: text) : text
    }
}

extension CommandContext {
    /// A file's path as the user should see it (relative to where they ran
    /// booksync), its directory escaped as a message and its file name as a
    /// name: a file name in a cloned collection is outside text too.
    func shownPath(_ absolutePath: String) -> TerminalText {
        let shown = display(absolutePath)
        guard let slash = shown.lastIndex(of: "/") else { return "\(name: shown, full: true)" }
        return "\(String(shown[..<slash]))/\(name: String(shown[shown.index(after: slash)...]), full: true)"
    }
}
