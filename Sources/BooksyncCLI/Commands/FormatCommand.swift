import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync fmt`: rewrite record files in canonical form.
enum FormatCommand: Subcommand {
    static let name = "fmt"
    static let summary = "rewrite record files in canonical form"
    static let usage = "booksync fmt [--check | --dry-run] [FILE|PATHSPEC...]"
    static let discussion = """
        Rewrites the named files (or those pathspecs select: ids, folders,
        globs), or every record file of the collection, in
        the canonical form booksync writes and hashes (two-space indent, id and
        the required fields first, other keys sorted, one final newline). Only
        the bytes change, never a value, so the content hash is unchanged.
        Files that do not parse are reported and left untouched. Each file is
        replaced atomically.
        """
    static let options: [Option] = [.check, .dryRun.explained("print the files that would be rewritten; write nothing")]
    static let exclusiveOptions: [(Option, Option)] = [(.check, .dryRun)]

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        let collection = try context.openCollection()
        let dryRun = arguments.has(.dryRun)
        let checkOnly = arguments.has(.check) || dryRun
        let lock = checkOnly ? nil : try await collection.lock(onStaleLock: SyncCommandSupport.tookOverLockNotice(context))
        defer { lock?.release() }
        // Relative paths from the current directory, else the collection (`-C DIR`), as for status.
        let files = arguments.positionals
        var failed = 0
        var changed = 0
        var notWritten = 0
        var firstWriteProblem: String?
        // Reports are printed as each batch is done: a million files are never a million reports in memory.
        let checked = try await collection.format(files, checkOnly: checkOnly, operandsFromRoot: context.operandsFromCollection) { report in
            let path = context.shownPath(report.path)
            switch report.outcome {
            case .alreadyCanonical:
                break
            case .reformatted:
                changed += 1
                if !context.quiet { context.console.out("formatted \(path)") }
            case .needsFormatting:
                changed += 1
                if dryRun {
                    if !context.quiet { context.console.out("would format \(path)") }
                } else {
                    context.console.out("\(path)")
                }
            case .failed(let diagnostic):
                failed += 1
                context.console.err("\(path)\(StatusRenderer.located(diagnostic))")
            case .notWritten(let diagnostic):
                notWritten += 1
                firstWriteProblem = firstWriteProblem ?? diagnostic.message
                context.console.err("\(path)\(StatusRenderer.located(diagnostic))")
            }
        }
        if !context.quiet {
            let verb = dryRun ? "would be formatted" : checkOnly ? "need formatting" : "formatted"
            // The real cause, not "could not be parsed", for files that parse but could not be written.
            let unwritten: TerminalText = firstWriteProblem.map { ", \(notWritten) could not be read or written (\($0))" } ?? ""
            context.console.err("\(dryRun ? "dry run: nothing written; " : "")\(plural(checked, "file")) checked, \(changed) \(verb), \(failed) could not be parsed\(unwritten)")
        }
        // A dry run exits as the real run would: changes are its job, not a finding.
        if failed > 0 || notWritten > 0 || (checkOnly && !dryRun && changed > 0) { return .attention }
        return .success
    }
}
