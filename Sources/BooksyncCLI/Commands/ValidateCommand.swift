import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync validate`: check record files against the schema and Firestore's limits.
enum ValidateCommand: Subcommand {
    static let name = "validate"
    static let summary = "check record files against the schema and Firestore's limits"
    static let usage = "booksync validate [--json] [FILE|PATHSPEC...]"
    static let discussion = """
        Checks the named files (or those pathspecs select: ids, folders,
        globs), or every record file of the collection: JSON
        syntax (with line:column), the file name encoding, required fields and
        their types (config.json schema.required), optional fields' types,
        allowed values (enum) and, under "strict", fields the schema does not
        declare (schema.optional), id matching the file name,
        and Firestore's limits (1 MiB per document, 20 levels of nesting, no
        array directly inside an array, field names). Every problem of a file
        is reported, except after a JSON syntax error, where the parser cannot
        go on. Prints one line per problem as FILE[:LINE:COLUMN]: MESSAGE and
        exits 1 if there are any. Under "strict": "warning", undeclared fields
        are printed as FILE: warning: MESSAGE and do not fail the check.
        """
    static let options: [Option] = [.json.explained("print one JSON document listing every file and its problems (see the Commands article of the docs)")]

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        let collection = try context.openCollection()
        // Relative paths from the current directory, else the collection (`-C DIR`), as for status.
        let files = arguments.positionals
        if arguments.has(.json) {
            let console = context.console
            var writer = JSONDocuments.ValidationWriter { console.out($0) }
            _ = try await collection.validate(files, operandsFromRoot: context.operandsFromCollection, willCheck: { writer.start(checked: $0, root: collection.paths.root) }) {
                writer.add($0)
            }
            writer.finish()
            return writer.invalid == 0 ? .success : .attention
        }
        var invalidFiles = 0
        // Reports streamed, problems printed as found: memory stays flat for a million files.
        let checked = try await collection.validate(files, operandsFromRoot: context.operandsFromCollection) { report in
            for warning in report.warnings { context.console.out("\(context.shownPath(report.path)): warning: \(warning)") }
            guard !report.diagnostics.isEmpty else { return }
            invalidFiles += 1
            for diagnostic in report.diagnostics {
                context.console.out("\(context.shownPath(report.path))\(StatusRenderer.located(diagnostic))")
            }
        }
        if !context.quiet {
            // A hand edit of config.json leaves the editors' schema behind.
            for file in collection.staleEditorSchemas() {
                context.console.err("note: \(context.display(file.path)) is out of date with .booksync/config.json; run 'booksync schema'")
            }
            let summary: TerminalText = invalidFiles == 0
                ? "\(plural(checked, "file")) checked, all valid"
                : "\(plural(checked, "file")) checked, \(invalidFiles) invalid"
            context.console.err(summary)
        }
        return invalidFiles == 0 ? .success : .attention
    }
}
