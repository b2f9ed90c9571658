import BooksyncCore
@_spi(Remote) import BooksyncKit
import Dispatch
import Synchronization

/// How a command line chooses its progress display.
extension BooksyncCommand {
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
    package static func main(_ arguments: [String], network: NetworkAccess, signals: TakenSignals) async -> Int32 {
        let environment = ProcessEnvironment.variables()
        let task = Task {
            await run(arguments, environment: environment, currentDirectory: FileSystem.currentDirectory(), network: network)
        }
        // A signal taken before the task existed cancels it now.
        Self.running.withLock { $0 = task }
        if StoppingSignals.stoppedBy.load(ordering: .sequentiallyConsistent) != 0 { task.cancel() }
        let status = await task.value
        signals.cancel()
        let signalNumber = StoppingSignals.stoppedBy.load(ordering: .relaxed)
        return signalNumber == 0 ? status : 128 + signalNumber
    }

    /// The command's task, once `main` has made it, for a signal to cancel.
    private static let running = Mutex<Task<Int32, Never>?>(nil)

    /// The pipe reader `takeSignals` set up, kept for as long as the command runs.
    package struct TakenSignals: @unchecked Sendable {
        // DispatchSourceRead is a thread-safe libdispatch object; only cancelled here.
        fileprivate let reader: (any DispatchSourceRead)?

        func cancel() {
            reader?.cancel()
        }
    }

    /// Takes over the stopping signals; the first thing `main.swift` does,
    /// before its first `await`.
    ///
    /// Synchronous on purpose. A stopping signal sent while booksync handed
    /// the command to this helper waits, blocked, across the exec
    /// (`NetworkAccess.execute`), and the first `await` of an async main
    /// leaves the main thread to the runtime's executor, which unblocks it:
    /// at its default it killed the helper before it could stop cleanly.
    /// Here the handler is in place before the mask is lifted, and such a
    /// signal stops the command as if it came now (see `StoppingSignals`).
    /// In `booksync` itself (before a syncing command moves to
    /// `booksync-network`, or in a local command) SIGTERM and SIGHUP end the
    /// process at once, with the status a shell reports for them.
    package static func takeSignals(network: NetworkAccess) -> TakenSignals {
        TakenSignals(reader: StoppingSignals.take(stopAtNextRecord: network.isLinked) {
            running.withLock { $0?.cancel() }
        })
    }
}
