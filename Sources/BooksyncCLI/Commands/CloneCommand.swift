import BooksyncCore
import BooksyncKit

/// `booksync clone`: `init` in a new folder, then the first pull, like `git clone`.
enum CloneCommand: Subcommand {
    static let name = "clone"
    static let summary = "create a collection folder and pull the remote collection into it"
    static let usage = "booksync clone [--firestore PROJECT[/DATABASE]] --collection PATH [--require FIELD:TYPE]... [--optional FIELD:TYPE]... [--strict warning|error] [--id-field NAME|none] [--change-field NAME] [--subcollection PATH]... [--subcollection-require PATH:FIELD:TYPE]... [--editor vscode] [--git] [DIR]"
    static let discussion = """
        Creates DIR (by default the collection path's last name, e.g. books),
        runs init there with the same options (see init --help), then pulls every
        document. DIR must not exist or must be empty. If the pull stops (the
        network, Ctrl-C), DIR is kept with what was pulled, and 'booksync -C DIR
        pull' finishes it.
        """
    static let options: [Option] = InitCommand.options

    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { true }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        guard arguments.positionals.count <= 1 else { throw arguments.usageError("clone takes at most one DIR") }
        guard let collection = arguments.value(.collection) else {
            throw arguments.usageError("missing --collection PATH (the Firestore collection to clone, e.g. books)")
        }
        if let problem = FirestoreTarget.validateCollectionPath(collection) { throw arguments.usageError("--collection: \(problem)") }
        let name = arguments.positionals.first ?? String(collection.split(separator: "/").last ?? "collection")
        let directory = PathDisplay.resolve(name, against: context.directory)
        try prepareFolder(directory, mustBeEmpty: true, context: context)
        let inside = context.working(in: directory)
        let initialized = try await InitCommand.run(arguments.withoutOperands(), context: inside)
        guard initialized == .success else { return initialized }
        let opened = try inside.openCollection(arguments.withoutOperands())
        let remote = try inside.makeRemote(opened)
        let report: SyncReport
        do {
            report = try await SyncCommandSupport.pull(opened, remote: remote, options: SyncOptions(), context: inside)
        } catch {
            context.console.err("booksync: note: \(context.display(directory)) keeps what was pulled; 'booksync -C \(context.display(directory)) pull' finishes the clone")
            throw error
        }
        SyncCommandSupport.render([report], context: inside, root: opened.paths.root, conflicts: opened.relativeConflictsFolder,
                                  unresolvedConflict: opened.unresolvedConflicts())
        return report.needsAttention ? .attention : .success
    }

    /// The folder `clone` or `init DIR` makes a collection: created with its
    /// missing parents, never inside another collection (whose scan would
    /// take these files for its own records). `mustBeEmpty`: an existing
    /// folder must be empty (clone pulls files into it; init writes none).
    static func prepareFolder(_ directory: String, mustBeEmpty: Bool, context: CommandContext) throws(BooksyncError) {
        let verb = mustBeEmpty ? "clone" : "init"
        if let enclosing = CollectionPaths.locate(from: FileSystem.split(directory).directory) {
            throw .invalidArgument("\(context.display(directory)) is inside the collection \(context.display(enclosing.root)); \(verb) next to it, not into it")
        }
        if FileSystem.exists(directory) {
            guard FileSystem.isDirectory(directory), !mustBeEmpty || (try? FileSystem.listDirectory(directory))?.isEmpty == true else {
                throw .invalidArgument("\(context.display(directory)) already exists and is not \(mustBeEmpty ? "an empty folder" : "a folder"); \(verb) into a new one")
            }
        } else {
            do {
                try FileSystem.createDirectories(directory)
            } catch {
                throw .io(error)
            }
        }
    }
}
