@_spi(Remote) import BooksyncKit

/// booksync's exit codes (the manual's Commands article), stable for scripts.
package enum ExitCode: Int32, Sendable {
    /// Done.
    case success = 0
    /// Done, but something needs attention: conflicts, invalid files, differences
    /// with `--exit-code`, `fmt --check` or `validate` findings.
    case attention = 1
    /// Usage error, or not a collection directory.
    case usage = 2
    /// Remote or I/O failure after retries.
    case failure = 3
    /// Refused by a safety rail (mass delete, lock held by a live process, a
    /// symbolic link or other non-regular file where booksync keeps its state).
    case refused = 4
    /// Interrupted by SIGINT, as shells report it (SIGTERM and SIGHUP
    /// give 143 and 129: 128 + the signal, see `BooksyncCommand.main`).
    case interrupted = 130
}

extension BooksyncError {
    /// The exit code a CLI reports for this error.
    var exitCode: ExitCode {
        switch self {
        // An unfinished git merge is for the user to finish, like a missing
        // collection: nothing failed and retrying cannot help.
        case .notACollection, .alreadyInitialized, .invalidArgument, .unfinishedGitMerge: .usage
        // A link or FIFO planted where booksync keeps its state: a safety refusal, not a failed disk.
        case .io(let error) where error.unsafeKind != nil: .refused
        case .damagedStateFile, .io, .remote: .failure
        case .lockHeld, .massDelete, .targetMismatch, .emptiedTarget, .atomicTooLarge, .atomicTooManyBytes, .gitBusy,
             .planRefused, .planDrift: .refused
        case .interrupted: .interrupted
        }
    }
}
