import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync verify`: every record file compared with the remote by content.
enum VerifyCommand: Subcommand {
    static let name = "verify"
    static let summary = "compare every record file with its remote document by content"
    static let usage = "booksync verify [--remote NAME] [--repair]"
    static let discussion = """
        status trusts the base committed with the collection: a clone whose
        manifest was edited to match an edited file shows that record as
        unchanged. verify reads every record file (never the stat cache) and
        every remote document (one billed read each), compares their contents,
        and names each record the base calls in sync although the file differs
        from the remote. Exits 1 if there is one. Neither pull nor push touches
        such a record while the base says it is in sync: --repair forgets its
        base, so status shows it as added on both sides and pull merges it or
        stores the conflict for resolve. Differences status already shows are
        only counted.
        """
    static let options: [Option] = [.remote, .repair]

    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { true }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        try arguments.expectNoOperands()
        let collection = try context.openCollection(arguments)
        let remote = try context.makeRemote(collection)
        let progress = context.progressDisplay()
        let found = try await collection.verify(remote: remote, progress: progress.update)
        progress.finish()
        let renderer = StatusRenderer(context: context, root: collection.paths.root)
        for id in found.baseDisagrees {
            context.console.out("differs  \(renderer.path(id)) (the base says it matches the remote; it does not)")
        }
        if !context.quiet {
            var summary = "\(plural(found.compared, "record")) compared by content"
            summary += found.baseDisagrees.isEmpty ? ", none hidden by the base" : ", \(found.baseDisagrees.count) differ though the base says they match"
            if found.differing > 0 { summary += "; \(found.differing) more differ as booksync status shows" }
            context.console.err(TerminalText(stringLiteral: summary))
        }
        if arguments.has(.repair), !found.baseDisagrees.isEmpty {
            try collection.forgetBase(of: found.baseDisagrees, onStaleLock: SyncCommandSupport.tookOverLockNotice(context))
            context.console.out("forgot the base of \(plural(found.baseDisagrees.count, "record")); booksync pull now compares both sides")
            return .success
        }
        return found.needsAttention ? .attention : .success
    }
}
