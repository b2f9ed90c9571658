import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync watch`: two-way sync while you edit (`LiveSync`).
enum WatchCommand: Subcommand {
    static let name = "watch"
    static let summary = "push saves and pull remote changes while you edit"
    static let usage = "booksync watch [--remote NAME] [--interval SECONDS] [--max-delete N%] [--json]\n       booksync watch --no-sync [--json]"
    static let discussion = """
        Pulls, pushes what changed while nobody watched, then keeps both sides
        in step until Ctrl-C: a saved record file is pushed once the files have
        been quiet for 0.2 s (at most 2 s after the first change), and the
        remote is polled every --interval seconds. Each round is an ordinary
        push or pull and prints the same lines: conflicts are stored and
        reported, a file that does not parse (a save caught mid-write) is
        reported and never sent, and the mass-delete guard adds up the
        watch's deletions against the whole collection. A conflict or an
        invalid document is told once, not at every poll.

        With a change field a poll is one query (one billed read while nothing
        changed, plus one per changed document; one per subcollection group)
        and every 5 minutes a count (one read per 1,000 documents), which
        finds deletions. Without one, every poll lists every name, so
        --interval must be given; the cost is printed at start. --interval 0
        never polls.

        The lock is taken per round, so other commands and apps run meanwhile.
        Stopping at any moment (Ctrl-C, kill, kill -9) loses nothing: what was
        not pushed yet is a local change the next command finds. Ctrl-C
        prints what it did and what it cost in requests, reads and writes.

        While a watch runs, 'booksync status --offline' asks it what changed
        instead of looking at every file (on Linux), so it takes the same
        time for a million records as for ten. --no-sync watches for that
        alone: it syncs nothing and needs no network. The watch listens on a
        socket in a folder only you can reach ($XDG_RUNTIME_DIR/booksync or
        /tmp/booksync-UID); nothing in the collection starts or finds it.
        """
    static let options: [Option] = [.remote, interval, .maxDelete, noSync,
                                     Option.json.explained("print one JSON object per line (JSON Lines) as things happen")]
    static let interval = Option("--interval", value: .text("SECONDS"),
                                 help: "poll the remote every SECONDS (default 5 with a change field, required without; 0: never)")

    static let noSync = Option("--no-sync", help: "sync nothing: only keep 'status --offline' fast by watching the files")
    static let exclusiveOptions: [(Option, Option)] = [(noSync, .remote), (noSync, interval), (noSync, .maxDelete)]

    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { !arguments.has(noSync) }

    /// The poll interval without `--interval`, with a change field.
    static let defaultInterval = 5.0
    /// How often a poll also counts the collection, in seconds.
    static let countInterval = 300.0

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        let collection = try context.openCollection(arguments)
        if arguments.has(noSync) { return try await watchForStatus(collection, arguments: arguments, context: context) }
        var options = SyncOptions()
        if let percent = arguments.percentage(.maxDelete) { options.deleteGuard.maximumPercent = percent }
        let seconds = try pollSeconds(arguments, changeField: collection.rules.changeField)
        GitDriverCheck.warnIfOutdated(collectionRoot: collection.paths.root, context: context)
        let remote = try context.makeRemote(collection)
        var settings = LiveSyncSchedule.Settings()
        settings.pollInterval = seconds > 0 ? .milliseconds(Int64(seconds * 1000)) : nil
        settings.countEvery = seconds > 0 ? max(1, Int((countInterval / seconds).rounded(.up))) : 1
        let printer = WatchPrinter(context: context, collection: collection, json: arguments.has(.json))
        printer.started(remote: remote, settings: settings, seconds: seconds,
                        baseCount: (try? collection.manifestFile.load().entries.count) ?? 0)
        #if os(Linux)
        let watch = FolderWatch(root: collection.paths.root, subcollections: collection.rules.subcollections)
        let server = serve(watch, context: context, printer: printer)
        defer { server?.stop() }
        let feed = InotifyChangeFeed(watch: watch, subcollections: collection.rules.subcollections)
        #else
        // No watcher outside Linux (LiveSync.md says why): every file is looked at every 2 s.
        let feed = RescanChangeFeed(interval: .seconds(2), reason: "no file watcher on this system; every file is looked at every 2 s")
        #endif
        let live = LiveSync(collection: collection, remote: remote, options: options, settings: settings, timing: .continuous())
        var failure: BooksyncError?
        do {
            try await live.run(feed: feed, onStaleLock: SyncCommandSupport.staleLockNotice(context, collection)) { printer.show($0) }
        } catch {
            failure = error
        }
        printer.stopped(usage: remote.usage.totals)
        if let failure { throw failure }
        return .success
    }

    /// `--no-sync`: answers status's questions until Ctrl-C.
    static func watchForStatus(_ collection: CollectionDirectory, arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        #if os(Linux)
        let printer = WatchPrinter(context: context, collection: collection, json: arguments.has(.json))
        let watch = FolderWatch(root: collection.paths.root, subcollections: collection.rules.subcollections)
        if let problem = watch.ask(since: nil).problem { throw BooksyncError.invalidArgument("cannot watch for status: \(problem)") }
        let server: WatchServer
        do {
            server = try WatchServer.serving(watch, environment: context.environment)
        } catch {
            throw BooksyncError.invalidArgument("cannot watch for status: \(error.description)")
        }
        defer { server.stop() }
        printer.startedForStatus(socket: server.socket.path)
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(3600))
        }
        printer.stoppedForStatus()
        return .success
        #else
        throw BooksyncError.invalidArgument("cannot watch for status: booksync has no file watcher on this system (only inotify, on Linux)")
        #endif
    }

    #if os(Linux)
    /// Lets status ask `watch` what changed; nil (said with --verbose) when it cannot.
    static func serve(_ watch: FolderWatch, context: CommandContext, printer: WatchPrinter) -> WatchServer? {
        do {
            return try WatchServer.serving(watch, environment: context.environment)
        } catch {
            printer.notServing(error.description)
            return nil
        }
    }
    #endif

    /// `--interval` in seconds (0: never poll), or the default.
    /// - Throws: `UsageError` for a bad value, or none without a change field.
    static func pollSeconds(_ arguments: ParsedArguments, changeField: String?) throws -> Double {
        guard let text = arguments.value(interval) else {
            guard changeField == nil else { return defaultInterval }
            throw arguments.usageError("this collection has no change field, so each poll lists every remote name (one billed read per document); "
                                       + "give --interval SECONDS to poll anyway (0: never), or set up a change field (\"changeField\" in .booksync/config.json; see 'booksync help init')")
        }
        guard let value = Double(text), value.isFinite, value >= 0, value <= 86_400, value == 0 || value >= 0.1 else {
            throw arguments.usageError("--interval takes seconds from 0.1 to 86400, or 0 for never, not '\(text)'")
        }
        return value
    }
}
