import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync help`, `--help` and the help of each command.
extension BooksyncCommand {
    static func help(for name: String?, console: Console) -> Int32 {
        guard let name else {
            console.out(TerminalText(trusted: mainHelp))
            return ExitCode.success.rawValue
        }
        if name == AuthHelp.topic {
            console.out(TerminalText(trusted: AuthHelp.text))
            return ExitCode.success.rawValue
        }
        guard let command = subcommand(named: name) else {
            return report(notACommand(name), console)
        }
        console.out(TerminalText(trusted: help(command)))
        return ExitCode.success.rawValue
    }

    static var mainHelp: String {
        var lines = [
            "booksync \(version): keep a directory of JSON records in sync with a Firestore collection, like git.",
            "",
            "usage: booksync [-C DIR] [--color WHEN|--no-color] [--progress HOW] [-q|-v] COMMAND [OPTIONS]",
            "",
            "commands:",
        ]
        let nameWidth = subcommands.map { $0.name.count }.max()! + 2
        for command in subcommands {
            lines.append("  " + command.name.padding(to: nameWidth) + command.summary)
        }
        lines += ["", "global options:"]
        lines += optionLines(globalOptions)
        lines += [
            "",
            "exit codes: 0 done; 1 done, but something needs attention; 2 usage error or not a",
            "collection; 3 remote or I/O failure; 4 refused by a safety rail.",
            "",
            "Run 'booksync COMMAND --help' for a command's options, 'booksync help auth' for credentials.",
        ]
        return lines.joined(separator: "\n")
    }

    static func help(_ command: any Subcommand.Type) -> String {
        var lines = ["usage: " + command.usage, "", command.summary]
        if !command.discussion.isEmpty { lines += ["", command.discussion] }
        if !command.options.isEmpty {
            lines += ["", "options:"]
            lines += optionLines(command.options)
        }
        lines += ["", "global options: \(globalOptionsReminder) (see 'booksync --help')"]
        return lines.joined(separator: "\n")
    }

    /// `-C DIR, --color WHEN, --no-color, -q/--quiet, -v/--verbose`: the global
    /// options a command's help reminds of (not `--help` and `--version`).
    static var globalOptionsReminder: String {
        globalOptions.filter { $0 != .help && $0 != .version }
            .map { option in option.spellings.joined(separator: "/") + (option.value.map { " " + $0.name } ?? "") }
            .joined(separator: ", ")
    }

    static func optionLines(_ options: [Option]) -> [String] {
        options.map { option in
            var left = option.alias.map { "-\($0), " } ?? ""
            left += option.name
            if let value = option.value { left += " " + value.name }
            return "  " + left.padding(to: 22) + option.help
        }
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
