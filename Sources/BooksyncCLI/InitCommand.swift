import BooksyncCore
import BooksyncKit

/// `booksync init`: make the current directory (or -C DIR) a collection directory.
enum InitCommand: Subcommand {
    static let name = "init"
    static let summary = "create .booksync/ here, linked to a Firestore collection"
    static let usage = "booksync init [--firestore PROJECT[/DATABASE]] --collection PATH"
    static let discussion = """
        Writes .booksync/config.json, an empty manifest and a .gitignore for the
        local-only files. No network is needed. The project defaults to
        $GOOGLE_CLOUD_PROJECT; the database to (default). PATH may be nested
        (users/u1/books). Required record fields are set in config.json under
        schema.required (by default title, author and genre, all strings).
        """
    static let options = [
        OptionSpec("--firestore", value: "PROJECT[/DATABASE]", help: "the Firestore project (and database) to sync with"),
        OptionSpec("--collection", value: "PATH", help: "the collection path, e.g. books or users/u1/books"),
    ]

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        guard arguments.positionals.isEmpty else {
            throw UsageError(message: "unexpected argument '\(arguments.positionals[0])'", command: name)
        }
        guard let collection = arguments.values["--collection"] else {
            throw UsageError(message: "missing --collection PATH (the Firestore collection to sync, e.g. books)", command: name)
        }
        guard let projectSpec = arguments.values["--firestore"] ?? context.environment["GOOGLE_CLOUD_PROJECT"] else {
            throw UsageError(message: "missing --firestore PROJECT (or set GOOGLE_CLOUD_PROJECT)", command: name)
        }
        let parts = projectSpec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let project = parts.first, !project.isEmpty, parts.count == 1 || !parts[1].isEmpty else {
            throw UsageError(message: "--firestore takes PROJECT or PROJECT/DATABASE, not '\(projectSpec)'", command: name)
        }
        if let problem = FirestoreTarget.validateCollectionPath(collection) {
            throw UsageError(message: "--collection: \(problem)", command: name)
        }
        let target = FirestoreTarget(project: project, database: parts.count > 1 ? parts[1] : "(default)", collectionPath: collection)
        let directory = try CollectionDirectory.initialize(at: context.directory, config: CollectionConfig(remote: target))
        if !context.quiet {
            context.console.out("Initialized booksync collection in \(directory.paths.root)")
            context.console.out("  remote: firestore \(target.project)/\(target.database), collection \(target.collectionPath)")
            context.console.out("Commit .booksync/ (its .gitignore leaves out local-only files).")
        }
        return .success
    }
}
