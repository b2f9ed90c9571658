import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync diff`: the three versions of records, field by field.
enum DiffCommand: Subcommand {
    static let name = "diff"
    static let summary = "show base, local and remote versions of records field by field"
    static let usage = "booksync diff [ID...] [--remote NAME] [--offline] [--json|--markdown]"
    static let discussion = """
        For each named record (or every record that differs from the base), lists
        the fields whose value is not the same in the base, the local file and
        the remote document, and which side changed each: local, remote, both
        (the same way) or conflict. Maps on both sides are compared key by key
        and a nested field is named by its path, as in Firestore: stats.rating,
        with `backticks` around a name that is not letters, digits and _. Values are shown as they are
        written in record files. IDs may also be given as file names.
        With --offline the remote side is taken to be the base. An invalid
        record is shown with every problem; like status, diff exits 1 when a
        record is invalid or in conflict. --markdown prints one table row per
        field for a pull-request comment, every value escaped as plan --markdown
        escapes it.
        """
    static let options: [Option] = [.remote, .offline.explained("do not contact the remote; compare the file with the base only"), .json, PlanCommand.markdown]
    static let exclusiveOptions: [(Option, Option)] = [(.json, PlanCommand.markdown)]

    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { !arguments.has(.offline) }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        let collection = try context.openCollection(arguments)
        GitDriverCheck.warnIfOutdated(collectionRoot: collection.paths.root, context: context)
        let ids = try collection.recordFiles.recordIDs(arguments.positionals)
        let remote = arguments.has(.offline) ? nil : try context.makeRemote(collection)
        let progress = context.progressDisplay()
        let result = try await collection.diff(ids, remote: remote, progress: progress.update)
        progress.finish()
        let exitCode: ExitCode = result.needsAttention ? .attention : .success
        if arguments.has(.json) {
            context.console.out(JSONDocuments.text(json(result)))
            return exitCode
        }
        if arguments.has(PlanCommand.markdown) {
            // Escaped for GitHub and free of control characters by `MarkdownText.escape`.
            let schema = collection.rules.schema
            context.console.out(TerminalText(trusted: DiffMarkdown.render(result, schema: { $0.isTopLevel ? schema : nil })))
            return exitCode
        }
        let color = context.console.colorStdout
        let diffs = result.records
        for (i, diff) in diffs.enumerated() {
            if i > 0 { context.console.out("") }
            let path = context.shownPath(collection.paths.root + "/" + diff.id.fileName)
            let heading: TerminalText = "\(path): \(describe(diff.state))"
            context.console.out(Style.bold.apply(heading, enabled: color))
            let problems = problems(diff.state)
            for problem in problems {
                context.console.out("  \(Style.red.apply("problem: \(problem.description)", enabled: color))")
            }
            if case .invalidLocal = diff.state, !diff.inLocal {
                // The file is there but does not parse: its fields are unknown, not deleted.
                context.console.out("  (the file is invalid, so its fields cannot be compared; fix the problem, then run diff again)")
            } else if diff.fields.isEmpty, problems.isEmpty {
                context.console.out("  (no field differs)")
            }
            for field in diff.fields {
                let style: Style = field.change == .conflict ? .red : (field.change == .remote ? .cyan : .green)
                context.console.out("  \(style.apply("\(name: field.name) (\(label(field.change)))", enabled: color))")
                context.console.out("    base:   \(show(field.base, present: diff.inBase))")
                context.console.out("    local:  \(Style.green.apply(show(field.local, present: diff.inLocal), enabled: color && field.change != .remote))")
                context.console.out("    remote: \(Style.cyan.apply(show(field.remote, present: diff.inRemote), enabled: color && field.change != .local))")
            }
        }
        if !diffs.isEmpty, !(result.unusableFiles.isEmpty && result.unusableRemote.isEmpty) { context.console.out("") }
        for file in result.unusableFiles {
            let path = context.shownPath(collection.paths.root + "/" + file.fileName)
            context.console.out(Style.red.apply("\(path): \(file.message)", enabled: color))
        }
        for document in result.unusableRemote {
            context.console.out(Style.red.apply("remote document '\(name: document.name)': \(document.message)", enabled: color))
        }
        if diffs.isEmpty, result.unusableFiles.isEmpty, result.unusableRemote.isEmpty, !context.quiet {
            context.console.out("no differences")
        }
        return exitCode
    }

    /// Every problem of an invalid record: diff shows them all, one per line.
    static func problems(_ state: SyncState) -> [RecordDiagnostic] {
        switch state {
        case .invalidLocal(let diagnostics), .invalidRemote(let diagnostics): diagnostics
        default: []
        }
    }

    static func describe(_ state: SyncState) -> TerminalText {
        switch state {
        case .clean, .localChange, .remoteChange, .converged, .mergeable: "\(DiffMarkdown.describe(state))"
        case .conflict(let kind): "conflict, \(StatusRenderer.describe(kind).trimmingWhitespace.trimmingSuffix(":"))\(StatusRenderer.fieldList(kind))"
        case .invalidLocal(let diagnostics): "invalid file (\(plural(diagnostics.count, "problem")); booksync neither sends nor overwrites it)"
        case .invalidRemote(let diagnostics): "invalid remote document (\(plural(diagnostics.count, "problem")); booksync never pulls it)"
        case .leftScope: "the document no longer matches the scope; pull keeps the file and lets the base go"
        case .outsideScope: "a new record outside the scope; push does not create it"
        }
    }

    static func label(_ change: FieldChange) -> String {
        switch change {
        case .local: "changed locally"
        case .remote: "changed remotely"
        case .both: "changed the same way on both sides"
        case .conflict: "conflict"
        }
    }

    /// A value as written in record files; strings in it are JSON-escaped, and
    /// the scalars JSON leaves raw but a terminal acts on are written `\uXXXX`.
    static func show(_ value: Value?, present: Bool) -> TerminalText {
        guard present else { return "(record absent)" }
        return value.map { TerminalText(json: CanonicalJSON.encodeInline($0)) } ?? "(field absent)"
    }

    /// The `--json` document (version 1): `records`, one object per record
    /// shown, with `id`, `file`, `class` (as in `status --json`), `inBase`,
    /// `inLocal`, `inRemote`, `fields` (`name`: the field's path in dotted
    /// notation, `path`: the same as a list of names, outermost first,
    /// `change`: local, remote, both or conflict, and the `base`, `local`,
    /// `remote` values present), and for
    /// an invalid record `problems` (as in `status --json`); `unusableFiles`
    /// and `unusableRemote` as in `status --json` (empty when records are
    /// named). Stable: fields are only ever added.
    static func json(_ result: CollectionDiff) -> Fields {
        let records: [Value] = result.records.map { diff in
            let fields: [Value] = diff.fields.map { field in
                var entry: Fields = [
                    "name": .string(field.name), "path": .array(field.path.segments.map(Value.string)),
                    "change": .string(field.change.rawValue),
                ]
                if let base = field.base { entry["base"] = base }
                if let local = field.local { entry["local"] = local }
                if let remote = field.remote { entry["remote"] = remote }
                return .map(entry)
            }
            var record: Fields = [
                "id": .string(diff.id.rawValue), "file": .string(diff.id.fileName),
                "class": .string(diff.state.statusNames.statusClass.json),
                "inBase": .bool(diff.inBase), "inLocal": .bool(diff.inLocal), "inRemote": .bool(diff.inRemote),
                "fields": .array(fields),
            ]
            let problems = problems(diff.state)
            if !problems.isEmpty { record["problems"] = JSONDocuments.problems(problems) }
            return .map(record)
        }
        return [
            "version": .integer(1), "records": .array(records),
            "unusableFiles": JSONDocuments.unusableFiles(result.unusableFiles),
            "unusableRemote": JSONDocuments.unusableRemote(result.unusableRemote),
        ]
    }
}

/// `booksync resolve`: settle conflicts that pull found.
enum ResolveCommand: Subcommand {
    static let name = "resolve"
    static let summary = "settle conflicts: keep ours, take theirs, or accept the edited file"
    static let usage = "booksync resolve ID... [--ours|--theirs] [--remote NAME] [--dry-run]"
    static let discussion = """
        Settles conflicts that pull stored in .booksync/conflicts/. --theirs
        takes the remote value of each conflicting field (nested ones by path,
        as stats.rating), --ours keeps ours;
        either way every change made on one side only is kept, and a record
        deleted on one side is kept or deleted as a whole. Without a flag, the
        local file as you edited it is the resolution (it must be valid; a
        deleted file resolves to a delete). Then push publishes the
        result, guarded by the remote revision pull saw: if the remote changed
        again meanwhile, the record becomes a conflict again instead of being
        overwritten. No network is needed.
        """
    static let options: [Option] = [
        .ours.explained("our value for each conflicting field"), .theirs.explained("their value for each conflicting field"), .remote,
        .dryRun.explained("print what would be resolved; write nothing"),
    ]
    static let exclusiveOptions: [(Option, Option)] = [(.ours, .theirs)]

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        guard !arguments.positionals.isEmpty else {
            throw arguments.usageError("name the records to resolve (booksync status lists conflicts)")
        }
        let choice: ResolveChoice = arguments.has(.ours) ? .ours : (arguments.has(.theirs) ? .theirs : .edited)
        let collection = try context.openCollection(arguments)
        let ids = try collection.recordFiles.recordIDs(arguments.positionals)
        let dryRun = arguments.has(.dryRun)
        let outcomes = try collection.resolve(ids, choice: choice, dryRun: dryRun, onStaleLock: SyncCommandSupport.staleLockNotice(context, collection))
        let resolved: TerminalText = dryRun ? "would resolve" : "resolved"
        var problems = 0
        for (id, outcome) in outcomes {
            let path = context.shownPath(collection.paths.root + "/" + id.fileName)
            switch outcome {
            case .keptLocal where !FileSystem.exists(collection.paths.recordFile(id.fileName)):
                context.console.out("\(resolved) \(path) with the local delete; booksync push deletes it remotely")
            case .keptLocal:
                context.console.out("\(resolved) \(path) with the local version; booksync push publishes it")
            case .tookRemote:
                context.console.out("\(resolved) \(path) with the remote version")
            case .noConflict:
                problems += 1
                let elsewhere = collection.otherRemotesWithConflict(id)
                if let other = elsewhere.first {
                    let remote: TerminalText = collection.remote.isOrigin ? "" : " with remote '\(name: collection.remote.name)'"
                    context.console.err("booksync: '\(id)' has no unresolved conflict\(remote); remote '\(name: other)' has one: "
                        + "booksync resolve --remote \(name: other) \(id)")
                } else {
                    context.console.err("booksync: '\(id)' has no unresolved conflict (booksync pull detects and stores conflicts)")
                }
            case .invalidLocal(let diagnostics):
                problems += 1
                context.console.err("\(path)\(StatusRenderer.firstProblem(diagnostics)); fix the file, then resolve again")
            case .changedMeanwhile:
                problems += 1
                context.console.err("\(path): changed while booksync was resolving it, so it was left as saved; run booksync resolve again")
            }
        }
        if dryRun, !context.quiet { context.console.err("dry run: nothing written") }
        return problems == 0 ? .success : .attention
    }
}
