import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync seed`: publish the files to a target one way, without a three-way base.
enum SeedCommand: Subcommand {
    static let name = "seed"
    static let summary = "publish every record file to a remote, overwriting it (load the emulator or a fresh project)"
    static let usage = "booksync seed [--remote NAME] [--dry-run] [--delete [--max-delete N%] [--force]] [--json]"
    static let discussion = """
        Writes every valid record file to the remote (with FIRESTORE_EMULATOR_HOST
        set, the emulator), replacing the document whatever it holds: nothing
        is compared, so use it for a target whose content does not matter, such
        as a fresh emulator or staging project; a target that is not the
        emulator must be named with --remote (origin too). Documents that no record file
        has are kept, unless --delete, which deletes them within the
        mass-delete guard (counted against the remote's documents). Afterwards
        that remote's base is what was written, so status, pull and push go on
        two-way from there; no other remote's base changes. Invalid files are
        never sent.
        """
    static let options: [Option] = [.remote, .dryRun, .deleteOthers, .maxDelete, .force, SyncCommandSupport.json]

    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { true }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        try arguments.expectNoOperands()
        var options = SeedOptions()
        options.dryRun = arguments.has(.dryRun)
        options.deleteOthers = arguments.has(.deleteOthers)
        options.force = arguments.has(.force)
        if let percent = arguments.percentage(.maxDelete) { options.deleteGuard.maximumPercent = percent }
        let collection = try context.openCollection(arguments)
        let remote = try context.makeRemote(collection)
        // Overwriting production without a precondition undoes everyone's
        // edits since the last sync: only when the user named the target.
        if arguments.value(.remote) == nil, remote.identity?.isEmulator != true {
            throw arguments.usageError("seed overwrites every document of \(remote.displayName) without comparing; "
                + "it is meant for the emulator and fresh projects. Name the target to confirm: booksync seed --remote \(collection.remote.name)")
        }
        let progress = context.progressDisplay()
        let report = try await collection.seed(remote: remote, options: options, progress: progress.update,
                                               onStaleLock: SyncCommandSupport.staleLockNotice(context, collection))
        progress.finish()
        if arguments.has(.json) {
            context.console.out(JSONDocuments.syncReports([report], command: name, root: collection.paths.root, dryRun: options.dryRun,
                                                          unresolvedConflict: { _ in nil }))
        } else {
            SyncCommandSupport.render([report], context: context, root: collection.paths.root, unresolvedConflict: { _ in nil })
        }
        return report.needsAttention ? .attention : .success
    }
}
