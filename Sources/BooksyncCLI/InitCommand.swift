import BooksyncCore
import BooksyncKit

/// `booksync init`: make the current directory (or -C DIR) a collection directory.
enum InitCommand: Subcommand {
    static let name = "init"
    static let summary = "create .booksync/ here, linked to a Firestore collection"
    static let usage = "booksync init [--firestore PROJECT[/DATABASE]] --collection PATH [--git]"
    static let discussion = """
        Writes .booksync/config.json, an empty manifest and a .gitignore for the
        local-only files. No network is needed. The project defaults to
        $GOOGLE_CLOUD_PROJECT; the database to (default). PATH may be nested
        (users/u1/books). Required record fields are set in config.json under
        schema.required (by default title, author and genre, all strings).
        --git also sets up booksync as git's merge driver for the record files
        and for .booksync/manifest.json (.gitattributes here, merge.booksync.*
        and merge.booksync-manifest.* in the repository's config); on an
        existing collection, 'booksync init --git' does only that. git does not
        clone its config: run 'booksync init --git' once in each clone.
        """
    static let options = [
        OptionSpec("--firestore", value: "PROJECT[/DATABASE]", help: "the Firestore project (and database) to sync with"),
        OptionSpec("--collection", value: "PATH", help: "the collection path, e.g. books or users/u1/books"),
        OptionSpec("--git", help: "set up booksync as git's merge driver for the record files and the manifest"),
    ]

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        guard arguments.positionals.isEmpty else {
            throw UsageError(message: "unexpected argument '\(arguments.positionals[0])'", command: name)
        }
        if arguments.has("--git"), arguments.values["--collection"] == nil, let existing = try? context.openCollection() {
            try GitCommand.install(collectionRoot: existing.paths.root)
            if !context.quiet { context.console.out("git now merges record files in \(existing.paths.root) field by field and the manifest by record (booksync must be on PATH)") }
            return .success
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
        if arguments.has("--git") {
            try GitCommand.install(collectionRoot: directory.paths.root)
            if !context.quiet { context.console.out("git now merges record files here field by field and the manifest by record (booksync must be on PATH)") }
        } else if !context.quiet {
            for line in GitCommand.instructions(collectionRoot: context.display(directory.paths.root)) { context.console.out("\(line)") }
        }
        return .success
    }
}
