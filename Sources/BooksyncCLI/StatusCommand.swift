import BooksyncCore
import BooksyncKit

/// `booksync status`: how the records differ from the last sync, on both sides.
enum StatusCommand: Subcommand {
    static let name = "status"
    static let summary = "show how the records differ from the last sync, locally and remotely"
    static let usage = "booksync status [--offline] [--short] [--json] [--exit-code]"
    static let discussion = """
        Compares each record across the local file, the base (what the last sync
        saw) and the remote document. Record files are only read when their size,
        times or inode changed since booksync last hashed them; the remote is
        listed without document bodies, which are fetched only for records that
        changed on both sides.

        --short prints two columns and the id per line: the local side, then the
        remote side (A added, M modified, D deleted, ! invalid). Records changed
        on both sides show == (converged: same content), MM (mergeable field by
        field), or a conflict as git writes them: UU (both modified), AA (both
        added), UD (modified here, deleted remotely), DU (deleted here, modified
        remotely). Files whose name is not a valid record id are listed with '!'
        and their file name.

        --json prints a stable document, described in README.md.
        """
    static let options: [Option] = [.offline, .short, .json, .exitCode]

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        try arguments.expectNoOperands()
        try arguments.rejectCombined(.short, .json)
        let collection = try context.openCollection()
        let remote = arguments.has(.offline) ? nil : try context.makeRemote(collection)
        let progress = ProgressBar(console: context.console, enabled: !context.quiet)
        let status = try await collection.status(remote: remote, progress: progress.update)
        progress.finish()
        if context.verbose {
            context.console.err("scanned \(status.recordCount) record files, read \(status.filesRead) (the rest unchanged since last hashed)")
        }
        let renderer = StatusRenderer(context: context, root: collection.paths.root)
        if arguments.has(.json) {
            context.console.out(renderer.json(status))
        } else if arguments.has(.short) {
            renderer.short(status).forEach(context.console.out)
        } else {
            renderer.text(status, remoteName: remote?.displayName).forEach(context.console.out)
        }
        if status.needsAttention { return .attention }
        if arguments.has(.exitCode), !status.isClean { return .attention }
        return .success
    }
}

/// Renders a status as git-like text, short columns, or JSON.
struct StatusRenderer {
    let context: CommandContext
    let root: String

    var color: Bool { context.console.colorStdout }

    func path(_ id: RecordID) -> TerminalText { context.shownPath(root + "/" + id.fileName) }
    func path(_ fileName: String) -> TerminalText { context.shownPath(root + "/" + fileName) }

    /// A group of the text output: heading, hint, and the records it takes.
    private struct Group {
        let heading: String
        let hint: String
        let style: Style
        let line: (RecordStatus) -> TerminalText?
    }

    private var groups: [Group] {
        [
            Group(heading: "Local changes not yet pushed:", hint: "(booksync push publishes them)", style: .green) { status in
                if case .localChange(let kind) = status.state { return "\(Self.label(kind.rawValue))\(path(status.id))" }
                return nil
            },
            Group(heading: "Remote changes not yet pulled:", hint: "(booksync pull applies them)", style: .cyan) { status in
                if case .remoteChange(let kind) = status.state { return "\(Self.label(kind.rawValue))\(path(status.id))" }
                return nil
            },
            Group(heading: "Changed the same way on both sides:", hint: "(the next pull or push records them)", style: .green) { status in
                if case .converged = status.state { return "\(Self.label("converged"))\(path(status.id))" }
                return nil
            },
            Group(heading: "Changed on both sides, mergeable field by field:", hint: "(booksync pull merges them, then push publishes the merge)", style: .yellow) { status in
                if case .mergeable = status.state { return "\(Self.label("mergeable"))\(path(status.id))" }
                return nil
            },
            Group(heading: "Conflicts:", hint: Self.conflictHint, style: .red) { status in
                if case .conflict(let kind) = status.state { return "\(Self.describe(kind))\(path(status.id))\(Self.fieldList(kind))" }
                return nil
            },
            Group(heading: "Invalid records (booksync neither sends nor overwrites them):", hint: Self.invalidHint, style: .red) { status in
                switch status.state {
                case .invalidLocal(let diagnostics):
                    return path(status.id) + Self.firstProblem(diagnostics)
                case .invalidRemote(let diagnostics):
                    return "remote \(status.id)\(Self.firstProblem(diagnostics))"
                default:
                    return nil
                }
            },
        ]
    }

