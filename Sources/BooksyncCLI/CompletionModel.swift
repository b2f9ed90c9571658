/// What the shell completion scripts know about booksync's command line.
///
/// It is read from the tables the parser itself uses (`BooksyncCommand.subcommands`,
/// each command's `options`, `BooksyncCommand.globalOptions`), so a new command
/// or option is completed as soon as it parses: the scripts cannot drift from
/// the program that prints them.
struct CompletionModel: Sendable {
    /// What may follow an option that takes a value.
    enum Value: Sendable, Equatable {
        /// A directory (`-C DIR`).
        case directory
        /// One of a fixed set of words (`--color auto|always|never`).
        case choices([String])
        /// Free text the shell cannot guess (`--collection PATH`): nothing is offered.
        case text(String)
    }

    struct Option: Sendable {
        /// `--color`, or nil for an option that has only a short name.
        let long: String?
        /// `C` for `-C`, `q` for `-q`.
        let short: Character?
        let help: String
        /// nil for a flag.
        let value: Value?

        /// Every spelling of the option on the command line: `-q`, `--quiet`.
        var spellings: [String] { (short.map { ["-\($0)"] } ?? []) + (long.map { [$0] } ?? []) }
    }

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
            Command(name: command.name, summary: command.summary, options: command.options.map(option),
                    operands: command.operands)
        }
        let help = Command(name: "help", summary: "show the help of booksync or of a command", options: [],
                           operands: .choices(BooksyncCommand.subcommands.map { $0.name }))
        return CompletionModel(globals: BooksyncCommand.globalOptions.map(option), commands: commands + [help])
    }

    /// Values whose words the parser checks: offered by every shell.
    static let valueChoices: [String: [String]] = [
        "--color": ColorChoice.allCases.map(\.rawValue),
    ]

    static func option(_ spec: OptionSpec) -> Option {
        let isLong = spec.name.hasPrefix("--")
        // `-C` is declared by its one-letter name alone.
        let short = spec.short ?? (isLong ? nil : spec.name.dropFirst().first)
        var value: Value?
        if let valueName = spec.valueName {
            if let choices = valueChoices[spec.name] {
                value = .choices(choices)
            } else if valueName == "DIR" {
                value = .directory
            } else {
                value = .text(valueName)
            }
        }
        return Option(long: isLong ? spec.name : nil, short: short, help: spec.help, value: value)
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
