/// `booksync man [COMMAND]`: print a man page in roff.
enum ManCommand: Subcommand {
    static let name = "man"
    static let summary = "print the man page of booksync or of a command, in roff"
    static let usage = "booksync man [COMMAND]"
    static let discussion = """
        Prints booksync(1), or booksync-COMMAND(1) for a command, written from
        the same declarations as --help and the completions. scripts/install
        installs every page into PREFIX/share/man/man1. To read one without
        installing it:
          booksync man pull | man -l -
        """
    static let options: [Option] = []
    static var operands: Operands { .choices(BooksyncCommand.subcommands.map { $0.name }) }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        guard arguments.positionals.count <= 1 else { throw arguments.usageError("name at most one command") }
        let page: String
        if let name = arguments.positionals.first {
            guard let command = BooksyncCommand.subcommand(named: name) else { throw arguments.usageError("'\(name)' is not a booksync command") }
            page = ManPage.page(command, version: BooksyncCommand.version)
        } else {
            page = ManPage.main(version: BooksyncCommand.version)
        }
        // Written from booksync's own declarations only, escaped for roff.
        context.console.out(TerminalText(trusted: String(page.dropLast())))
        return .success
    }
}