    /// A conflict is settled per record by resolve once pull has stored the
    /// remote side, or all at once by pull --ours/--theirs.
    static let conflictHint = "(booksync resolve ID --ours or --theirs settles one after a pull; booksync pull --ours or --theirs settles all)"
    static let invalidHint = "(fix them; booksync validate lists every problem)"
    /// booksync cannot fix a remote document: whoever writes it must.
    static let invalidRemoteHint = "(fix the files, booksync validate lists every problem; fix or delete the remote documents where they are written)"

    static func label(_ text: String) -> String { (text + ":").padding(to: 11) }

    static func describe(_ kind: ConflictKind) -> String {
        switch kind {
        case .bothModified: label("both modified")
        case .bothAdded: label("both added")
        case .modifiedLocallyDeletedRemotely: "modified here, deleted remotely: "
        case .deletedLocallyModifiedRemotely: "deleted here, modified remotely: "
        case .remoteContentUnknown: label("both changed")
        }
    }

    static func fieldList(_ kind: ConflictKind) -> TerminalText {
        if case .bothModified(let fields) = kind, !fields.isEmpty {
            let names: [TerminalText] = fields.map { "'\(name: $0)'" }
            return " (field\(fields.count == 1 ? "" : "s") \(names.joined(separator: ", ")))"
        }
        return ""
    }

    static func firstProblem(_ diagnostics: [RecordDiagnostic]) -> TerminalText {
        var text = diagnostics.first.map(located) ?? ""
        if diagnostics.count > 1 { text += " (and \(diagnostics.count - 1) more)" }
        return text
    }

    /// `:7:12: message` or `: message`, to follow a file path.
    static func located(_ diagnostic: RecordDiagnostic) -> TerminalText {
        (diagnostic.position.map { ":\($0)" } ?? "") + ": \(diagnostic.message)"
    }

    func text(_ status: SyncStatus, remoteName: String?) -> [TerminalText] {
        var lines: [TerminalText] = []
        if let remoteName, !context.quiet { lines += ["Comparing with \(remoteName)", ""] }
        for group in groups {
            let entries = status.records.compactMap(group.line)
            var extra: [TerminalText] = []
            if group.heading.hasPrefix("Invalid") {
                extra = status.unusableFiles.map { "\(path($0.fileName)): \($0.message)" }
                    + status.unusableRemote.map { "remote document '\(name: $0.name)': \($0.message)" }
            }
            guard !(entries + extra).isEmpty else { continue }
            lines.append("\(group.heading)")
            // Only the invalid group asks whether any of it came from the remote.
            let remoteInvalid = group.hint == Self.invalidHint
                && (!status.unusableRemote.isEmpty || status.records.contains { if case .invalidRemote = $0.state { true } else { false } })
            let hint = remoteInvalid ? Self.invalidRemoteHint : group.hint
            if !context.quiet { lines.append("  \(hint)") }
            for entry in entries + extra { lines.append("\t\(group.style.apply(entry, enabled: color))") }
            lines.append("")
        }
        let remoteNote = status.remoteChecked ? "" : " (remote not checked)"
        if status.isClean {
            lines.append("\(plural(status.recordCount, "record")), nothing changed since the last sync\(remoteNote)")
        } else if !context.quiet {
            lines.append("\(summary(status))\(remoteNote)")
        }
        return lines
    }

    func summary(_ status: SyncStatus) -> String {
        var counts: [String: Int] = [:]
        for record in status.records {
            let key: String
            switch record.state {
            case .clean: continue
            case .localChange: key = "local change"
            case .remoteChange: key = "remote change"
            case .converged: key = "converged"
            case .mergeable: key = "mergeable"
            case .conflict: key = "conflict"
            case .invalidLocal, .invalidRemote: key = "invalid"
            }
            counts[key, default: 0] += 1
        }
        counts["invalid", default: 0] += status.unusableFiles.count + status.unusableRemote.count
        let order = ["local change", "remote change", "converged", "mergeable", "conflict", "invalid"]
        // Countable nouns get a plural ("2 conflicts"); the adjectives do not ("2 invalid").
        let adjectives: Set = ["invalid", "converged", "mergeable"]
        let parts = order.compactMap { key -> String? in
            guard let n = counts[key], n > 0 else { return nil }
            return adjectives.contains(key) ? "\(n) \(key)" : plural(n, key)
        }
        return "\(plural(status.recordCount, "record")): " + parts.joined(separator: ", ")
    }

    static func letter(_ kind: ChangeKind) -> String {
        switch kind {
        case .added: "A"
        case .modified: "M"
        case .deleted: "D"
        }
    }

