import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync remote`: the targets a collection syncs with, each with its own sync state.
enum RemoteCommand: Subcommand {
    static let name = "remote"
    static let summary = "list, add or remove remotes (origin, staging, the emulator), or forget one's base"
    static let usage = "booksync remote [list] | add NAME [--firestore PROJECT[/DATABASE]] [--collection PATH] [--emulator] [--emulator-host HOST:PORT] [--local|--shared] | remove NAME | forget NAME"
    static let discussion = """
        origin is the remote of .booksync/config.json. Others live in
        .booksync/remotes.json, each a Firestore project, database and
        collection (origin's unless given) on production Firestore or, with
        --emulator-host or --emulator, on the emulator. Each keeps its own sync
        state: committed in .booksync/remotes/NAME (--shared, the default for
        production), or on this machine only in .booksync/local/NAME (--local,
        and always for the emulator). status, diff, pull, push, sync, resolve
        and verify take --remote NAME. A remote named emulator must be on the
        emulator: --remote emulator always means one.

        forget drops a remote's base: the files stay, and the next pull compares
        each with that remote by content. remove deletes the definition and
        keeps the state folder.
        """
    static let options: [Option] = [.firestore, .collection, .emulator, .emulatorHost, .localState, .sharedState]

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        let words = arguments.positionals
        let collection = try context.openCollection()
        switch words.first ?? "list" {
        case "list":
            guard words.count <= 1 else { throw arguments.usageError("remote list takes no NAME") }
            try list(collection, context: context)
        case "add":
            try add(collection, name: try onlyName(words, arguments), arguments: arguments, context: context)
        case "remove":
            let name = try onlyName(words, arguments)
            var remotes = try collection.loadRemotes()
            guard name != RemoteList.origin else { throw arguments.usageError("origin is config.json's remote; it cannot be removed") }
            guard let definition = remotes[name], remotes.remove(name) else { throw BooksyncError.invalidArgument("no remote named '\(name)'") }
            try collection.saveRemotes(remotes)
            let state = collection.syncStateDirectory(of: definition)
            if !context.quiet {
                context.console.out("removed remote '\(name)'"
                    + (FileSystem.exists(state) ? "; its sync state is kept in \(context.shownPath(state)) (delete it when no longer needed)" : ""))
            }
        case "forget":
            let name = try onlyName(words, arguments)
            let selected = try collection.selectingRemote(name, environment: context.environment)
            let count = try selected.forgetWholeBase(onStaleLock: SyncCommandSupport.tookOverLockNotice(context))
            if !context.quiet {
                context.console.out("forgot the base of \(plural(count, "record")) synced with '\(name)'; "
                    + "the next pull compares each file with that remote by content")
            }
        case let other:
            throw arguments.usageError("unknown remote subcommand '\(other)' (list, add, remove, forget)")
        }
        return .success
    }

    private static func onlyName(_ words: [String], _ arguments: ParsedArguments) throws -> String {
        guard words.count == 2 else { throw arguments.usageError("remote \(words[0]) takes one NAME") }
        if words[1] != RemoteList.origin, let problem = RemoteList.problem(withName: words[1]) { throw arguments.usageError(problem) }
        return words[1]
    }

    private static func list(_ collection: CollectionDirectory, context: CommandContext) throws {
        let remotes = try collection.loadRemotes()
        let origin = collection.config.remote
        context.console.out("origin\t\(describe(origin)) (production, or FIRESTORE_EMULATOR_HOST; state \(context.shownPath(collection.paths.state)), committed)")
        var lines: [(name: String, line: TerminalText)] = remotes.remotes.map { remote in
            let state = collection.syncStateDirectory(of: remote)
            let endpoint: String
            switch remote.endpoint {
            case .production: endpoint = "production"
            case .emulator(let host): endpoint = "emulator " + (host ?? "at FIRESTORE_EMULATOR_HOST")
            }
            return (remote.name, "\(name: remote.name)\t\(describe(remote.target)) (\(endpoint); state \(context.shownPath(state)), "
                + (remote.sharesState ? "committed)" : "this machine only)"))
        }
        // The emulator's own state, which FIRESTORE_EMULATOR_HOST selects when
        // origin's base belongs to another target: not in remotes.json, but a base.
        if let state = collection.implicitEmulatorState(remotes) {
            lines.append((RemoteList.emulator, "\(RemoteList.emulator)\t\(describe(origin)) (emulator at FIRESTORE_EMULATOR_HOST, "
                + "built in; state \(context.shownPath(state)), this machine only)"))
        }
        for entry in lines.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) { context.console.out(entry.line) }
    }

    private static func describe(_ target: FirestoreTarget) -> TerminalText {
        "firestore \(name: target.project)/\(name: target.database) \(name: target.collectionPath)"
    }

    private static func add(_ collection: CollectionDirectory, name: String, arguments: ParsedArguments, context: CommandContext) throws {
        guard name != RemoteList.origin else {
            throw arguments.usageError("origin is config.json's remote; edit .booksync/config.json to change it")
        }
        try arguments.rejectCombined(.localState, .sharedState)
        var target = collection.config.remote
        if let spec = arguments.value(.firestore) {
            let (parsed, _) = try InitCommand.resolveTarget(spec, collection: target.collectionPath, context: context)
            target = parsed
        }
        if let path = arguments.value(.collection) {
            if let problem = FirestoreTarget.validateCollectionPath(path) { throw arguments.usageError("--collection: \(problem)") }
            target = FirestoreTarget(project: target.project, database: target.database, collectionPath: path)
        }
        var endpoint = RemoteEndpoint.production
        if let host = arguments.value(.emulatorHost) {
            if let problem = RemoteList.problem(withEmulatorHost: host) { throw arguments.usageError("--emulator-host: \(problem)") }
            endpoint = .emulator(host: host)
        } else if arguments.has(.emulator) {
            endpoint = .emulator(host: nil)
        }
        if let problem = RemoteList.problem(withName: name, endpoint: endpoint) {
            throw arguments.usageError("\(problem); add it with --emulator or --emulator-host HOST:PORT, or choose another name")
        }
        let shares = arguments.has(.sharedState) || (!arguments.has(.localState) && endpoint == .production)
        if shares, endpoint != .production { throw arguments.usageError("--shared: \(RemoteList.emulatorStateIsLocal)") }
        var remotes = try collection.loadRemotes()
        guard remotes[name] == nil else {
            throw BooksyncError.invalidArgument("remote '\(name)' exists already; 'booksync remote remove \(name)' first to redefine it")
        }
        if let clash = remotes.caseClash(name) { throw arguments.usageError(clash) }
        if let problem = remotes.problemAddingOne { throw BooksyncError.invalidArgument(problem) }
        remotes.set(RemoteDefinition(name: name, target: target, endpoint: endpoint, sharesState: shares))
        try collection.saveRemotes(remotes)
        if !context.quiet {
            context.console.out("added remote '\(name)': \(describe(target)); use --remote \(name) with status, pull, push and sync")
        }
    }
}
