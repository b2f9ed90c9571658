import Foundation
import Testing
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// A remote written by someone else, and a cloned directory, attack the
/// terminal of whoever runs booksync (<doc:Safety>): ids, field names, values
/// and file names full of escape sequences, carriage returns, newlines, C1
/// controls and bidi overrides. Every command, in every output mode, with and
/// without colour, must print none of them raw; colour may add only
/// booksync's own SGR sequences; a 1,500-byte id is abbreviated in text lines.
@Suite struct TerminalSafetyTests {
    static let retitle = "x\u{1B}]0;PWNED\u{07}\u{1B}[2J"
    static let forgedLine = "nl\nbooksync: error: forged"
    static let carriageReturn = "cr\rforged"
    static let bidi = "bidi\u{202E}txt.exe"
    static let c1 = "c1\u{9B}31m"
    static let tabAndDelete = "tab\there\u{7F}"
    /// Valid (202 bytes encoded) and long enough to be abbreviated in messages.
    static let longValid = String(repeating: "M", count: 199) + "\u{1B}"
    /// Firestore's limit: too long for a file name, so an invalid remote document.
    static let longInvalid = String(repeating: "L", count: 1_500)
    static let hostileField = "field\u{1B}[8m\u{202E}"
    static let hostileValue = "value\u{1B}]0;PWNED\u{07}\u{9B}2J"
    /// A local file whose name is not a record id encoding.
    static let hostileFileName = "clone\u{1B}[2J\u{202E}.json"

    static let ids = [retitle, forgedLine, carriageReturn, bidi, c1, tabAndDelete, longValid]

    /// The SGR codes `Style` writes: reset, bold, dim, red, green, yellow, cyan.
    static let ownSGR: Set<String> = ["0", "1", "2", "31", "32", "33", "36"]

