import Testing
@testable import BooksyncCore

/// Outside text (ids, field names, server messages) on its way to a terminal
/// (<doc:Safety>): every scalar a terminal acts on is written visibly.
@Suite struct TerminalEscapingTests {
    /// (raw name, as `escapeName` writes it)
    static let names: [(String, String)] = [
        ("dune", "dune"),
        ("über café 🚀", "über café 🚀"),
        ("x\u{1B}]0;PWNED\u{07}\u{1B}[2J", #"x\x1b]0;PWNED\x07\x1b[2J"#),
        ("cr\rfake", #"cr\rfake"#),
        ("nl\nfake line", #"nl\nfake line"#),
        ("tab\there", #"tab\there"#),
        ("nul\u{0}", #"nul\x00"#),
        ("unit\u{1F}sep", #"unit\x1fsep"#),
        ("del\u{7F}", #"del\x7f"#),
        ("csi\u{9B}31m", #"csi\u{9b}31m"#),
        ("c1 first\u{80}last\u{9F}", #"c1 first\u{80}last\u{9f}"#),
        ("nbsp\u{A0}kept", "nbsp\u{A0}kept"),
        ("bidi\u{202E}live", #"bidi\u{202e}live"#),
        ("\u{202A}\u{202B}\u{202C}\u{202D}", #"\u{202a}\u{202b}\u{202c}\u{202d}"#),
        ("\u{2066}\u{2067}\u{2068}\u{2069}", #"\u{2066}\u{2067}\u{2068}\u{2069}"#),
        ("marks\u{200E}\u{200F}\u{061C}", #"marks\u{200e}\u{200f}\u{61c}"#),
        ("line\u{2028}para\u{2029}", #"line\u{2028}para\u{2029}"#),
        ("zero\u{200B}width", "zero\u{200B}width"),
        // A backslash is always doubled in a name, so these two stay apart:
        (#"a\x1b"#, #"a\\x1b"#),
        ("a\u{1B}", #"a\x1b"#),
        (#"back\slash"#, #"back\\slash"#),
    ]

    @Test(arguments: names)
    func escapesNames(raw: String, shown: String) {
        #expect(TerminalEscaping.escapeName(raw) == shown)
        #expect(!TerminalEscaping.needsEscaping(TerminalEscaping.escapeName(raw)))
    }

    /// (raw message, as `escapeMessage` writes it): unchanged unless something
    /// in it is unsafe, then backslashes are doubled too.
    static let messages: [(String, String)] = [
        (#"7:12: invalid escape '\q'; valid escapes are \" \\ \/"#, #"7:12: invalid escape '\q'; valid escapes are \" \\ \/"#),
        ("server said: no", "server said: no"),
        ("line one\nbooksync: error: forged", #"line one\nbooksync: error: forged"#),
        ("\u{1B}[2J path\\to", #"\x1b[2J path\\to"#),
        ("text\r\u{1B}[K", #"text\r\x1b[K"#),
    ]

    @Test(arguments: messages)
    func escapesMessages(raw: String, shown: String) {
        #expect(TerminalEscaping.escapeMessage(raw) == shown)
    }

    /// Every scalar a terminal may act on, in both escapers: none survives.
    @Test func noUnsafeScalarSurvives() {
        var unsafe: [Unicode.Scalar] = []
        for value in UInt32(0)...0x2100 {
            if let scalar = Unicode.Scalar(value), TerminalEscaping.isUnsafe(scalar) { unsafe.append(scalar) }
        }
        #expect(unsafe.count == 0x20 + 1 + 0x20 + 3 + 2 + 5 + 4, "C0, DEL, C1, bidi marks, separators, embeddings/overrides, isolates")
        var text = ""
        text.unicodeScalars.append(contentsOf: unsafe)
        for escaped in [TerminalEscaping.escapeName(text), TerminalEscaping.escapeMessage(text)] {
            #expect(!escaped.unicodeScalars.contains(where: TerminalEscaping.isUnsafe))
            #expect(escaped.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F })
        }
    }

    /// (length in bytes of a name made of `unit`, the abbreviation's beginning)
    static let abbreviations: [(String, Int, String)] = [
        ("L", 100, String(repeating: "L", count: 100)),
        ("L", 101, String(repeating: "L", count: 80) + "…[101 bytes, sha256 "),
        ("L", 1_500, String(repeating: "L", count: 80) + "…[1500 bytes, sha256 "),
        // Never cut inside a scalar: 3-byte scalars, 26 of them fit in 80 bytes.
        ("€", 150, String(repeating: "€", count: 26) + "…[150 bytes, sha256 "),
    ]

    @Test(arguments: abbreviations)
    func abbreviatesLongText(unit: String, bytes: Int, beginning: String) {
        let text = String(repeating: unit, count: bytes / unit.utf8.count)
        let short = TerminalEscaping.abbreviate(text)
        #expect(short.hasPrefix(beginning))
        if bytes <= 100 {
            #expect(short == text)
        } else {
            #expect(short.utf8.count < 120)
            #expect(short.hasSuffix("]"))
        }
    }

    @Test func abbreviationsOfLongIDsWithTheSameBeginningDiffer() {
        let a = String(repeating: "L", count: 1_499) + "a"
        let b = String(repeating: "L", count: 1_499) + "b"
        #expect(TerminalEscaping.abbreviate(a) != TerminalEscaping.abbreviate(b))
        // The digits are those of `printf %s ID | sha256sum`.
        let digest = Hex.string(SHA256.hash(Array(a.utf8)), .lower)
        #expect(TerminalEscaping.abbreviate(a).hasSuffix("sha256 \(digest.prefix(8))]"))
    }

    /// (JSON text, as written for a terminal): the same value, no unsafe scalar.
    static let jsonTexts: [(String, String)] = [
        (#"{"id": "dune"}"#, #"{"id": "dune"}"#),
        ("{\n  \"id\": \"x\\u001b\"\n}", "{\n  \"id\": \"x\\u001b\"\n}"),
        ("[\"c1\u{9B}\", \"bidi\u{202E}\", \"del\u{7F}\"]", #"["c1\u009b", "bidi\u202e", "del\u007f"]"#),
        ("{\"\u{2066}key\": \"\u{2028}\"}", #"{"\u2066key": "\u2028"}"#),
    ]

    @Test(arguments: jsonTexts)
    func escapesJSONForATerminal(json: String, shown: String) throws {
        let safe = TerminalEscaping.terminalSafeJSON(json)
        #expect(safe == shown)
        #expect(try JSONParser.parse(Array(safe.utf8)) == JSONParser.parse(Array(json.utf8)))
    }
}
