import BooksyncCore
import BooksyncKit
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What every command gets: where to work, how to talk, how chatty to be.
struct CommandContext: Sendable {
    let console: Console
    /// The directory to work in: `-C DIR`, or the current directory.
    let directory: String
    /// The directory paths are shown relative to (the process's current directory).
    let currentDirectory: String
    let quiet: Bool
    let verbose: Bool
    let environment: [String: String]
    /// The whole command line (without the program name), for the network helper.
    let arguments: [String]
    let network: NetworkAccess
    /// `--progress`, as given (`auto` by default).
    var progress: ProgressChoice = .auto
    /// The usage tally of the remote the command made, if any, for the
    /// closing `--verbose` line (see `RemoteUsageLine`); shared with the
    /// contexts `working(in:)` makes, so `clone` counts its pull too.
    var remoteUsage = RemoteUsageLine()
    /// Pathspecs are relative to the collection, not the current directory
    /// (a workspace has taken the collection's path off each).
    var operandsFromCollection = false

    /// The same context working in `directory` (`clone` works in the folder it
    /// creates, a workspace in each collection), writing to `console` if given.
    func working(in directory: String, console: Console? = nil) -> CommandContext {
        CommandContext(console: console ?? self.console, directory: directory, currentDirectory: currentDirectory, quiet: quiet, verbose: verbose,
                       environment: environment, arguments: arguments, network: network, progress: progress, remoteUsage: remoteUsage)
    }

    /// The same context printing only results and errors (`-q`): the
    /// commands a whole-database clone runs in each folder say less.
    func quieted() -> CommandContext {
        CommandContext(console: console, directory: directory, currentDirectory: currentDirectory, quiet: true, verbose: verbose,
                       environment: environment, arguments: arguments, network: network, progress: progress, remoteUsage: remoteUsage)
    }

    /// A path as the user should see it: relative to where they ran booksync.
    func display(_ absolutePath: String) -> String {
        PathDisplay.relative(absolutePath, to: currentDirectory)
    }

    /// The progress display `--progress` and `-q` ask for, on this console.
    func progressDisplay() -> ProgressDisplay {
        ProgressDisplay(console: console, style: progress.style(stderrIsTerminal: console.stderrIsTerminal, environment: environment))
    }

    func openCollection() throws(BooksyncError) -> CollectionDirectory {
        // `-C missing` must not quietly fall back to a collection further up.
        guard FileSystem.isDirectory(directory) else { throw .invalidArgument("-C \(directory): no such directory") }
        return try CollectionDirectory.open(searchingFrom: directory)
    }

    /// The collection working with the remote `--remote` names, or the one
    /// the environment implies (`CollectionDirectory.selectingRemote`).
    func openCollection(_ arguments: ParsedArguments) throws -> CollectionDirectory {
        let name = arguments.value(.remote)
        if let name, name != RemoteList.origin, let problem = RemoteList.problem(withName: name) {
            throw arguments.usageError(problem)
        }
        return try openCollection().selectingRemote(name, environment: environment)
    }
}

/// One subcommand: its help and its behaviour.
protocol Subcommand {
    static var name: String { get }
    static var summary: String { get }
    static var usage: String { get }
    /// Longer explanation shown by `--help`.
    static var discussion: String { get }
    /// The options it accepts besides the global ones, in the order its help lists them.
    static var options: [Option] { get }
    /// Pairs of its options that cannot be given together: the parser refuses
    /// them, so every usage error is found before anything is opened, handed
    /// to the network helper, or run in each collection of a workspace.
    static var exclusiveOptions: [(Option, Option)] { get }
    /// What follows the options, for shell completion (default: nothing to offer).
    static var operands: Operands { get }
    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode
    /// Whether this command line talks to a remote: then `booksync`, which
    /// links no network, hands it to `booksync-network` right after parsing
    /// (`NetworkAccess`), before anything is opened, read or written.
    static func reachesRemote(_ arguments: ParsedArguments) -> Bool
}

extension Subcommand {
    /// Local commands by default.
    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { false }

    /// No exclusive options by default.
    static var exclusiveOptions: [(Option, Option)] { [] }
}

