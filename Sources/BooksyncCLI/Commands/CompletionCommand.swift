/// `booksync completion bash|zsh|fish`: print a shell completion script.
///
/// The script is written from the same tables the parser reads
/// (`CompletionModel`), so `scripts/install` regenerates it from the installed
/// binary and it always matches that binary's commands and options.
enum CompletionCommand: Subcommand {
    static let name = "completion"
    static let summary = "print the shell completion script for bash, zsh or fish"
    static let usage = "booksync completion bash|zsh|fish"
    static let discussion = """
        Prints a completion script for the shell named: commands, their
        options, and the values of --color and -C. scripts/install installs all
        three. To load one by hand:
          bash  source <(booksync completion bash)        (in ~/.bashrc)
          zsh   source <(booksync completion zsh)         (in ~/.zshrc, after compinit)
          fish  booksync completion fish | source         (in config.fish)
        """
    static let options: [Option] = []
    static var operands: Operands { .choices(Shell.allCases.map(\.rawValue)) }

    enum Shell: String, CaseIterable {
        case bash, zsh, fish
    }

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        let names = Shell.allCases.map(\.rawValue).joined(separator: ", ")
        guard arguments.positionals.count == 1 else {
            throw arguments.usageError("name one shell: \(names)")
        }
        guard let shell = Shell(rawValue: arguments.positionals[0]) else {
            throw arguments.usageError("no completion for '\(arguments.positionals[0])'; the shells are \(names)")
        }
        let model = CompletionModel.booksync
        let script = switch shell {
        case .bash: ShellCompletion.bash(model)
        case .zsh: ShellCompletion.zsh(model)
        case .fish: ShellCompletion.fish(model)
        }
        // Generated from booksync's own tables only: no outside text in it.
        context.console.out(TerminalText(trusted: script))
        return .success
    }
}
