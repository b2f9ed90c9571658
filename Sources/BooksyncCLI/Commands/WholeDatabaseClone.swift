import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync clone --firestore PROJECT[/DATABASE] [DIR]` without
/// `--collection`: the whole database as a workspace (the manual's WholeProject article).
///
/// 1. The root collections: `listCollectionIds` (a billed read per page).
/// 2. Below each, every document's name (`FirestoreRemote.discover`, a billed
///    read per document): the subcollection paths and their counts.
/// 3. Nothing is written before all of it is known and fits (a collection
///    whose paths end in more distinct ids than booksync syncs stops the
///    clone, naming it); `--dry-run` stops here.
/// 4. `.booksync-workspace.json`, then per root collection a folder, `init`
///    with the discovered subcollections and the first pull, one after the other.
enum WholeDatabaseClone {
    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        if !arguments.values(.subcollection).isEmpty || !arguments.values(.subcollectionRequire).isEmpty {
            throw arguments.usageError("--subcollection and --subcollection-require go with --collection; a whole-database clone discovers every subcollection")
        }
        let (target, _) = try InitCommand.resolveTarget(arguments.value(.firestore), collection: "_", context: context)
        let name = arguments.positionals.first ?? target.project
        let directory = PathDisplay.resolve(name, against: context.directory)
        let dryRun = arguments.has(.dryRun)
        if !dryRun { try CloneCommand.prepareFolder(directory, mustBeEmpty: true, context: context) }
        let remote = try context.makeDatabaseRemote(project: target.project, database: target.database)
        let found: [DatabaseLayout.Found]
        let skipped: [DatabaseLayout.Root]
        do {
            let ids = try await remote.listCollectionIDs()
            (found, skipped) = try await DatabaseLayout.discover(ids, remote: remote, context: context)
        } catch {
            throw BooksyncError.remote(error)
        }
        let shown = context.display(directory)
        if !context.quiet || dryRun {
            context.console.out("firestore \(name: target.project)/\(name: target.database): \(found.count) root collection\(found.count == 1 ? "" : "s"), "
                + "\(DatabaseLayout.documents(found.reduce(0) { $0 + $1.tree.total }))")
        }
        if !context.quiet || dryRun { DatabaseLayout.printLayout(found, skipped: skipped, into: shown + "/", context: context) }
        let tooMany = found.filter { $0.configuration.problem != nil }
        if !tooMany.isEmpty {
            let names = tooMany.map(\.root.collection).joined(separator: ", ")
            throw BooksyncError.invalidArgument("nothing was cloned: \(names) cannot be synced whole; clone "
                + (tooMany.count == 1 ? "it" : "each") + " with --collection PATH --subcollection PATH... to choose its subcollections")
        }
        let discovery = remote.usage.totals
        let pull = found.reduce((reads: 0, queries: 0)) { sum, item in
            let one = DatabaseLayout.pullReads(item.tree, paths: item.configuration.paths)
            return (sum.reads + one.reads, sum.queries + one.queries)
        }
        if !context.quiet || dryRun {
            context.console.out("discovery: \(RemoteUsageLine.describe(discovery))")
            context.console.out("the clone costs about \(grouped(discovery.billedReads + pull.reads)) billed reads: "
                + "\(grouped(discovery.billedReads)) to discover, \(grouped(pull.reads)) to pull (\(pull.queries) quer\(pull.queries == 1 ? "y" : "ies"))")
        }
        if dryRun {
            context.console.out("dry run: nothing was written")
            return .success
        }
        var marker = DatabaseLayout.Marker(project: target.project, database: target.database)
        for item in found { marker.baseline[item.root.collection] = DatabaseLayout.countDifference(item.tree, paths: item.configuration.paths) }
        try DatabaseLayout.writeMarker(marker, at: directory)
        var worst = ExitCode.success
        for item in found {
            let folder = directory + "/" + item.root.folder!
            do {
                try FileSystem.createDirectories(folder)
            } catch {
                throw BooksyncError.io(error)
            }
            // Under `-q` too, as a workspace command heads each collection: the
            // pull's result line ("pulled 3") says nothing of where without it.
            if !context.quiet || item.root.collection != found.first?.root.collection { context.console.out("") }
            context.console.out("== \(name: context.display(folder)) (firestore \(name: target.project)/\(name: target.database) \(name: item.root.collection))")
            let code: ExitCode
            do {
                code = try await clone(item, into: folder, project: target.project, database: target.database, arguments: arguments, context: context)
            } catch {
                context.console.err("booksync: note: 'booksync -C \(shown) discover' adds the collections not cloned yet")
                throw error
            }
            worst = WorkspaceRun.worse(worst, code)
        }
        if !context.quiet {
            context.console.out("")
            context.console.out("Cloned \(found.count) collection\(found.count == 1 ? "" : "s") into \(name: shown). From there, 'booksync status' "
                + "also names the collections and subcollections that appear later, and 'booksync discover' adds them.")
        }
        return worst
    }

    /// `init` (quietly) and the first pull of one root collection in `folder`,
    /// with the init options of `arguments`.
    static func clone(_ item: DatabaseLayout.Found, into folder: String, project: String, database: String,
                      arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        var initArguments = arguments.withoutOperands().setting(.firestore, to: [project + "/" + database])
            .setting(.collection, to: [item.root.collection]).setting(.subcollection, to: item.configuration.paths)
        if arguments.values(.require).isEmpty { initArguments = initArguments.setting(.require, to: ["none"]) }
        let inside = context.working(in: folder)
        let initialized = try await InitCommand.run(initArguments, context: inside.quieted())
        guard initialized == .success else { return initialized }
        let known = item.tree.documents + item.configuration.paths.reduce(0) { $0 + (item.tree.subcollections[$1] ?? 0) }
        return try await CloneCommand.pullFirst(initArguments, directory: folder, context: inside, outer: context, knownTotal: known)
    }
}