    /// The two `--short` columns for a state.
    static func columns(_ state: SyncState) -> String {
        switch state {
        case .clean: "  "
        case .localChange(let kind): letter(kind) + " "
        case .remoteChange(let kind): " " + letter(kind)
        case .converged: "=="
        case .mergeable: "MM"
        case .conflict(.bothAdded): "AA"
        case .conflict(.modifiedLocallyDeletedRemotely): "UD"
        case .conflict(.deletedLocallyModifiedRemotely): "DU"
        case .conflict(.bothModified), .conflict(.remoteContentUnknown): "UU"
        case .invalidLocal: "! "
        case .invalidRemote: " !"
        }
    }

    static func style(_ state: SyncState) -> Style {
        switch state {
        case .clean, .localChange, .converged: .green
        case .remoteChange: .cyan
        case .mergeable: .yellow
        case .conflict, .invalidLocal, .invalidRemote: .red
        }
    }

    /// Ids are escaped (`\` as `\\`) but never abbreviated: scripts read them.
    func short(_ status: SyncStatus) -> [TerminalText] {
        var lines: [TerminalText] = status.records.map { record in
            "\(Self.style(record.state).apply("\(Self.columns(record.state))", enabled: color)) \(full: record.id)"
        }
        lines += status.unusableFiles.map { "\(Style.red.apply("! ", enabled: color)) \(name: $0.fileName, full: true)" }
        lines += status.unusableRemote.map { "\(Style.red.apply(" !", enabled: color)) \(name: $0.name, full: true)" }
        return lines
    }

    /// `local`, `remote` and `class` of a state for `--json`.
    static func jsonSides(_ state: SyncState) -> (local: String?, remote: String?, kind: String) {
        switch state {
        case .clean: (nil, nil, "clean")
        case .localChange(let k): (k.rawValue, nil, "local-change")
        case .remoteChange(let k): (nil, k.rawValue, "remote-change")
        case .converged: ("changed", "changed", "converged")
        case .mergeable: ("modified", "modified", "mergeable")
        case .conflict(.bothModified): ("modified", "modified", "conflict")
        case .conflict(.bothAdded): ("added", "added", "conflict")
        case .conflict(.modifiedLocallyDeletedRemotely): ("modified", "deleted", "conflict")
        case .conflict(.deletedLocallyModifiedRemotely): ("deleted", "modified", "conflict")
        case .conflict(.remoteContentUnknown): ("changed", "changed", "conflict")
        case .invalidLocal: ("invalid", nil, "invalid")
        case .invalidRemote: (nil, "invalid", "invalid")
        }
    }

    /// The `--json` document (version 1). Stable: fields are only ever added.
    func json(_ status: SyncStatus) -> TerminalText {
        var counts: Fields = [:]
        for name in ["local-change", "remote-change", "converged", "mergeable", "conflict", "invalid"] { counts[name] = .integer(0) }
        let records: [Value] = status.records.map { record in
            let sides = Self.jsonSides(record.state)
            var fields: Fields = [
                "id": .string(record.id.rawValue),
                "file": .string(record.id.fileName),
                "class": .string(sides.kind),
                "local": sides.local.map(Value.string) ?? .null,
                "remote": sides.remote.map(Value.string) ?? .null,
            ]
            switch record.state {
            case .invalidLocal(let diagnostics), .invalidRemote(let diagnostics):
                fields["problems"] = JSONDocuments.problems(diagnostics)
            case .conflict(.bothModified(let names)):
                fields["conflictFields"] = .array(names.map(Value.string))
            default:
                break
            }
            if case .integer(let n)? = counts[sides.kind] { counts[sides.kind] = .integer(n + 1) }
            return .map(fields)
        }
        counts["unusableFiles"] = .integer(Int64(status.unusableFiles.count))
        counts["unusableRemote"] = .integer(Int64(status.unusableRemote.count))
        let document: Fields = [
            "version": .integer(1),
            "collection": .string(root),
            "remoteChecked": .bool(status.remoteChecked),
            "recordFiles": .integer(Int64(status.recordCount)),
            "remoteDocuments": status.remoteCount.map { .integer(Int64($0)) } ?? .null,
            "records": .array(records),
            "unusableFiles": JSONDocuments.unusableFiles(status.unusableFiles),
            "unusableRemote": JSONDocuments.unusableRemote(status.unusableRemote),
            "counts": .map(counts),
            "clean": .bool(status.isClean),
        ]
        return JSONDocuments.text(document)
    }
}
