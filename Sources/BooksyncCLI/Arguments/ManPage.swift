/// booksync's man pages in roff (`booksync man [COMMAND]`): `booksync(1)` and
/// one page per command, `booksync-pull(1)`, as git has them.
///
/// Written from the same declarations as `--help` and the completions (each
/// command's name, summary, usage, discussion and options), so the three
/// never disagree. Everything is booksync's own text, escaped for roff: no
/// line starts with a control character, `\` and `-` are written as roff
/// asks, and any scalar beyond ASCII becomes `\[uXXXX]`, so `groff -ww`
/// renders the pages without a warning (`scripts/check-man`).
enum ManPage {
    /// `booksync(1)`: the synopsis, every command with its summary, the global options and the exit codes.
    static func main(version: String) -> String {
        var lines = header(title: "BOOKSYNC", version: version)
        lines += [".SH NAME", "booksync \\- " + escaped("keep a directory of JSON records in sync with a Firestore collection, like git")]
        lines += [".SH SYNOPSIS", ".B booksync", escaped("[-C DIR] [--color WHEN|--no-color] [-q|-v] COMMAND [OPTIONS]")]
        lines += [".SH DESCRIPTION"]
        lines += paragraphs("""
            booksync keeps a collection of records as one JSON file per record in a
            directory that people edit by hand and version in git, and syncs it with
            a Firestore collection the way git syncs a work tree: status, pull and
            push compare the files, the last synced base and the remote three ways,
            merge changes field by field, and never overwrite a change silently.
            """)
        lines += [".SH COMMANDS"]
        for command in BooksyncCommand.subcommands {
            lines += [".TP", "\\fB\(escaped(command.name))\\fR", escaped(command.summary) + "; see", ".BR \(escaped("booksync-" + command.name)) (1)."]
        }
        lines += [".SH GLOBAL OPTIONS"]
        lines += optionItems(BooksyncCommand.globalOptions)
        lines += [".SH EXIT STATUS"]
        lines += paragraphs("""
            0 done; 1 done, but something needs attention (conflicts, invalid files or
            documents, rejected records, differences with --exit-code); 2 usage error or
            not a collection; 3 remote or I/O failure after retries; 4 refused by a
            safety rail (mass delete, an emptied target, a held lock, a link where
            booksync keeps its state).
            """)
        lines += [".SH SEE ALSO"]
        lines.append(BooksyncCommand.subcommands.map { ".BR \(escaped("booksync-" + $0.name)) (1)" }.joined(separator: ",\n"))
        lines.append("and 'booksync help auth' for credentials.")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `booksync-NAME(1)`: the command's usage, summary, discussion and options.
    static func page(_ command: any Subcommand.Type, version: String) -> String {
        var lines = header(title: "BOOKSYNC-" + command.name.uppercased(), version: version)
        lines += [".SH NAME", escaped("booksync-" + command.name) + " \\- " + escaped(command.summary)]
        lines += [".SH SYNOPSIS", ".nf", escaped(command.usage), ".fi"]
        lines += [".SH DESCRIPTION"]
        lines += paragraphs(command.summary.prefix(1).uppercased() + command.summary.dropFirst() + ".")
        if !command.discussion.isEmpty { lines += [".PP"] + paragraphs(command.discussion) }
        if !command.options.isEmpty {
            lines += [".SH OPTIONS"]
            lines += optionItems(command.options)
        }
        lines += [".SH GLOBAL OPTIONS", escaped(BooksyncCommand.globalOptionsReminder) + "; see", ".BR booksync (1).",
                  escaped("booksync \(command.name) --help") + " prints the same help in brief."]
        lines += [".SH SEE ALSO", ".BR booksync (1)"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The title line: no date, so a page is the same bytes in every build of a version.
    static func header(title: String, version: String) -> [String] {
        [".TH \(escaped(title)) 1 \"\" \"booksync \(escaped(version))\" \"User Commands\""]
    }

    /// Text as roff paragraphs: a blank line starts a new one, and a
    /// paragraph whose lines are indented (examples, tables) keeps its lines.
    static func paragraphs(_ text: String) -> [String] {
        var lines: [String] = []
        var blocks: [[String]] = [[]]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " }) { blocks.append([]) } else { blocks[blocks.count - 1].append(String(line)) }
        }
        for blockLines in blocks {
            guard !blockLines.isEmpty else { continue }
            if !lines.isEmpty { lines.append(".PP") }
            let (prose, verbatim) = splitVerbatim(blockLines)
            lines += prose.map { escaped($0.trimmingLeadingSpaces) }
            if !verbatim.isEmpty { lines += [".nf", ".RS 4"] + verbatim.map(escaped) + [".RE", ".fi"] }
        }
        return lines
    }

    /// The lines before the first indented one, and that one and the rest
    /// (a discussion's examples follow its prose).
    static func splitVerbatim(_ lines: [String]) -> (prose: [String], verbatim: [String]) {
        guard let first = lines.firstIndex(where: { $0.hasPrefix("  ") }) else { return (lines, []) }
        return (Array(lines[..<first]), Array(lines[first...]))
    }

    /// One `.TP` item per option: its spellings and value in bold and italics, then its help.
    static func optionItems(_ options: [Option]) -> [String] {
        options.flatMap { option -> [String] in
            let names = option.spellings.map { "\\fB\(escaped($0))\\fR" }.joined(separator: ", ")
            let value = option.value.map { " \\fI\(escaped($0.name))\\fR" } ?? ""
            return [".TP", names + value, escaped(option.help)]
        }
    }

    /// `text` as one line of roff input: `\` as `\e`, `-` as `\-`, ASCII
    /// only (other scalars as `\[uXXXX]`), and a leading `.` or `'` kept
    /// from being read as a request.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += " "
            case _ where scalar.value > 0x7E:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: out.unicodeScalars.append(scalar)
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }
}

extension String {
    /// The text without its leading spaces.
    var trimmingLeadingSpaces: String { String(drop(while: { $0 == " " })) }
}
