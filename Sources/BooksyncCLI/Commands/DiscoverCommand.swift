import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync discover`: what appeared on the remote since the clone, added
/// (the manual's WholeProject article). In a collection: its new subcollection paths go into
/// config.json and are pulled. In a workspace made by a whole-database
/// clone: the same for each collection, and every new root collection is
/// cloned into a folder of its own.
enum DiscoverCommand: Subcommand {
    static let name = "discover"
    static let summary = "add the remote collections and subcollections that appeared since the clone"
    static let usage = "booksync discover [--dry-run]"
    static let discussion = """
        Run in a collection, lists the name of every document below it (one
        names-only query: a billed read per document) and adds each
        subcollection path found that config.json does not name yet, then
        pulls the collection, so their records arrive as folders.

        Run in a workspace made by 'booksync clone --firestore PROJECT' (the
        folder holding .booksync-workspace.json), does that in each of its
        collections, and clones every root collection that is not there yet
        (listCollectionIds: a billed read per page) into a folder of its own,
        its subcollections discovered, as the clone did.

        --dry-run says what would be added, and what it would cost, and
        changes nothing.
        """
    static let options: [Option] = [.dryRun]

    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { true }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        try arguments.expectNoOperands()
        let dryRun = arguments.has(.dryRun)
        if CollectionPaths.locate(from: context.directory) != nil {
            let collection = try context.openCollection()
            // A scope does not narrow subcollections, so a scoped collection syncs none (the manual's WholeProject article).
            if collection.config.scope != nil {
                if !context.quiet { context.console.out("\(name: collection.config.remote.collectionPath) has a scope (config \"scope\"), which syncs no subcollections: nothing to discover") }
                return .success
            }
            let remote = try context.makeDatabaseRemote(project: collection.config.remote.project, database: collection.config.remote.database,
                                                        endpointEnvironment: try collection.remote.endpointEnvironment(context.environment))
            let tree = try await RemoteLayoutCheck.discover(collection.config.remote.collectionPath, remote: remote, context: context)
            let added = RemoteLayoutCheck.unconfigured(tree, in: collection)
            guard !added.isEmpty else {
                if !context.quiet { context.console.out("nothing new below \(name: collection.config.remote.collectionPath)") }
                return .success
            }
            for path in added { context.console.out("subcollection \(name: path): \(DatabaseLayout.documents(tree.subcollections[path] ?? 0))") }
            if dryRun {
                context.console.out("dry run: nothing was changed")
                return .success
            }
            return try await add(added, to: collection, context: context)
        }
        guard let marker = try DatabaseLayout.readMarker(at: context.directory) else {
            throw BooksyncError.invalidArgument("\(context.display(context.directory)) is neither a collection nor a workspace made by "
                + "'booksync clone --firestore PROJECT' (it has no \(DatabaseLayout.markerName))")
        }
        let (project, database) = (marker.project, marker.database)
        var baseline = marker
        let known = RemoteLayoutCheck.collections(in: context.directory, project: project, database: database)
        let remote = try context.makeDatabaseRemote(project: project, database: database,
                                                    endpointEnvironment: try known.first?.collection.remote.endpointEnvironment(context.environment))
        let newRoots: [DatabaseLayout.Found]
        let skipped: [DatabaseLayout.Root]
        var additions: [(known: RemoteLayoutCheck.Known, paths: [String])] = []
        do {
            for item in known where item.collection.config.scope == nil {  // a scoped collection syncs no subcollections
                let tree = try await remote.discover(item.collection.config.remote.collectionPath)
                let added = RemoteLayoutCheck.unconfigured(tree, in: item.collection)
                if !added.isEmpty { additions.append((item, added)) }
                baseline.baseline[item.collection.config.remote.collectionPath] = DatabaseLayout.countDifference(
                    tree, paths: item.collection.config.subcollections.entries.map(\.path) + added)
                for path in added {
                    context.console.out("\(name: item.relative)/: subcollection \(name: path): \(DatabaseLayout.documents(tree.subcollections[path] ?? 0))")
                }
            }
            let ids = try await RemoteLayoutCheck.newRoots(remote: remote, known: known)
            (newRoots, skipped) = try await DatabaseLayout.discover(ids, remote: remote, context: context)
        } catch {
            throw BooksyncError.remote(error)
        }
        DatabaseLayout.printLayout(newRoots, skipped: skipped, into: "", context: context)
        for item in newRoots where item.configuration.problem == nil {
            baseline.baseline[item.root.collection] = DatabaseLayout.countDifference(item.tree, paths: item.configuration.paths)
        }
        // What status should expect from now on, even when nothing is added
        // (documents in paths booksync cannot sync appeared).
        if !dryRun, baseline != marker { try DatabaseLayout.writeMarker(baseline, at: context.directory) }
        if additions.isEmpty, newRoots.isEmpty {
            if !context.quiet { context.console.out("nothing new in firestore \(name: project)/\(name: database)") }
            return .success
        }
        if context.verbose || dryRun { context.console.out("discovery: \(RemoteUsageLine.describe(remote.usage.totals))") }
        if dryRun {
            context.console.out("dry run: nothing was changed")
            return .success
        }
        var worst = ExitCode.success
        for (item, paths) in additions {
            if !context.quiet { context.console.out("\n== \(name: item.relative)") }
            worst = WorkspaceRun.worse(worst, try await add(paths, to: item.collection, context: context.working(in: item.collection.paths.root)))
        }
        let ready = newRoots.filter { $0.configuration.problem == nil }
        for item in ready {
            let folder = context.directory + "/" + item.root.folder!
            guard !FileSystem.exists(folder) else {
                context.console.err("booksync: warning: \(name: item.root.folder!) exists already and is not a collection of this database; the root collection \(name: item.root.collection) is not cloned")
                worst = WorkspaceRun.worse(worst, .attention)
                continue
            }
            if !context.quiet { context.console.out("\n== \(name: item.root.folder!) (firestore \(name: project)/\(name: database) \(name: item.root.collection))") }
            do {
                try FileSystem.createDirectories(folder)
            } catch {
                throw BooksyncError.io(error)
            }
            worst = WorkspaceRun.worse(worst, try await WholeDatabaseClone.clone(item, into: folder, project: project, database: database,
                                                                                 arguments: arguments, context: context))
        }
        if ready.count < newRoots.count { worst = WorkspaceRun.worse(worst, .attention) }
        return worst
    }

    /// Adds `paths` to the collection's config and pulls it.
    private static func add(_ paths: [String], to collection: CollectionDirectory, context: CommandContext) async throws -> ExitCode {
        let changed = try collection.addingSubcollections(paths)
        if !context.quiet { context.console.out("config.json now syncs \(paths.count == 1 ? "it" : "them"); pulling") }
        let remote = try context.makeRemote(changed)
        let report = try await SyncCommandSupport.pull(changed, remote: remote, options: SyncOptions(), context: context)
        SyncCommandSupport.render([report], context: context, root: changed.paths.root, conflicts: changed.relativeConflictsFolder,
                                  unresolvedConflict: changed.unresolvedConflicts())
        return report.needsAttention ? .attention : .success
    }
}

/// What a workspace made by a whole-database clone does not have yet: the
/// root collections not cloned, the subcollection paths its collections do
/// not configure. `status` (from the workspace folder) names them, cheaply;
/// `discover` adds them.
enum RemoteLayoutCheck {
    /// A collection of the workspace and its path relative to it.
    struct Known {
        let relative: String
        let collection: CollectionDirectory
    }

    /// The workspace's collections that sync a root collection of the database.
    static func collections(in workspace: String, project: String, database: String) -> [Known] {
        ((try? WorkspaceDiscovery.collections(below: workspace)) ?? []).compactMap { relative in
            guard let collection = try? CollectionDirectory.open(searchingFrom: workspace + "/" + relative) else { return nil }
            let target = collection.config.remote
            guard target.project == project, target.database == database, !target.collectionPath.contains("/") else { return nil }
            return Known(relative: relative, collection: collection)
        }
    }

    /// The root collections of the database no collection of `known` syncs.
    static func newRoots(remote: FirestoreRemote, known: [Known]) async throws(RemoteError) -> [String] {
        let have = Set(known.map { Array($0.collection.config.remote.collectionPath.utf8) })
        return try await remote.listCollectionIDs().filter { !have.contains(Array($0.utf8)) }
    }

    /// Everything below `collectionPath`, with a progress line.
    static func discover(_ collectionPath: String, remote: FirestoreRemote, context: CommandContext) async throws -> DiscoveredCollection {
        let progress = context.progressDisplay()
        defer { progress.finish() }
        do {
            return try await remote.discover(collectionPath)
        } catch {
            throw BooksyncError.remote(error)
        }
    }

    /// The subcollection paths of `tree` booksync can sync and `collection` does not.
    static func unconfigured(_ tree: DiscoveredCollection, in collection: CollectionDirectory) -> [String] {
        tree.configurable.paths.filter { collection.config.subcollections.entry(forPath: $0) == nil }
    }

    /// `status` from a workspace made by a whole-database clone: after every
    /// collection's status, the root collections and subcollection paths that
    /// appeared since. Cheap: one `listCollectionIds` page, and per
    /// collection two counts (everything below it, and what its configured
    /// paths hold: a read per 1,000 documents each); only a collection whose
    /// counts differ has its names listed (a read per document), to name what
    /// is new. Says nothing when nothing is; with `-v`, what it cost.
    static func reportForStatus(workspace: String, arguments: ParsedArguments, context: CommandContext) async -> ExitCode {
        do {
            guard let marker = try DatabaseLayout.readMarker(at: workspace) else { return .success }
            let (project, database) = (marker.project, marker.database)
            let known = collections(in: workspace, project: project, database: database)
            let selected = try known.first.map { try $0.collection.selectingRemote(arguments.value(.remote), environment: context.environment) }
            let remote = try context.makeDatabaseRemote(project: project, database: database,
                                                        endpointEnvironment: try selected?.remote.endpointEnvironment(context.environment))
            var lines: [TerminalText] = []
            var spent: [FirestoreUsage] = [remote.usage]
            do {
                // Those no folder can be were named by the clone; not again on every status.
                for root in try await newRoots(remote: remote, known: known) where DatabaseLayout.Root(root).folder != nil {
                    lines.append("root collection \(name: root): not cloned")
                }
                for item in known where item.collection.config.scope == nil {  // a scoped collection syncs no subcollections
                    let own = try context.makeRemote(item.collection.selectingRemote(arguments.value(.remote), environment: context.environment), announce: false)
                    spent.append(own.usage)
                    let path = item.collection.config.remote.collectionPath
                    let below = try await remote.descendantCount(path)
                    let configured = try await own.configuredCount()
                    guard below - configured != marker.baseline[path] ?? 0 else { continue }
                    let tree = try await remote.discover(path)
                    for added in unconfigured(tree, in: item.collection) {
                        lines.append("\(name: item.relative)/: subcollection \(name: added) (\(DatabaseLayout.documents(tree.subcollections[added] ?? 0))): not configured")
                    }
                }
            } catch let error as RemoteError {
                throw BooksyncError.remote(error)
            }
            if !lines.isEmpty {
                context.console.out("")
                context.console.out("== firestore \(name: project)/\(name: database): new since the clone ('booksync discover' adds them)")
                for line in lines { context.console.out(line) }
            }
            if context.verbose {
                let totals = spent.map(\.totals).reduce(into: FirestoreUsage.Totals()) { sum, one in
                    sum.requests += one.requests
                    sum.documents += one.documents
                    sum.billedReads += one.billedReads
                }
                context.console.err("booksync: checking for new collections: \(RemoteUsageLine.describe(totals))")
            }
            return .success
        } catch {
            return BooksyncCommand.reportFailure(error, command: StatusCommand.name, place: "new collections", console: context.console)
        }
    }
}
