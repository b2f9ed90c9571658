import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync clone`: `init` in a new folder, then the first pull, like
/// `git clone`; without `--collection`, the whole database as a workspace
/// (the manual's WholeProject article).
enum CloneCommand: Subcommand {
    static let name = "clone"
    static let summary = "create a collection folder (or a folder per root collection) and pull the remote into it"
    static let usage = "booksync clone [--firestore PROJECT[/DATABASE]] [--collection PATH] [--dry-run] [--require FIELD:TYPE]... [--optional FIELD:TYPE]... [--strict warning|error] [--id-field NAME|none] [--change-field NAME] [--where EXPR] [--subcollection PATH]... [--subcollection-require PATH:FIELD:TYPE]... [--editor vscode] [--git] [DIR]"
    static let discussion = """
        With --collection PATH: creates DIR (by default the collection path's
        last name, e.g. books), runs init there with the same options (see
        init --help), then pulls every document. Unless --subcollection names
        them, the collection's subcollections are discovered first, at any
        depth (one names-only query of everything below the collection: a
        billed read per document), and every one found is configured. With
        --where EXPR only the matching documents are pulled (reads in
        proportion to them), and no subcollection is synced.

        Without --collection: the whole database as a workspace. DIR (by
        default the project id) gets a folder per root collection, named as
        record ids are (café is caf%C3%A9, .x is %2Ex), each an ordinary
        collection with its discovered subcollections configured, and
        .booksync-workspace.json naming the database; then each is pulled, one
        after the other. Without --require, records need nothing but id.
        From DIR, 'booksync status' names the root collections and
        subcollections that appeared since, and 'booksync discover' adds them.

        --dry-run discovers and prints the folders, subcollection paths and
        document counts, and the billed reads the clone would cost, and writes
        nothing (it reads names, never a document's fields).

        DIR must not exist or must be empty. If the pull stops (the network,
        Ctrl-C), DIR is kept with what was pulled, and 'booksync -C DIR pull'
        finishes it.
        """
    static let options: [Option] = [.dryRun] + InitCommand.options

    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { true }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        guard arguments.positionals.count <= 1 else { throw arguments.usageError("clone takes at most one DIR") }
        guard let collection = arguments.value(.collection) else {
            if arguments.value(.scope) != nil { throw arguments.usageError("--where scopes one collection; name it with --collection PATH") }
            return try await WholeDatabaseClone.run(arguments, context: context)
        }
        if let problem = FirestoreTarget.validateCollectionPath(collection) { throw arguments.usageError("--collection: \(problem)") }
        let name = arguments.positionals.first ?? String(collection.split(separator: "/").last ?? "collection")
        let directory = PathDisplay.resolve(name, against: context.directory)
        let dryRun = arguments.has(.dryRun)
        if !dryRun { try prepareFolder(directory, mustBeEmpty: true, context: context) }
        var initArguments = arguments.withoutOperands()
        var knownTotal: Int?
        if arguments.value(.scope) != nil {
            // A scope does not narrow subcollections (`CollectionConfig.problem(scope:)`): none are discovered.
            if dryRun { throw arguments.usageError("--dry-run discovers the subcollections; a scoped clone (--where) syncs none") }
        } else if arguments.values(.subcollection).isEmpty {
            let (target, _) = try InitCommand.resolveTarget(arguments.value(.firestore), collection: collection, context: context)
            let remote = try context.makeDatabaseRemote(project: target.project, database: target.database)
            let tree: DiscoveredCollection
            do {
                let progress = context.progressDisplay()
                defer { progress.finish() }
                tree = try await remote.discover(collection)
            } catch {
                throw BooksyncError.remote(error)
            }
            let found = DatabaseLayout.Found(root: DatabaseLayout.Root(collection), tree: tree)
            let (paths, refused, problem) = found.configuration
            for (path, why) in refused {
                context.console.err("booksync: warning: subcollection \(name: path) (\(DatabaseLayout.documents(tree.subcollections[path] ?? 0))) is left out: \(name: why)")
            }
            if let problem {
                throw BooksyncError.invalidArgument("\(collection): \(problem); choose the ones to sync with --subcollection PATH")
            }
            if dryRun {
                context.console.out("\(name: context.display(directory))/: \(DatabaseLayout.documents(tree.documents))")
                for path in paths { context.console.out("  subcollection \(name: path): \(DatabaseLayout.documents(tree.subcollections[path] ?? 0))") }
                let discovery = remote.usage.totals
                let pull = DatabaseLayout.pullReads(tree, paths: paths)
                context.console.out("discovery: \(RemoteUsageLine.describe(discovery))")
                context.console.out("the clone would cost about \(grouped(discovery.billedReads + pull.reads)) billed reads: "
                    + "\(grouped(discovery.billedReads)) to discover, \(grouped(pull.reads)) to pull (\(pull.queries) quer\(pull.queries == 1 ? "y" : "ies"))")
                context.console.out("dry run: nothing was written")
                return .success
            }
            initArguments = initArguments.setting(.subcollection, to: paths)
            knownTotal = tree.documents + paths.reduce(0) { $0 + (tree.subcollections[$1] ?? 0) }
        } else if dryRun {
            throw arguments.usageError("--dry-run discovers the subcollections; it does not go with --subcollection")
        }
        let inside = context.working(in: directory)
        let initialized = try await InitCommand.run(initArguments, context: inside)
        guard initialized == .success else { return initialized }
        return try await pullFirst(initArguments, directory: directory, context: inside, outer: context, knownTotal: knownTotal)
    }

    /// The first pull of the collection just made in `directory`.
    /// `knownTotal`: the documents discovery counted, so progress asks no `count()`.
    static func pullFirst(_ arguments: ParsedArguments, directory: String, context inside: CommandContext, outer context: CommandContext,
                          knownTotal: Int? = nil) async throws -> ExitCode {
        let opened = try inside.openCollection(arguments)
        let remote = try inside.makeRemote(opened)
        let report: SyncReport
        do {
            var options = SyncOptions()
            options.knownTotal = knownTotal
            report = try await SyncCommandSupport.pull(opened, remote: remote, options: options, context: inside)
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
