import BooksyncCore
@_spi(Remote) import BooksyncKit

/// The `booksync` command line: global options and dispatch (failures are
/// reported by `BooksyncCommand+Failures.swift`; the process's entry point,
/// with its signals, is `BooksyncCommand+Main.swift`).
package enum BooksyncCommand {
    package static let version = "0.1.0"

    static var subcommands: [any Subcommand.Type] {
        [
            InitCommand.self, CloneCommand.self, DiscoverCommand.self, StatusCommand.self, DiffCommand.self, PullCommand.self, PushCommand.self, SyncCommand.self, PlanCommand.self,
            ApplyCommand.self, CompareCommand.self, WatchCommand.self,
            ResolveCommand.self, SeedCommand.self, ValidateCommand.self, VerifyCommand.self, FormatCommand.self, SchemaCommand.self, RemoteCommand.self, MergeFileCommand.self,
            MergeManifestCommand.self, CompletionCommand.self, ManCommand.self,
        ]
    }

    /// The options every command accepts: `run` parses with them, and
    /// `locateCommand` uses them to skip the values of `-C` and `--color` on
    /// the way to the command name.
    static let globalOptions: [Option] = [.directory, .color, .noColor, .progress, .quiet, .verbose, .help, .version]

    /// The subcommand called `name`, if any.
    static func subcommand(named name: String) -> (any Subcommand.Type)? {
        subcommands.first { $0.name == name }
    }

    /// Runs booksync with `arguments` (without the program name) and returns the exit
    /// status. Never throws and never crashes on bad input: every failure becomes a
    /// message and an exit code. `console` is built from `--color` unless given.
    package static func run(
        _ arguments: [String], environment: [String: String], currentDirectory: String, network: NetworkAccess,
        console makeConsole: ((ColorChoice) -> Console)? = nil
    ) async -> Int32 {
        let commandLine = arguments
        let (commandIndex, colorValue) = locateCommand(arguments)
        let color = colorValue.flatMap(ColorChoice.init(rawValue:)) ?? .auto
        let console = makeConsole?(color) ?? Console.standard(color: color, environment: environment)
        defer { console.flush() }
        if let colorValue, ColorChoice(rawValue: colorValue) == nil {
            return report(UsageError(message: "--color must be auto, always or never, not '\(colorValue)'", command: nil), console)
        }
        var rest = arguments
        var command: (any Subcommand.Type)?
        if let commandIndex {
            let name = rest.remove(at: commandIndex)
            if name == "help" {
                return help(for: locateCommand(rest).commandIndex.map { rest[$0] }, console: console)
            }
            guard let found = subcommand(named: name) else {
                return report(notACommand(name), console)
            }
            command = found
        }
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentParser.parse(rest, options: globalOptions + (command?.options ?? []), command: command?.name,
                                              exclusive: command?.exclusiveOptions ?? [])
        } catch {
            return report(error, console)
        }
        let progress = progressChoice(parsed, environment: environment, console: console)
        if parsed.has(.version) {
            console.out(TerminalText(trusted: BuildStamp.versionLine(version: version)))
            return ExitCode.success.rawValue
        }
        guard let command else {
            console.out(TerminalText(trusted: mainHelp))
            return (parsed.has(.help) ? ExitCode.success : ExitCode.usage).rawValue
        }
        if parsed.has(.help) {
            console.out(TerminalText(trusted: help(command)))
            return ExitCode.success.rawValue
        }
        // The hand-off to the network helper, at the front door: the helper runs
        // the same command line from the start, so nothing here has begun.
        if command.reachesRemote(parsed), case .helper(let helper) = network {
            console.flush()
            return reportFailure(NetworkAccess.execute(helper: helper, arguments: commandLine, environment: environment),
                                 command: command.name, console: console).rawValue
        }
        let directory = parsed.value(.directory).map { PathDisplay.resolve($0, against: currentDirectory) } ?? currentDirectory
        let context = CommandContext(
            console: console, directory: directory, currentDirectory: currentDirectory,
            quiet: parsed.has(.quiet), verbose: parsed.has(.verbose), environment: environment,
            arguments: commandLine, network: network,
            progress: progress)
        if WorkspaceRun.commands.contains(command.name), FileSystem.isDirectory(directory), CollectionPaths.locate(from: directory) == nil {
            return await WorkspaceRun.run(command, parsed, context: context).rawValue
        }
        do {
            defer { if context.verbose { context.remoteUsage.report(to: console) } }
            return try await command.run(parsed, context: context).rawValue
        } catch {
            return reportFailure(error, command: command.name, console: console).rawValue
        }
    }

    /// The index of the subcommand name (the first argument that is neither an
    /// option nor an option's value) and the `--color` choice, which must be
    /// known before anything is printed: the last of `--color WHEN`,
    /// `--color=WHEN` and `--no-color` (`never`) wins, as the parser keeps the
    /// last value. Values are skipped by the same table `run` parses with, and
    /// after the command name by the command's own table too.
    static func locateCommand(_ arguments: [String]) -> (commandIndex: Int?, color: String?) {
        var commandIndex: Int?
        var color: String?
        let words = ArgumentParser.words(arguments, options: globalOptions) { subcommand(named: $0)?.options ?? [] }
        for word in words {
            switch word {
            case .option(let option, let value):
                if option == .color, let value { color = value }
                if option == .noColor { color = ColorChoice.never.rawValue }
            case .operand(_, let index):
                if commandIndex == nil { commandIndex = index }
            case .endOfOptions:
                return (commandIndex, color)
            case .unknown:
                continue
            }
        }
        return (commandIndex, color)
    }

    /// Every name `booksync NAME` accepts, for suggestions.
    static var commandNames: [String] { subcommands.map { $0.name } + ["help"] }
}
