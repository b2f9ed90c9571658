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
    package static func main(_ arguments: [String], network: NetworkAccess, signals: TakenSignals) async -> Int32 {
        let environment = ProcessEnvironment.variables()
        let task = Task {
            await run(arguments, environment: environment, currentDirectory: FileSystem.currentDirectory(), network: network)
        }
        // A signal taken before the task existed cancels it now.
        Self.running.withLock { $0 = task }
        if Self.stoppedBy.load(ordering: .sequentiallyConsistent) != 0 { task.cancel() }
        let status = await task.value
        signals.cancel()
        let signalNumber = Self.stoppedBy.load(ordering: .relaxed)
        return signalNumber == 0 ? status : 128 + signalNumber
    }

    /// The stopping signal that cancelled the command (0: none yet); the
    /// handoff to the helper (`NetworkAccess.execute`) checks it too.
    static let stoppedBy = Atomic<Int32>(0)
    /// The command's task, once `main` has made it, for a signal to cancel.
    private static let running = Mutex<Task<Int32, Never>?>(nil)

    /// The signal sources `takeSignals` set up, kept for as long as the command runs.
    package struct TakenSignals: @unchecked Sendable {
        // DispatchSourceSignal is a thread-safe libdispatch object; only cancelled here.
        fileprivate let sources: [any DispatchSourceSignal]

        func cancel() {
            for source in sources { source.cancel() }
        }
    }

    /// Takes over the stopping signals; the first thing `main.swift` does,
    /// before its first `await`.
    ///
    /// Synchronous on purpose. A stopping signal sent while booksync handed
    /// the command to this helper waits, blocked, across the exec
    /// (`NetworkAccess.execute`), and the first `await` of an async main
    /// leaves the main thread to the runtime's executor, which unblocks it:
    /// at its default it killed the helper before it could stop cleanly, and
    /// set to SIG_IGN it would be discarded (the command then ran to its end).
    /// Here such a signal is taken off the pending set (`sigwait`) and stops
    /// the command as if it came now, and the dispatch sources that take the
    /// next ones exist before the first `await`.
    package static func takeSignals(network: NetworkAccess) -> TakenSignals {
        // Blocked in this thread until the sources are live: one sent in
        // between waits instead of being discarded (SIG_IGN below) or acted
        // on at its default.
        var stopping = sigset_t()
        var before = sigset_t()
        sigemptyset(&stopping)
        for number in stoppingSignals { sigaddset(&stopping, number) }
        pthread_sigmask(SIG_BLOCK, &stopping, &before)
        var pending = sigset_t()
        sigemptyset(&pending)
        sigpending(&pending)
        var waited: Int32?
        if let number = stoppingSignals.first(where: { sigismember(&pending, $0) == 1 }) {
            var only = sigset_t()
            sigemptyset(&only)
            sigaddset(&only, number)
            var taken: Int32 = 0
            sigwait(&only, &taken)
            waited = number
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
        if let waited, ending.contains(waited) { _exit(128 + waited) }
        let stop: @Sendable (Int32) -> Void = { [handled] number in
            _ = stoppedBy.compareExchange(expected: 0, desired: number, ordering: .sequentiallyConsistent)
            // The next one ends the process: at its default, and unblocked in
            // this thread (the helper starts with them blocked, see `NetworkAccess`).
            var stopping = sigset_t()
            sigemptyset(&stopping)
            for other in handled {
                signal(other, SIG_DFL)
                sigaddset(&stopping, other)
            }
            pthread_sigmask(SIG_UNBLOCK, &stopping, nil)
            running.withLock { $0?.cancel() }
        }
        // A source is live once registered: on Linux, libdispatch then has its
        // own handler in place of SIG_IGN. Waited for (a second at most), so no
        // signal falls between SIG_IGN and the source.
        let registered = DispatchSemaphore(value: 0)
        let sources = ending.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                _ = stoppedBy.compareExchange(expected: 0, desired: number, ordering: .sequentiallyConsistent)
                _exit(128 + number)
            }
            source.setRegistrationHandler { registered.signal() }
            source.resume()
            return source
        } + handled.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop(number) }
            source.setRegistrationHandler { registered.signal() }
            source.resume()
            return source
        }
        let deadline = DispatchTime.now() + .seconds(1)
        for _ in sources where registered.wait(timeout: deadline) == .timedOut { break }
        // The helper starts with one waiting when it came during the handoff;
        // it stops the command as if it came now (its second ends the process).
        if let waited, handled.contains(waited) { stop(waited) }
        pthread_sigmask(SIG_SETMASK, &before, nil)
        return TakenSignals(sources: sources)
    }

    /// The signals that stop a command at the next record instead of at once.
    static let stoppingSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// The stopping signals that were ignored when this process started:
    /// they stay ignored, in the network helper too.
    static let ignoredAtStart = Mutex<Set<Int32>>([])
}
