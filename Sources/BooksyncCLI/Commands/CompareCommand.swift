import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync compare`: two remotes' documents compared by content, read only.
enum CompareCommand: Subcommand {
    static let name = "compare"
    static let summary = "compare two remotes' documents by content, without touching either or the files"
    static let usage = "booksync compare REMOTE_A REMOTE_B [PATHSPEC...] [--json|--markdown]"
    static let discussion = """
        Reads the documents of two remotes of this collection (origin or names
        from booksync remote) and lists the records only one holds, those both
        hold with different content (field by field, maps key by key), and
        documents that cannot be records; identical records are only counted.
        PATHSPECs narrow the records compared. Neither the files nor any base
        is read or written, so no sync state is needed.

        Every document is read with its body (one billed read each): REMOTE_A
        keeping only each record's hash, then REMOTE_B; the records that
        differ are read once more on REMOTE_A to show their fields (ids named
        one by one are read by name instead). The billed reads on each remote
        are printed last. --json prints a JSON document (the Commands article
        describes it), --markdown a pull-request comment with a row per
        differing field.

        Exits 0 when the two hold the same records with the same content, 1
        when they differ (or a document is invalid), 2 on a usage error (the
        same target twice), 3 when a remote fails.
        """
    static let markdown = Option("--markdown", help: "print Markdown for a pull-request comment")
    static let options: [Option] = [.json.explained("print a JSON document instead of the lines"), markdown]
    static let exclusiveOptions: [(Option, Option)] = [(markdown, .json)]

    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { true }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        guard arguments.positionals.count >= 2 else {
            throw arguments.usageError("name two remotes to compare, as booksync remote lists them (origin is config.json's)")
        }
        let names = (arguments.positionals[0], arguments.positionals[1])
        for name in [names.0, names.1] where name != RemoteList.origin {
            if let problem = RemoteList.problem(withName: name) { throw arguments.usageError(problem) }
        }
        guard names.0 != names.1 else { throw arguments.usageError("'\(names.0)' twice: name two different remotes") }
        let opened = try context.openCollection()
        let a = try opened.selectingRemote(names.0, environment: context.environment)
        let b = try opened.selectingRemote(names.1, environment: context.environment)
        let scope = try opened.recordFiles.scope(Array(arguments.positionals.dropFirst(2)), fromRoot: context.operandsFromCollection)
        let remoteA = try context.makeRemote(a, announce: false)
        let remoteB = try context.makeRemote(b, announce: false)
        if let identity = remoteA.identity, identity == remoteB.identity {
            throw arguments.usageError("'\(names.0)' and '\(names.1)' are the same target (\(identity)): nothing to compare")
        }
        let progress = context.progressDisplay()
        let result = try await TargetComparison.compare(remoteA, remoteB, scope: scope, progress: progress.update)
        progress.finish()
        let compared = ComparedTargets(
            result: result,
            a: .init(remote: names.0, place: remoteA.displayName, billedReads: remoteA.usage.totals.billedReads),
            b: .init(remote: names.1, place: remoteB.displayName, billedReads: remoteB.usage.totals.billedReads))
        if arguments.has(.json) {
            context.console.out(JSONDocuments.text(CompareRenderer.json(compared)))
        } else if arguments.has(markdown) {
            // Escaped for GitHub and free of control characters by `MarkdownText.escape`.
            context.console.out(TerminalText(trusted: String(CompareRenderer.markdown(compared).dropLast())))
        } else {
            for line in CompareRenderer.lines(compared, color: context.console.colorStdout, quiet: context.quiet) { context.console.out(line) }
        }
        return result.isSame ? .success : .attention
    }
}
