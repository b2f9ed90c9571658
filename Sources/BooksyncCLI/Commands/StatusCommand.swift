import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync status`: how the records differ from the last sync, on both sides.
enum StatusCommand: Subcommand {
    static let name = "status"
    static let summary = "show how the records differ from the last sync, locally and remotely"
    static let usage = "booksync status [PATHSPEC...] [--remote NAME] [--offline] [--full] [--short] [--json] [--exit-code]"
    static let discussion = """
        Compares each record across the local file, the base (what the last sync
        saw) and the remote document. Record files are only read when their size,
        times or inode changed since booksync last hashed them; the remote is
        listed without document bodies, which are fetched only for documents
        that changed since the last sync. With a change field (init
        --change-field), the remote side is one query for the documents changed
        since the last pull plus one count, not a listing of every name; --full
        lists every name anyway.

        --short prints two columns and the id per line: the local side, then the
        remote side (A added, M modified, D deleted, ! invalid). Records changed
        on both sides show == (converged: same content), MM (mergeable field by
        field), or a conflict as git writes them: UU (both modified), AA (both
        added), UD (modified here, deleted remotely), DU (deleted here, modified
        remotely). Files whose name is not a valid record id are listed with '!'
        and their file name.

        --json prints a stable document, described in the Commands article
        of the docs.

        PATHSPECs narrow it to some records: an id (dune), a file (dune.json,
        ./-Nq1.json), a folder (dune/reviews/) or a quoted glob ('sci-*',
        '**/r1.json'); put -- before one that starts with '-'. Ids alone are
        read from the remote by name, not by listing the collection.
        """
    static let options: [Option] = [.remote, .offline, .full, .short, .json, .exitCode]

    static let exclusiveOptions: [(Option, Option)] = [(.short, .json), (.offline, .full)]

    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { !arguments.has(.offline) }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        let collection = try context.openCollection(arguments)
        let scope = try collection.recordFiles.scope(arguments.positionals, fromRoot: context.operandsFromCollection)
        GitDriverCheck.warnIfOutdated(collectionRoot: collection.paths.root, context: context)
        let remote = arguments.has(.offline) ? nil : try context.makeRemote(collection)
        let progress = context.progressDisplay()
        // Offline, a running `booksync watch` can say what changed (nothing in the collection names it).
        var watcher: WatcherSocket?
        if remote == nil {
            do {
                let socket = try WatcherSocket.forCollection(root: collection.paths.root, environment: context.environment, create: false)
                watcher = FileSystem.exists(socket.path) ? socket : nil
            } catch {
                // A folder that is not private is worth saying; one that is missing means no watch ever ran.
                if context.verbose, !error.missingFolder { context.console.err("watcher: not asked: \(error.description)") }
            }
        }
        let status = try await collection.status(remote: remote, fullListing: arguments.has(.full), scope: scope, watcher: watcher,
                                                 progress: progress.update)
        progress.finish()
        SyncCommandSupport.explain(status.remoteRead, context: context)
        if context.verbose {
            if let note = status.watcherNote {
                context.console.err("watcher: \(note)")
            }
            context.console.err("scanned \(status.recordCount) record files, read \(status.filesRead) (the rest unchanged since last hashed)")
        }
        let renderer = StatusRenderer(context: context, root: collection.paths.root)
        if arguments.has(.json) {
            context.console.out(renderer.json(status))
        } else if arguments.has(.short) {
            renderer.short(status, emit: context.console.out)
        } else {
            renderer.text(status, remoteName: remote.map { StatusRenderer.header($0.displayName, collection.remote) }, emit: context.console.out)
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

    /// A record's entry in its class's group of the text output.
    func entry(_ record: RecordStatus) -> TerminalText {
        switch record.state {
        case .clean: path(record.id)
        case .localChange(let kind), .remoteChange(let kind): "\(Self.label(kind.rawValue))\(path(record.id))"
        case .converged: "\(Self.label("converged"))\(path(record.id))"
        case .mergeable: "\(Self.label("mergeable"))\(path(record.id))"
        case .conflict(let kind): "\(Self.describe(kind))\(path(record.id))\(Self.fieldList(kind))"
        case .invalidLocal(let diagnostics): path(record.id) + Self.firstProblem(diagnostics)
        case .invalidRemote(let diagnostics): "remote \(record.id)\(Self.firstProblem(diagnostics))"
        case .leftScope: "\(Self.label("left scope"))\(path(record.id)) (the file stays; pull lets the base go)"
        case .outsideScope: path(record.id)
        }
    }

    static func label(_ text: String) -> String { (text + ":").padding(to: 11) }

    /// What the header names: the remote too when it is not origin (stderr says why it was chosen).
    static func header(_ displayName: String, _ remote: SelectedRemote) -> String {
        remote.isOrigin ? displayName : "remote '\(remote.name)', \(displayName)"
    }

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
            let names: [TerminalText] = fields.map { "'\(name: $0.description)'" }
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

    /// The lines of the text form, each handed to `emit` as it is made (a
    /// million records never synced are a million lines, never held at once).
    func text(_ status: SyncStatus, remoteName: String?, emit: (TerminalText) -> Void) {
        if let remoteName, !context.quiet { ["Comparing with \(remoteName)", ""].forEach(emit) }
        for statusClass in StatusClass.allCases {
            guard let heading = statusClass.heading else { continue }
            let records = status.records.lazy.filter { $0.state.statusNames.statusClass == statusClass }
            var others: [TerminalText] = []
            var hint = statusClass.hint
            if statusClass == .invalid {
                others = status.unusableFiles.map { "\(path($0.fileName)): \($0.message)" }
                    + status.unusableRemote.map { "remote document '\(name: $0.name)': \($0.message)" }
                if !status.unusableRemote.isEmpty || status.records.contains(where: { if case .invalidRemote = $0.state { true } else { false } }) {
                    hint = StatusClass.invalidRemoteHint
                }
            }
            guard !records.isEmpty || !others.isEmpty else { continue }
            emit("\(heading)")
            if !context.quiet { emit("  \(hint)") }
            for record in records { emit("\t\(statusClass.style.apply(entry(record), enabled: color))") }
            for other in others { emit("\t\(statusClass.style.apply(other, enabled: color))") }
            emit("")
        }
        let remoteNote = status.remoteChecked ? "" : " (remote not checked)"
        if status.isClean {
            emit("\(plural(status.recordCount, "record")), nothing changed since the last sync\(remoteNote)")
        } else if !context.quiet {
            emit("\(summary(status))\(remoteNote)")
        }
    }

    func summary(_ status: SyncStatus) -> String {
        var counts: [StatusClass: Int] = [:]
        for record in status.records { counts[record.state.statusNames.statusClass, default: 0] += 1 }
        counts[.invalid, default: 0] += status.unusableFiles.count + status.unusableRemote.count
        let parts = StatusClass.allCases.compactMap { statusClass -> String? in
            guard statusClass != .clean, let n = counts[statusClass], n > 0 else { return nil }
            return statusClass.summary(n)
        }
        return "\(plural(status.recordCount, "record")): " + parts.joined(separator: ", ")
    }

    /// Ids are escaped (`\` as `\\`) but never abbreviated: scripts read them.
    func short(_ status: SyncStatus, emit: (TerminalText) -> Void) {
        for record in status.records {
            let names = record.state.statusNames
            emit("\(names.statusClass.style.apply("\(names.short)", enabled: color)) \(full: record.id)")
        }
        status.unusableFiles.forEach { emit("\(Style.red.apply("! ", enabled: color)) \(name: $0.fileName, full: true)") }
        status.unusableRemote.forEach { emit("\(Style.red.apply(" !", enabled: color)) \(name: $0.name, full: true)") }
    }

    /// The `--json` document (version 1). Stable: fields are only ever added.
    func json(_ status: SyncStatus) -> TerminalText {
        var counts: Fields = [:]
        for statusClass in StatusClass.allCases where statusClass != .clean { counts[statusClass.json] = .integer(0) }
        let records: [Value] = status.records.map { record in
            let names = record.state.statusNames
            var fields: Fields = [
                "id": .string(record.id.rawValue),
                "file": .string(record.id.fileName),
                "class": .string(names.statusClass.json),
                "local": names.local.map(Value.string) ?? .null,
                "remote": names.remote.map(Value.string) ?? .null,
            ]
            switch record.state {
            case .invalidLocal(let diagnostics), .invalidRemote(let diagnostics):
                fields["problems"] = JSONDocuments.problems(diagnostics)
            case .conflict(.bothModified(let paths)):
                JSONDocuments.conflictPaths(paths, into: &fields)
            default:
                break
            }
            if case .integer(let n)? = counts[names.statusClass.json] { counts[names.statusClass.json] = .integer(n + 1) }
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
