import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync plan`: what push would do, as a plan to review and apply later.
enum PlanCommand: Subcommand {
    static let name = "plan"
    static let summary = "show what push would do, and save it as a plan to review and apply exactly"
    static let usage = "booksync plan [PATHSPEC...] [--remote NAME] [--out FILE] [--markdown] [--json] [--max-delete N%] [--force]"
    static let discussion = """
        Plans what push would send now (the same writes, the same mass-delete
        guard) and reads the documents it would write in one batch (one billed
        read each), so the plan shows each changed field before and after and
        is pinned to the files' bytes and the documents' revisions. A document
        changed remotely since the last pull, or an invalid file, is held: not
        in the plan, listed, and the exit status is 1.

        --out FILE saves the plan (a JSON file, small enough to commit; its
        format is in the Reviewing changes article); booksync apply FILE later
        writes exactly that, or nothing if anything moved since. --markdown
        prints it for a pull-request comment: a row per changed field, every
        value escaped. --json prints the plan file itself. Nothing is written
        to the collection or the remote.
        """
    static let options: [Option] = [.remote, out, markdown, .json.explained("print the plan file's JSON instead of the lines"), .maxDelete, .force]
    static let exclusiveOptions: [(Option, Option)] = [(markdown, .json)]
    static let out = Option("--out", value: .text("FILE"), help: "save the plan to FILE, for booksync apply")
    static let markdown = Option("--markdown", help: "print Markdown for a pull-request comment")

    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { true }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        var options = try SyncCommandSupport.options(arguments)
        let collection = try context.openCollection(arguments)
        options.scope = try collection.recordFiles.scope(arguments.positionals, fromRoot: context.operandsFromCollection)
        let output = try arguments.value(out).map { path throws -> String in
            let absolute = PathDisplay.resolve(path, against: context.directory)
            if isInside(absolute, folder: collection.paths.root) {
                throw arguments.usageError("--out \(path) is inside the collection, where every .json file is a record and "
                    + ".booksync holds its state; save the plan outside it (with -C, paths are relative to the collection: --out ../plan.json)")
            }
            return absolute
        }
        let remote = try context.makeRemote(collection)
        let progress = context.progressDisplay()
        let plan = try await collection.makePlan(remote: remote, remoteName: collection.remote.name, pathspecs: arguments.positionals,
                                                 options: options, progress: progress.update)
        progress.finish()
        let planBytes = plan.fileBytes()
        if let output {
            do {
                try FileSystem.writeAtomically(planBytes, to: output)
            } catch {
                throw BooksyncError.io(error)
            }
        }
        if arguments.has(.json) {
            context.console.out(TerminalText(json: String(decoding: planBytes.dropLast(), as: UTF8.self)))
        } else if arguments.has(markdown) {
            // Escaped for GitHub and free of control characters by `MarkdownText.escape`.
            let schema = collection.rules.schema
            context.console.out(TerminalText(trusted: PlanRenderer.markdown(plan, schema: { $0.isTopLevel ? schema : nil })))
        } else {
            for line in PlanRenderer.lines(plan, context: context, root: collection.paths.root) { context.console.out(line) }
        }
        if let output, !context.quiet {
            let shown = context.display(output)
            context.console.err("booksync: plan saved to \(name: shown, full: true); apply it with: booksync apply \(name: shown, full: true)")
        }
        return plan.held.isEmpty ? .success : .attention
    }
}

/// Whether `path` (a file that may not exist yet, or a link) is inside `folder`, links resolved.
private func isInside(_ path: String, folder: String) -> Bool {
    guard let root = FileSystem.realPath(folder) else { return false }
    let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
    var candidates = [FileSystem.realPath(parent.isEmpty ? "/" : parent).map { $0 + "/" + name }]
    candidates.append(FileSystem.realPath(path))
    return candidates.compactMap { $0 }.contains { $0 == root || $0.hasPrefix(root + "/") }
}

/// `booksync apply`: performs exactly a saved plan's writes.
enum ApplyCommand: Subcommand {
    static let name = "apply"
    static let summary = "perform exactly the writes of a saved plan, or nothing if anything moved since"
    static let usage = "booksync apply FILE [--remote NAME] [--atomic] [--max-delete N%] [--force]"
    static let discussion = """
        Reads a plan saved by booksync plan --out and checks, before writing
        anything, that every planned file still has the planned bytes, that
        push would still make the same write, and that every planned document
        still has the planned revision (one batch read). If anything moved, it
        names each record and what moved, writes nothing, and exits 4. Then it
        sends the writes with push's preconditions (a change in the moment
        between the check and the write fails only that write; --atomic makes
        it all or nothing) and records the base as push does. Writes the
        remote already holds (a plan applied before) are recorded, not sent.
        A plan for another target, of another format version, made under
        another scope (config.json "scope") than the collection has now, or
        edited by hand is refused. The remote is the plan's unless --remote names one
        (it must be the same target). The mass-delete guard applies again:
        a plan made with --force is applied with --force.
        """
    static let options: [Option] = [.remote, .atomic, .maxDelete, .force]

    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { true }

    /// Records of a refused plan named one per line; the rest are counted.
    static let driftLinesShown = 50

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        guard arguments.positionals.count == 1, let file = arguments.positionals.first else {
            throw arguments.usageError("name one plan file (booksync plan --out FILE makes one)")
        }
        let path = PathDisplay.resolve(file, against: context.directory)
        let opened = try context.openCollection()
        let bytes: [UInt8]
        do {
            // The user's own path: a link to the plan is followed (the file read is never inside the collection's tree).
            bytes = try FileSystem.readFile(FileSystem.realPath(path) ?? path, limit: SavedPlan.maximumFileBytes)
        } catch {
            throw BooksyncError.invalidArgument("cannot read the plan \(file): \(error)")
        }
        let plan: SavedPlan
        do {
            plan = try SavedPlan.read(bytes, recordID: opened.rules.recordID)
        } catch {
            throw BooksyncError.planRefused(plan: file, problem: error.message)
        }
        let remoteName = arguments.value(.remote) ?? plan.remoteName
        if remoteName != RemoteList.origin, let problem = RemoteList.problem(withName: remoteName) {
            throw BooksyncError.planRefused(plan: file, problem: "names the remote '\(remoteName)': \(problem)")
        }
        let collection = try opened.selectingRemote(remoteName, environment: context.environment)
        let remote = try context.makeRemote(collection)
        let options = try SyncCommandSupport.options(arguments)
        let progress = context.progressDisplay()
        let outcome: ApplyOutcome
        do {
            outcome = try await collection.apply(plan, planName: file, remote: remote, options: options, progress: progress.update,
                                                 onStaleLock: SyncCommandSupport.staleLockNotice(context, collection))
        } catch {
            progress.finish()
            guard case .planDrift(let plan, let drifted) = error else { throw error }
            context.console.err("booksync: \(plan) no longer matches what it was made from, so nothing was written:")
            for line in drifted.prefix(Self.driftLinesShown) { context.console.err("  \(line)") }
            if drifted.count > Self.driftLinesShown { context.console.err("  … and \(drifted.count - Self.driftLinesShown) more records") }
            context.console.err("booksync: make the plan again (booksync plan --out \(plan)), review it, and apply the new one")
            return .refused
        }
        progress.finish()
        if outcome.sent == 0, outcome.alreadyApplied > 0 {
            context.console.out("\(file) was already applied: nothing written (\(plural(outcome.alreadyApplied, "write")) found in place)")
            return .success
        }
        SyncCommandSupport.render([outcome.report], context: context, root: collection.paths.root,
                                  unresolvedConflict: collection.unresolvedConflicts())
        return outcome.report.needsAttention ? .attention : .success
    }
}
