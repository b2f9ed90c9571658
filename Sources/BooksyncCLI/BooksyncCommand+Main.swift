import BooksyncCore
@_spi(Remote) import BooksyncKit
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
