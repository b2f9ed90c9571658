@_spi(Remote) import BooksyncKit

/// How a failed command line is reported: one sentence on standard error and
/// an exit code, whatever failed and wherever.
extension BooksyncCommand {
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

    /// `'stauts' is not a booksync command; did you mean 'status'?`
    static func notACommand(_ name: String) -> UsageError {
        UsageError(message: "'\(name)' is not a booksync command\(Suggestions.didYouMean(name, among: commandNames))", command: nil)
    }

    /// Prints a usage error with the pointer to `--help`; gives the usage exit status.
    static func report(_ error: UsageError, _ console: Console) -> Int32 {
        let prefix = error.command.map { "booksync \($0)" } ?? "booksync"
        console.err("\(prefix): \(error.message)")
        console.err("Run '\(prefix) --help' for usage.")
        return ExitCode.usage.rawValue
    }
}
