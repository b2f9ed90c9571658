import BooksyncCore
@_spi(Remote) import BooksyncKit

/// pull, push and sync: one `run` (`SyncCommandSupport.run`), told which phases to run.
protocol SyncPhasesCommand: Subcommand {
    /// Whether the command pulls, and whether it pushes (after the pull).
    static var phases: (pull: Bool, push: Bool) { get }
}

extension SyncPhasesCommand {
    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { true }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        try await SyncCommandSupport.run(arguments, command: name, context: context, pull: phases.pull, push: phases.push)
    }
}

/// `booksync pull`: apply remote changes locally.
enum PullCommand: SyncPhasesCommand {
    static let name = "pull"
    static let summary = "apply remote changes to the record files"
    static let usage = "booksync pull [PATHSPEC...] [--remote NAME] [--dry-run] [--ours|--theirs] [--max-delete N%] [--force] [--full] [--json]"
    static let discussion = """
        Lists the remote collection (names and revisions only), downloads the
        documents that changed since the last sync, and applies them: new and
        changed documents are written, deleted ones removed. Records changed on
        both sides are merged field by field when the changes touch different
        fields, and maps key by key at any depth (the merge is then a local
        change for push); real conflicts, named by field path (stats.rating),
        leave the local file alone and store the remote side in
        .booksync/conflicts/. Invalid local files are never overwritten.

        With a change field (init --change-field), the listing is one query for
        the documents changed since the last pull and one count; --full lists
        every name instead.

        PATHSPECs (ids, files, folders, quoted globs; see status --help) pull
        only those records; the others, and their base, are left as they are.
        """
    static let options: [Option] = [.remote, .dryRun, .ours, .theirs, .maxDelete, .force, .full, SyncCommandSupport.json]
    static let exclusiveOptions: [(Option, Option)] = [(.ours, .theirs)]
    static let phases = (pull: true, push: false)
}

/// `booksync push`: publish local changes.
enum PushCommand: SyncPhasesCommand {
    static let name = "push"
    static let summary = "publish local changes to the remote collection"
    static let usage = "booksync push [PATHSPEC...] [--remote NAME] [--dry-run] [--atomic] [--max-delete N%] [--force] [--json]"
    static let discussion = """
        Sends only the records that changed locally since the last sync, each
        write guarded by a precondition (create: the document must not exist;
        update and delete: its revision must still be the base revision), so a
        concurrent change on the server is never overwritten. When a
        precondition fails, booksync fetches that document: if it already holds
        the same content the record is recorded as synced, otherwise it is
        reported and left alone: booksync pull merges the remote change or
        stores the conflict, and a conflict that pull stored is settled with
        booksync resolve ID --ours or --theirs. Invalid files are never sent.

        PATHSPECs (ids, files, folders, quoted globs; see status --help) push
        only those records: another edited record stays unpushed, its base as
        it was.
        """
    static let options: [Option] = [.remote, .dryRun, .atomic, .maxDelete, .force, SyncCommandSupport.json]
    static let phases = (pull: false, push: true)
}

/// `booksync sync`: pull, then push.
enum SyncCommand: SyncPhasesCommand {
    static let name = "sync"
    static let summary = "pull, then push"
    static let usage = "booksync sync [PATHSPEC...] [--remote NAME] [--dry-run] [--ours|--theirs] [--atomic] [--max-delete N%] [--force] [--full] [--json]"
    static let discussion = "Runs pull and then push with the same options; see their help."
    static let options: [Option] = [.remote, .dryRun, .ours, .theirs, .maxDelete, .force, .atomic, .full, SyncCommandSupport.json]
    static let exclusiveOptions: [(Option, Option)] = [(.ours, .theirs)]
    static let phases = (pull: true, push: true)
}

/// Options, execution and rendering shared by pull, push and sync.
enum SyncCommandSupport {
    /// `--json` as pull, push and sync word it.
    static let json = Option.json.explained("print one JSON document instead of the lines (see the Commands article of the docs)")

