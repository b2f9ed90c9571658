import BooksyncCore

/// One pull or push from start to finish: what each of its stages reads and
/// records, held once instead of handed from stage to stage.
///
/// `CollectionDirectory.pull` and `.push` are its facades: they take the lock,
/// make an engine (which loads the base and scans the files) and run it.
/// The stages — gather, plan, guard, execute and record (the Architecture article)
/// — are its methods in `SyncEngine+Pull.swift` and `SyncEngine+Push.swift`;
/// per-record work that runs on several threads at once (applying a pull
/// step, loading a push chunk) is done by small `Sendable` values that hold
/// only the collection's rules and paths (`PullFileSteps`,
/// `PushChunkLoader`), which the engine makes.
struct SyncEngine {
    /// The collection directory the command runs in.
    let collection: CollectionDirectory
    /// The remote collection it syncs with.
    let remote: any RemoteCollection
    /// The command's options: dry run, conflict choice, guards, pathspecs.
    let options: SyncOptions
    /// Receives progress, from any thread.
    let progress: @Sendable (SyncProgress) -> Void
    /// The gather stage's values and methods: the base narrowed to the
    /// pathspecs, the files scanned against it, the remote read and every
    /// record classified (`SyncGather`), as status and diff gather.
    var gather: SyncGather
    /// The base narrowed to the pathspecs (the whole base without them): what
    /// the plan is made against. Released (`releasePlanningBase`) once the plan
    /// is made: with pathspecs it is a copy of its own, which then does not
    /// outlive planning.
    var manifest: Manifest { gather.manifest }
    /// The files, scanned against `manifest`.
    var scan: LocalScan {
        get { gather.scan }
        set { gather.scan = newValue }
    }
    /// The base being recorded, change by change, saved as the command goes.
    var base: BaseState
    /// What the command did (or, in a dry run, would do), record by record.
    var report: SyncReport
    /// The manifest's stamp as the command read it: one that moves before
    /// the command writes was moved by someone else (`requireGitQuiet`).
    let manifestStampAtStart: FileStamp?

    /// Loads the base and scans the files, as pull and push start (once git
    /// is quiet: `GitActivity.waitUntilQuiet`). A dry run does not
    /// even update the stat cache.
    /// - Parameters:
    ///   - keepChangedRecords: Keep the records that differ from the base,
    ///     parsed, for push to send.
    ///   - keepHashes: Keep the hashes of changed files (pull compares them
    ///     with remote content; push does not).
    init(_ collection: CollectionDirectory, command: SyncPhase, remote: any RemoteCollection, options: SyncOptions,
         progress: @escaping @Sendable (SyncProgress) -> Void,
         keepChangedRecords: Bool = false, keepHashes: Bool = true) throws(BooksyncError) {
        self.collection = collection
        self.remote = remote
        self.options = options
        self.progress = progress
        manifestStampAtStart = collection.manifestFile.writeStamp()
        let whole = try collection.manifestFile.load(for: remote)
        let manifest = whole.scoped(to: options.scope)
        // With the base, clean files are one bit per record in the scan (`LocalFiles`).
        gather = try SyncGather(collection, manifest: manifest, scope: options.scope, scanning: ScanChoices(
            writeIndex: !options.dryRun, keepHashes: keepHashes, keepChangedRecords: keepChangedRecords))
        let scan = gather.scan
        // `lock` cleans the state directories and the collection's top; what a
        // killed command left in a subcollection folder the scan has just seen.
        if !options.dryRun {
            for folder in scan.foldersWithTemporaries {
                FileSystem.removeStaleTemporaries(in: collection.paths.root + "/" + folder, recoverInto: collection.paths.recovered)
            }
        }
        base = BaseState(copies: collection.baseCopies, manifest: whole, configFingerprint: collection.configFingerprint,
                         target: remote.identity)
        report = SyncReport(command: command, dryRun: options.dryRun, events: [], unusableFiles: scan.unusableFiles, unusableRemote: [])
    }

    /// How records look in this collection (id field, schema).
    var rules: RecordRules { collection.rules }

    /// The base the mass-delete guard measures deletions against: the scoped
    /// base, or the whole one (`LiveRound.scopeFromWatcher`).
    var guardedBaseCount: Int {
        options.round.scopeFromWatcher ? base.manifest.entries.count : manifest.entries.count
    }

    /// Refuses to write when git began changing the tree, or the base moved,
    /// since the command read them: its plan would push git's writes as edits.
    /// git's index lock alone is waited out (an editor's background `git
    /// status` takes it for a moment); a checkout that held it also moved the
    /// manifest, which refuses.
    func requireGitQuiet() async throws(BooksyncError) {
        if let activity = GitActivity.inProgress(at: collection.paths.root) {
            guard GitActivity.isShortLived(activity) else { throw .gitBusy(activity: activity) }
            try await GitActivity.waitUntilQuiet(at: collection.paths.root)
        }
        guard collection.manifestFile.writeStamp() == manifestStampAtStart else {
            throw .gitBusy(activity: "the base (\(collection.paths.manifest)) changed while booksync read the files, as a git checkout does")
        }
    }

    /// Drops the planning copy of the base once the plan is made (see `manifest`).
    mutating func releasePlanningBase() {
        gather.manifest = Manifest()
    }

    /// The report as it ends: the documents a delete left with subcollection
    /// records below them, named against the base and the files.
    mutating func finishedReport() -> SyncReport {
        report.deletedParents = SyncReport.parentDeletions(
            events: report.events, known: [AnySequence(base.manifest.entries.keys), AnySequence(scan.files.keys)],
            subcollections: rules.subcollections)
        return report
    }
}
