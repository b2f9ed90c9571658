/// What the shell completion scripts know about booksync's command line.
///
/// It is read from the tables the parser itself uses (`BooksyncCommand.subcommands`,
/// each command's `options`, `BooksyncCommand.globalOptions`, each `Option`'s
/// declared value), so a new command or option is completed as soon as it
/// parses: the scripts cannot drift from the program that prints them.
struct CompletionModel: Sendable {
    struct Command: Sendable {
        let name: String
        let summary: String
        let options: [Option]
        let operands: Operands
    }

    let globals: [Option]
    let commands: [Command]

    /// Options that take a value, in every spelling: their next word is a value.
    func valueSpellings(_ options: [Option]) -> [String] {
        options.filter { $0.value != nil }.flatMap(\.spellings)
    }

    /// The model of booksync's own command line, plus `help COMMAND`, which
    /// `BooksyncCommand.run` handles before any table.
    static var booksync: CompletionModel {
        let commands = BooksyncCommand.subcommands.map { command in
            Command(name: command.name, summary: command.summary, options: command.options, operands: command.operands)
        }
        let help = Command(name: "help", summary: "show the help of booksync or of a command", options: [],
                           operands: .choices(BooksyncCommand.subcommands.map { $0.name }))
        return CompletionModel(globals: BooksyncCommand.globalOptions, commands: commands + [help])
    }
}

/// What a command takes after its options, for completion.
enum Operands: Sendable, Equatable {
    /// Nothing the shell can offer (no operands, or record ids).
    case none
    /// Paths of files.
    case files
    /// One of a fixed set of words.
    case choices([String])
}

extension Subcommand {
    /// Most commands take no file operands; the ones that do say so below.
    static var operands: Operands { .none }
}

// The commands whose operands are file paths (see their `usage`).
extension FormatCommand { static var operands: Operands { .files } }
extension ValidateCommand { static var operands: Operands { .files } }
extension MergeFileCommand { static var operands: Operands { .files } }
extension MergeManifestCommand { static var operands: Operands { .files } }