/// The `booksync` command line: global options, dispatch, error reporting.
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

    /// Prints why a command failed and gives its exit code, the same way
    /// wherever it failed: a usage error with the pointer to `--help`, a
    /// `BooksyncError` as its sentence (after `place`, a collection's path in
    /// a workspace), anything else, a bug, without its raw text.
    static func reportFailure(_ error: any Error, command: String, place: String? = nil, console: Console) -> ExitCode {
        switch error {
        case let error as UsageError:
            return ExitCode(rawValue: report(error, console)) ?? .usage
        case let error as BooksyncError:
            console.err("booksync: error: \(place.map { "\($0): " } ?? "")\(error.description)")
            return error.exitCode
        default:
            console.err("booksync: error: \(command) failed unexpectedly (\(String(describing: type(of: error)))); this is a bug in booksync")
            return .failure
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

    /// `'stauts' is not a booksync command; did you mean 'status'?`
    static func notACommand(_ name: String) -> UsageError {
        UsageError(message: "'\(name)' is not a booksync command\(Suggestions.didYouMean(name, among: commandNames))", command: nil)
    }

    static func report(_ error: UsageError, _ console: Console) -> Int32 {
        let prefix = error.command.map { "booksync \($0)" } ?? "booksync"
        console.err("\(prefix): \(error.message)")
        console.err("Run '\(prefix) --help' for usage.")
        return ExitCode.usage.rawValue
    }

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

    /// `--progress`, else nothing with `-q`, else `BOOKSYNC_PROGRESS` (a
    /// default a CI job sets once, which `-q` still silences), else auto. A
    /// variable that is not one of the words is warned about and ignored:
    /// it must not break `--version`, completions or git's merge drivers.
    static func progressChoice(_ parsed: ParsedArguments, environment: [String: String], console: Console) -> ProgressChoice {
        if let choice = parsed.value(.progress).flatMap(ProgressChoice.init(rawValue:)) { return choice }
        if parsed.has(.quiet) { return .none }
        guard let value = environment[EnvironmentVariable.progress], !value.isEmpty else { return .auto }
        guard let choice = ProgressChoice(rawValue: value) else {
            console.err("booksync: warning: ignoring \(EnvironmentVariable.progress)='\(value)': it takes auto, bar, plain or none")
            return .auto
        }
        return choice
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

/// Paths as users see them.
enum PathDisplay {
    static func resolve(_ path: String, against directory: String) -> String {
        path.hasPrefix("/") ? path : directory + "/" + path
    }

    /// `path` relative to `directory` (with `..` where needed), or absolute when
    /// the two share nothing but the root.
    static func relative(_ path: String, to directory: String) -> String {
        let p = path.split(separator: "/")
        let d = directory.split(separator: "/")
        var common = 0
        while common < p.count, common < d.count, p[common] == d[common] { common += 1 }
        if common == 0 { return path }
        let ups = Array(repeating: "..", count: d.count - common)
        let rest = p[common...].map(String.init)
        let joined = (ups + rest).joined(separator: "/")
        return joined.isEmpty ? "." : joined
    }
}

extension BooksyncCommand {
    /// Runs booksync as a process: the real environment, working directory and terminal.
    ///
    /// Ctrl-C (SIGINT) cancels the running command instead of killing the
    /// process, and so do SIGTERM (`kill`, `timeout`, a cancelled CI job,
    /// `systemctl stop`) and SIGHUP (the terminal closed) in `booksync-network`,
    /// which runs every command that syncs: the command stops at the next
    /// record or batch, records what it finished, and exits 128 + the signal's
    /// number (130, 143, 129), as shells report a death by that signal. Local
    /// commands end at SIGTERM and SIGHUP at once, with the same status (they
    /// write files atomically and have nothing to record). A signal ignored when booksync
    /// started (`nohup`, `trap '' HUP`) stays ignored. A second signal ends the
    /// process at once (files are replaced atomically and a pull journals its
    /// writes first, so even that leaves no partial record and nothing the
    /// next command mistakes for an edit).
    package static func main(_ arguments: [String], network: NetworkAccess) async -> Int32 {
        let environment = ProcessEnvironment.variables()
        let stoppedBy = Atomic<Int32>(0)
        let task = Task {
            await run(arguments, environment: environment, currentDirectory: FileSystem.currentDirectory(), network: network)
        }
        var handled: [Int32] = []
        var ending: [Int32] = []
        for number in stoppingSignals {
            let previous = signal(number, SIG_IGN)
            if unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                ignoredAtStart.withLock { _ = $0.insert(number) }
            } else if number == SIGINT || network.isLinked {
                handled.append(number)
            } else {
                ending.append(number)
            }
        }
        // Here (before a syncing command moves to `booksync-network`, or in a
        // local command) SIGTERM and SIGHUP end the process at once, with the
        // status a shell reports for them.
        let enders = ending.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { _exit(128 + number) }
            source.resume()
            return source
        }
        let sources = enders + handled.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                _ = stoppedBy.compareExchange(expected: 0, desired: number, ordering: .relaxed)
                // The next one ends the process: at its default, and unblocked in
                // this thread (the helper starts with them blocked, see `NetworkAccess`).
                var stopping = sigset_t()
                sigemptyset(&stopping)
                for other in handled {
                    signal(other, SIG_DFL)
                    sigaddset(&stopping, other)
                }
                pthread_sigmask(SIG_UNBLOCK, &stopping, nil)
                task.cancel()
            }
            source.resume()
            return source
        }
        let status = await task.value
        for source in sources { source.cancel() }
        let signalNumber = stoppedBy.load(ordering: .relaxed)
        return signalNumber == 0 ? status : 128 + signalNumber
    }

    /// The signals that stop a command at the next record instead of at once.
    static let stoppingSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// The stopping signals that were ignored when this process started:
    /// they stay ignored, in the network helper too.
    static let ignoredAtStart = Mutex<Set<Int32>>([])
}
