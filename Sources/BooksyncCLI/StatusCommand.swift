import BooksyncCore
import BooksyncKit

/// `booksync status`: how the records differ from the last sync.
enum StatusCommand: Subcommand {
    static let name = "status"
    static let summary = "show how the records differ from the last sync"
    static let usage = "booksync status [--offline] [--short] [--json] [--exit-code]"
    static let discussion = """
        Compares each record file with the base (what the last sync saw). Record
        files are only read when their size, times or inode changed since booksync
        last hashed them, so status on an unchanged tree reads no record file.

        --short prints two columns and the id per line: the first is the local
        side (A added, M modified, D deleted, ! invalid), the second the remote
        side (blank when not checked). Files whose name is not a valid record id
        are listed with '!' and their file name.

        --json prints a stable document, described in README.md.

        The Firestore side is not compared yet: status currently reports local
        changes only, as with --offline.
        """
    static let options = [
        OptionSpec("--offline", help: "do not contact the remote; report local changes only"),
        OptionSpec("--short", short: "s", help: "one line per record: two status columns and the id"),
        OptionSpec("--json", help: "print a JSON document (see README.md)"),
        OptionSpec("--exit-code", help: "exit 1 when anything differs from the base"),
    ]

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        guard arguments.positionals.isEmpty else {
            throw UsageError(message: "unexpected argument '\(arguments.positionals[0])'", command: name)
        }
        if arguments.has("--short"), arguments.has("--json") {
            throw UsageError(message: "--short and --json cannot be combined", command: name)
        }
        let collection = try context.openCollection()
        if !arguments.has("--offline"), !context.quiet {
            context.console.err("booksync: note: this version does not compare with Firestore yet; showing local changes only (as --offline)")
        }
        let status = try await collection.localStatus()
        if context.verbose {
            context.console.err("scanned \(status.recordCount) record files, read \(status.filesRead) (the rest unchanged since last hashed)")
        }
        let renderer = StatusRenderer(context: context, root: collection.paths.root)
        if arguments.has("--json") {
            context.console.out(renderer.json(status))
        } else if arguments.has("--short") {
            renderer.short(status).forEach(context.console.out)
        } else {
            renderer.text(status).forEach(context.console.out)
        }
        if status.needsAttention { return .attention }
        if arguments.has("--exit-code"), !status.isClean { return .attention }
        return .success
    }
}

/// Renders a status as git-like text, short columns, or JSON.
struct StatusRenderer {
    let context: CommandContext
    let root: String

    var color: Bool { context.console.colorStdout }

    func path(_ id: RecordID) -> String { context.display(root + "/" + id.fileName) }
    func path(_ fileName: String) -> String { context.display(root + "/" + fileName) }

    static func letter(_ change: LocalChange) -> String {
        switch change {
        case .added: "A"
        case .modified: "M"
        case .deleted: "D"
        case .invalid: "!"
        }
    }

    func style(_ change: LocalChange) -> Style {
        switch change {
        case .added: .green
        case .modified: .yellow
        case .deleted, .invalid: .red
        }
    }

    func text(_ status: LocalStatus) -> [String] {
        var lines: [String] = []
        let changes = status.changes.filter { $0.change != .invalid }
        let invalid = status.changes.filter { $0.change == .invalid }
        if !changes.isEmpty {
            lines.append("Local changes not yet pushed:")
            if !context.quiet { lines.append("  (booksync push publishes them)") }
            for entry in changes {
                let label = (entry.change.rawValue + ":").padding(to: 10)
                lines.append("\t" + Style.apply(style(entry.change), label + path(entry.id), color))
            }
            lines.append("")
        }
        if !invalid.isEmpty || !status.unusableFiles.isEmpty {
            lines.append("Invalid record files (booksync neither sends nor overwrites them):")
            if !context.quiet { lines.append("  (fix them; booksync validate lists every problem)") }
            for entry in invalid {
                var first = entry.diagnostics.first.map(Self.located) ?? ""
                if entry.diagnostics.count > 1 { first += " (and \(entry.diagnostics.count - 1) more)" }
                lines.append("\t" + Style.apply(.red, path(entry.id) + first, color))
            }
            for file in status.unusableFiles {
                lines.append("\t" + Style.apply(.red, path(file.fileName) + ": " + file.message, color))
            }
            lines.append("")
        }
        if status.isClean {
            lines.append("\(plural(status.recordCount, "record")), nothing changed since the last sync")
        } else if !context.quiet {
            var parts: [String] = []
            if !changes.isEmpty { parts.append(plural(changes.count, "local change")) }
            let invalidCount = invalid.count + status.unusableFiles.count
            if invalidCount > 0 { parts.append("\(invalidCount) invalid") }
            lines.append("\(plural(status.recordCount, "record")): " + parts.joined(separator: ", "))
        }
        return lines
    }

    /// `:7:12: message` or `: message`, to follow a file path.
    static func located(_ diagnostic: RecordDiagnostic) -> String {
        (diagnostic.position.map { ":\($0)" } ?? "") + ": " + diagnostic.message
    }

    func short(_ status: LocalStatus) -> [String] {
        var lines = status.changes.map { entry in
            Style.apply(style(entry.change), Self.letter(entry.change), color) + "  " + entry.id.rawValue
        }
        lines += status.unusableFiles.map { Style.apply(.red, "!", color) + "  " + $0.fileName }
        return lines
    }

    /// The `--json` document (version 1). Stable: fields are only ever added.
    func json(_ status: LocalStatus) -> String {
        let records: [Value] = status.changes.map { entry in
            var fields: Fields = [
                "id": .string(entry.id.rawValue),
                "file": .string(entry.id.fileName),
                "local": .string(entry.change.rawValue),
                "remote": .null,
                "class": .string(entry.change == .invalid ? "invalid" : "local-change"),
            ]
            if entry.change == .invalid {
                fields["problems"] = .array(entry.diagnostics.map { .string($0.description) })
            }
            return .map(fields)
        }
        let unusable: [Value] = status.unusableFiles.map { .map(["file": .string($0.fileName), "problem": .string($0.message)]) }
        var counts: Fields = [:]
        for change in LocalChange.allCases {
            counts[change.rawValue] = .integer(Int64(status.changes.filter { $0.change == change }.count))
        }
        counts["unusableFiles"] = .integer(Int64(status.unusableFiles.count))
        let document: Fields = [
            "version": .integer(1),
            "collection": .string(root),
            "remoteChecked": .bool(false),
            "recordFiles": .integer(Int64(status.recordCount)),
            "records": .array(records),
            "unusableFiles": .array(unusable),
            "counts": .map(counts),
            "clean": .bool(status.isClean),
        ]
        let bytes = CanonicalJSON.encode(document, leadingKeys: ["version"])
        return String(decoding: bytes.dropLast(), as: UTF8.self)
    }
}

extension Style {
    static func apply(_ style: Style, _ text: String, _ enabled: Bool) -> String { style.apply(text, enabled: enabled) }
}
