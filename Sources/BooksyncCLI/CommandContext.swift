import BooksyncCore
@_spi(Remote) import BooksyncKit

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