    /// Problems with `text` as terminal output: a control byte other than
    /// newline and tab, DEL, a C1 control, a bidi control or line separator,
    /// or (with colour) an escape sequence booksync does not write itself.
    static func problems(_ text: String, colored: Bool) -> [String] {
        var problems: [String] = []
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            let scalar = scalars[i]
            i += 1
            if scalar == "\u{1B}", colored, i < scalars.count, scalars[i] == "[" {
                var code = ""
                var j = i + 1
                while j < scalars.count, (0x30...0x39).contains(scalars[j].value) {
                    code.unicodeScalars.append(scalars[j])
                    j += 1
                }
                if j < scalars.count, scalars[j] == "m", ownSGR.contains(code) {
                    i = j + 1
                    continue
                }
            }
            if scalar == "\n" || scalar == "\t" { continue }
            if TerminalEscaping.isUnsafe(scalar) {
                problems.append("U+\(String(scalar.value, radix: 16)) at \(i - 1): …\(String(String.UnicodeScalarView(scalars[max(0, i - 20)..<min(scalars.count, i + 20)])))…")
            }
        }
        return problems
    }

    func hostileWorkspace() async throws -> Workspace {
        let ws = try Workspace(project: Emulator.uniqueProject("terminal"), host: try Emulator.requireHost())
        var documents = Self.ids.map { id in (id: id, fields: bookFields(id, extra: [Self.hostileField: .string("v")])) }
        documents.append((id: Self.longInvalid, fields: bookFields(Self.longInvalid)))
        try await ws.rest.put(documents)
        try ws.initialize()
        return ws
    }

    /// Runs a command with colour forced on and forced off, checks both
    /// outputs, and returns them.
    @discardableResult
    func check(_ ws: Workspace, _ arguments: [String], exitCodes: Set<Int32> = [0, 1],
               sourceLocation: SourceLocation = #_sourceLocation) throws -> (plain: BinaryTests.Output, colored: BinaryTests.Output) {
        var outputs: [BinaryTests.Output] = []
        for color in ["never", "always"] {
            let environment = ["FIRESTORE_EMULATOR_HOST": ws.host, "NO_COLOR": ""]
            let output = try BinaryTests.run(["--color", color] + arguments, in: ws.root, environment: environment)
            let shown = arguments.joined(separator: " ")
            #expect(exitCodes.contains(output.status), "\(shown) --color \(color): exit \(output.status)\n\(output.stderr)", sourceLocation: sourceLocation)
            for (stream, text) in [("stdout", output.stdout), ("stderr", output.stderr)] {
                let found = Self.problems(text, colored: color == "always")
                #expect(found.isEmpty, "\(shown) --color \(color), \(stream): \(found.prefix(3))", sourceLocation: sourceLocation)
            }
            outputs.append(output)
        }
        return (outputs[0], outputs[1])
    }

    @Test func hostileIDsFieldsAndFileNamesNeverReachTheTerminalRaw() async throws {
        let ws = try await hostileWorkspace()
        try ws.write(Self.hostileFileName, bookFile("clone"))

        let (status, coloredStatus) = try check(ws, ["status"])
        // Colour survives the escaping: booksync's own sequences are still there.
        #expect(coloredStatus.stdout.contains("\u{1B}[31m") && coloredStatus.stdout.contains("\u{1B}[0m"))
        // The 1,500-byte id is abbreviated in text, with its length and a hash.
        #expect(status.stdout.contains(String(repeating: "L", count: 80) + "…[1500 bytes, sha256 "), "\(status.stdout)")
        #expect(!status.stdout.contains(String(repeating: "L", count: 81)))
        #expect(status.stdout.contains(#"clone\x1b[2J\u{202e}.json"#))

        // --short keeps whole ids (escaped) for scripts; --json keeps them exact.
        let short = try check(ws, ["status", "--short"]).plain
        #expect(short.stdout.contains(" A " + #"x\x1b]0;PWNED\x07\x1b[2J"# + "\n"), "\(short.stdout)")
        #expect(short.stdout.contains(" A " + #"nl\nbooksync: error: forged"# + "\n"))
        #expect(short.stdout.contains(" ! " + Self.longInvalid + "\n"))
        let json = try check(ws, ["status", "--json"]).plain
        guard case .map(let document) = try JSONParser.parse(Array(json.stdout.utf8), decodeTags: false),
              case .array(let records)? = document["records"] else {
            Issue.record("status --json: \(json.stdout)")
            return
        }
        let listed = records.compactMap { record -> String? in
            if case .map(let fields) = record, case .string(let id)? = fields["id"] { return id }
            return nil
        }
        #expect(Set(listed) == Set(Self.ids))

        try check(ws, ["pull", "--dry-run"])
        try check(ws, ["pull"])
        try check(ws, ["diff"])

        // Local edits of every record, a conflicting remote edit of three, a
        // remote delete of one locally modified, and a local delete of one
        // modified remotely: push and pull print every kind of line.
        for id in Self.ids {
            let file = try RecordID(id).fileName
            try ws.write(file, bookFile(id, title: "Local", extra: [Self.hostileField: .string(Self.hostileValue),
                                                                     "stats": .map([Self.hostileField: .string("local")])]))
        }
        try await ws.rest.put([Self.retitle, Self.carriageReturn, Self.longValid].map { id in
            (id: id, fields: bookFields(id, title: "Remote", extra: [Self.hostileField: .string("remote " + Self.hostileValue),
                                                                      "stats": .map([Self.hostileField: .string("remote")])]))
        })
        try await ws.rest.delete(Self.bidi)
        try ws.remove(try RecordID(Self.c1).fileName)
        try await ws.rest.put([(id: Self.c1, fields: bookFields(Self.c1, title: "Remote"))])

        try check(ws, ["status"])
        try check(ws, ["status", "--short"])
        // Every --json document, with conflicting hostile field names and ids in it.
        for arguments in [["pull", "--dry-run", "--json"], ["push", "--dry-run", "--json"], ["sync", "--dry-run", "--json"],
                          ["validate", "--json"], ["diff", "--offline", "--json"]] {
            let json = try check(ws, arguments).plain
            #expect(json.stdout.hasPrefix("{\n  \"version\": 1,"), "\(arguments): \(json.stdout.prefix(200))")
        }
        let (push, coloredPush) = try check(ws, ["push"])
        #expect(coloredPush.stdout.contains("\u{1B}[31mremote changed '"))
        #expect(push.stdout.contains("update   " + #"tab\there\x7f"#), "\(push.stdout)")
        #expect(push.stdout.contains(#"remote changed 'x\x1b]0;PWNED\x07\x1b[2J' since your last pull"#))
        // A long valid id is abbreviated in push lines too.
        #expect(push.stdout.contains("remote changed '" + String(repeating: "M", count: 80) + "…[200 bytes, sha256 "))
        try check(ws, ["pull"])
        try check(ws, ["push"])
        let diff = try check(ws, ["diff", Self.retitle]).plain
        // Field names are quoted as in Firestore field paths, nested ones
        // too, and escaped inside the quotes.
        #expect(diff.stdout.contains(#"`field\x1b[8m\u{202e}` (conflict)"#), "\(diff.stdout)")
        #expect(diff.stdout.contains(#"stats.`field\x1b[8m\u{202e}` (conflict)"#), "\(diff.stdout)")
        #expect(diff.stdout.contains(#"fields '`field\x1b[8m\u{202e}`', 'stats.`field\x1b[8m\u{202e}`', 'title'"#), "\(diff.stdout)")
        #expect(diff.stdout.contains(#""value\u001b]0;PWNED\u0007\u009b2J""#))
        try check(ws, ["diff", "--json"])
        try check(ws, ["resolve", Self.retitle, Self.carriageReturn, "--ours"])
        let noConflict = try check(ws, ["resolve", Self.forgedLine], exitCodes: [1]).plain
        #expect(noConflict.stderr.contains(#"'nl\nbooksync: error: forged' has no unresolved conflict"#))
        let tooLong = try check(ws, ["resolve", Self.longInvalid], exitCodes: [2]).plain
        #expect(tooLong.stderr.contains(String(repeating: "L", count: 80) + "…[1500 bytes, sha256 "), "\(tooLong.stderr)")
        #expect(!tooLong.stderr.contains(String(repeating: "L", count: 81)))
        try check(ws, ["validate"])
        try check(ws, ["fmt", "--check"])
        try check(ws, ["sync"])
        try check(ws, ["-v", "status"])
    }

    /// The change field's name comes from config.json, which a clone can
    /// set: every line that names it (init, `-v`'s account of how the remote
    /// was read, the invalid-file message, a config error) escapes it.
    @Test func aHostileChangeFieldNameNeverReachesTheTerminalRaw() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("terminal-change"), host: try Emulator.requireHost())
        let field = "stamp\u{202E}\u{9B}31m"
        try await ws.rest.put([(id: "dune", fields: bookFields("dune"))], stamping: field)
        let initialized = try ws.run("init", "--firestore", ws.project, "--collection", "books", "--change-field", field)
        #expect(Self.problems(initialized.stdout + initialized.stderr, colored: false).isEmpty)
        #expect(initialized.stdout.contains(#"change field: stamp\u{202e}\u{9b}31m"#), "\(initialized.stdout)")
        let (pulled, _) = try check(ws, ["-v", "pull"])
        #expect(pulled.stderr.contains(#"no change mark for 'stamp\u{202e}\u{9b}31m' yet"#), "\(pulled.stderr)")
        let (status, _) = try check(ws, ["-v", "status"])
        #expect(status.stderr.contains(#"whose 'stamp\u{202e}\u{9b}31m' is at or after"#), "\(status.stderr)")
        try ws.write("dune.json", bookFile("dune", extra: [field: .string("x")]))
        let (invalid, _) = try check(ws, ["status"])
        #expect(invalid.stdout.contains("is this collection's change field"), "\(invalid.stdout)")
        // A control character is refused in config.json, with an error that is itself safe.
        let config = try #require(ws.read(".booksync/config.json"))
        try ws.write(".booksync/config.json", config.replacingOccurrences(of: "\u{9B}31m", with: "\\u001b]0;PWNED\\u0007"))
        let (refused, _) = try check(ws, ["status"], exitCodes: Set(2...127))
        #expect(refused.stderr.contains("changeField: the change field name contains a control character"), "\(refused.stderr)")
    }
}