    static func options(_ arguments: ParsedArguments) throws(UsageError) -> SyncOptions {
        var options = SyncOptions()
        options.dryRun = arguments.has(.dryRun)
        options.force = arguments.has(.force)
        options.atomic = arguments.has(.atomic)
        options.fullListing = arguments.has(.full)
        if arguments.has(.ours) { options.conflictChoice = .ours }
        if arguments.has(.theirs) { options.conflictChoice = .theirs }
        if let percent = arguments.percentage(.maxDelete) { options.deleteGuard.maximumPercent = percent }
        return options
    }

    /// Pull, push, or both (sync): options, the remote, the reports, the exit code.
    static func run(_ arguments: ParsedArguments, command: String, context: CommandContext, pull: Bool, push: Bool) async throws -> ExitCode {
        var options = try options(arguments)
        let collection = try context.openCollection(arguments)
        options.scope = try collection.recordFiles.scope(arguments.positionals, fromRoot: context.operandsFromCollection)
        // Before the remote is reached: the warning matters most around merges, and a failing remote must not hide it.
        GitDriverCheck.warnIfOutdated(collectionRoot: collection.paths.root, context: context)
        let remote = try context.makeRemote(collection)
        var reports: [SyncReport] = []
        if pull {
            reports.append(try await self.pull(collection, remote: remote, options: options, context: context))
        }
        if push, pull, options.dryRun {
            // The push a real sync makes depends on the files after its pull.
            if !context.quiet {
                context.console.err("booksync: note: --dry-run shows the pull; push is planned from the files as they are after a real pull")
            }
        } else if push {
            reports.append(try await self.push(collection, remote: remote, options: options, context: context))
        }
        let unresolvedConflict = collection.unresolvedConflicts()
        if arguments.has(.json) {
            context.console.out(JSONDocuments.syncReports(reports, command: command, root: collection.paths.root, dryRun: options.dryRun,
                                                          unresolvedConflict: unresolvedConflict))
        } else {
            render(reports, context: context, root: collection.paths.root, conflicts: collection.relativeConflictsFolder,
                   unresolvedConflict: unresolvedConflict)
        }
        return reports.contains { $0.needsAttention } ? .attention : .success
    }

    /// What to tell when a command took over the lock of a process that died:
    /// that it did, and where the files a killed pull or resolve swapped out of place are.
    static func staleLockNotice(_ context: CommandContext, _ collection: CollectionDirectory) -> (Int32) -> Void {
        { pid in
            tookOverLockNotice(context)(pid)
            if FileSystem.exists(collection.paths.recovered) {
                context.console.err("booksync: note: files that a killed pull or resolve had swapped out of place are kept in \(context.shownPath(collection.paths.recovered)); check and delete them")
            }
        }
    }

    /// `staleLockNotice` without the recovered files, for fmt (a pull taking
    /// over the lock tells about them).
    static func tookOverLockNotice(_ context: CommandContext) -> (Int32) -> Void {
        { pid in context.console.err("booksync: note: took over a lock left by process \(pid), which is no longer running") }
    }

    static func pull(_ collection: CollectionDirectory, remote: FirestoreRemote, options: SyncOptions, context: CommandContext) async throws(BooksyncError) -> SyncReport {
        let progress = context.progressDisplay()
        defer { progress.finish() }
        var options = options
        // A total for a long first pull's percentage and time left, only when they are shown.
        if progress.showsProgress { options.countTotalAfter = .seconds(1) }
        let report = try await collection.pull(remote: remote, options: options, progress: progress.update, onStaleLock: staleLockNotice(context, collection))
        progress.finish()
        explain(report.remoteRead, context: context)
        return report
    }

    /// With `--verbose`, how the remote was read: the changes only, or every
    /// name and why (a collection with a change field).
    static func explain(_ read: RemoteRead?, context: CommandContext) {
        guard context.verbose, let sentence = read?.description else { return }
        context.console.err("booksync: \(sentence)")
    }

    static func push(_ collection: CollectionDirectory, remote: FirestoreRemote, options: SyncOptions, context: CommandContext) async throws(BooksyncError) -> SyncReport {
        let progress = context.progressDisplay()
        defer { progress.finish() }
        return try await collection.push(remote: remote, options: options, progress: progress.update, onStaleLock: staleLockNotice(context, collection))
    }
}
