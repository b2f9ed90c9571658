import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT, SIGTERM and SIGHUP, taken by booksync's own handler.
///
/// The handler does only what is safe in a signal handler: it records the
/// signal in an atomic and writes one byte to a pipe, and a dispatch read
/// source on the pipe cancels the command. Installed while the signals are
/// blocked, it is never without a handler: no signal falls into a moment at
/// SIG_IGN (which discards a pending one, even a blocked one) or at its
/// default. libdispatch's signal sources, used before, needed such a moment
/// and lost a SIGHUP now and then on a loaded machine (the chaos trials, two
/// test runs side by side).
enum StoppingSignals {
    /// The signals that stop a command at the next record instead of at once.
    static let numbers: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// The stopping signal that cancelled the command (0: none yet).
    static let stoppedBy = Atomic<Int32>(0)

    /// The stopping signals that were ignored when this process started:
    /// they stay ignored, in the network helper too.
    static let ignoredAtStart = Mutex<Set<Int32>>([])

    /// What the handler reads; set before it is installed.
    fileprivate static let handler = HandlerState()

    fileprivate final class HandlerState: Sendable {
        /// One bit per signal that ends the process at once (local commands).
        let ending = Atomic<UInt32>(0)
        /// One bit per signal that stops the command at the next record.
        let stopping = Atomic<UInt32>(0)
        /// The pipe's write end (-1: none yet).
        let wakeFD = Atomic<Int32>(-1)
        /// Set while the command is being handed to `booksync-network`: a
        /// signal then ends the process, as one before the handoff would stop
        /// the command before it began (`NetworkAccess.execute`).
        let handingOff = Atomic<Bool>(false)
    }

    /// Begins the handoff to `booksync-network`: blocks the signals taken in
    /// this thread, so one sent from here waits across the exec for the
    /// helper's `main`, and from here a signal taken by another thread ends
    /// the process, as a command stopped before it began. Returns this
    /// thread's mask before, for `endHandoff`; nil (nothing changed) when a
    /// stopping signal came already: the helper must not start.
    ///
    /// No signal taken by the handler is lost to the exec: the handler sets
    /// `stoppedBy` and then reads the flag, this sets the flag and then reads
    /// `stoppedBy`, and one of the two sees the other.
    static func beginHandoff() -> sigset_t? {
        let ignored = ignoredAtStart.withLock { $0 }
        var taken = sigset_t()
        sigemptyset(&taken)
        for number in numbers where !ignored.contains(number) { sigaddset(&taken, number) }
        var before = sigset_t()
        pthread_sigmask(SIG_SETMASK, &taken, &before)
        handler.handingOff.store(true, ordering: .sequentiallyConsistent)
        guard stoppedBy.load(ordering: .sequentiallyConsistent) == 0 else {
            endHandoff(restoring: before)
            return nil
        }
        return before
    }

    /// Ends a handoff that did not exec: the thread's mask as it was, and
    /// signals stop the command again.
    static func endHandoff(restoring mask: sigset_t) {
        handler.handingOff.store(false, ordering: .sequentiallyConsistent)
        var mask = mask
        pthread_sigmask(SIG_SETMASK, &mask, nil)
    }

    /// Takes the stopping signals over; `BooksyncCommand.takeSignals` says when.
    ///
    /// A signal already pending (it came during the handoff to
    /// `booksync-network`, blocked across the exec) is delivered when the
    /// mask is lifted at the end, to the handler, as if it came now.
    static func take(stopAtNextRecord: Bool, stop: @escaping @Sendable () -> Void) -> (any DispatchSourceRead)? {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for number in numbers { sigaddset(&blocked, number) }
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        // Statics are made on first use, which must not happen in the handler.
        _ = stoppedBy.load(ordering: .relaxed)
        let state = handler

        var source: (any DispatchSourceRead)?
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for (n, fd) in fds.enumerated() where fd <= 2 {
                // Started with standard input, output or error closed: the pipe
                // must not take their numbers, or console output would wake it.
                let moved = fcntl(fd, F_DUPFD, 3)
                close(fd)
                fds[n] = moved
            }
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // not into the helper the command may exec
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)  // the handler never waits
            }
        }
        if fds.allSatisfy({ $0 > 2 }) {
            let readFD = fds[0]
            let reader = DispatchSource.makeReadSource(fileDescriptor: readFD, queue: .global())
            reader.setEventHandler {
                var bytes = [UInt8](repeating: 0, count: 16)
                while read(readFD, &bytes, bytes.count) > 0 {}
                stop()
            }
            reader.resume()
            source = reader
            state.wakeFD.store(fds[1], ordering: .sequentiallyConsistent)
        }

        var installed = sigset_t()
        sigemptyset(&installed)
        for number in numbers {
            var previous = sigaction()
            sigaction(number, nil, &previous)
            if handlerAddress(previous) == unsafeBitCast(SIG_IGN, to: Int.self) {
                ignoredAtStart.withLock { _ = $0.insert(number) }  // `nohup`, `trap '' HUP`: it stays ignored
                continue
            }
            let bit = UInt32(1) << UInt32(number)
            // Without the pipe (no file descriptor left) nothing could stop
            // the command: the signal then ends it at once.
            if (number == SIGINT || stopAtNextRecord) && source != nil {
                state.stopping.bitwiseOr(bit, ordering: .sequentiallyConsistent)
            } else {
                state.ending.bitwiseOr(bit, ordering: .sequentiallyConsistent)
            }
            var action = sigaction()
            setHandler(&action, stoppingSignalArrived)
            action.sa_mask = blocked  // one handler at a time in a thread
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
            sigaddset(&installed, number)
        }
        pthread_sigmask(SIG_UNBLOCK, &installed, nil)
        return source
    }

    /// Sets `number` back to its default, so the next one ends the process.
    fileprivate static func restoreDefault(_ number: Int32) {
        var action = sigaction()
        setHandler(&action, nil)
        sigaction(number, &action, nil)
    }

    private static func setHandler(_ action: inout sigaction, _ handler: (@convention(c) (Int32) -> Void)?) {
        #if canImport(Glibc)
        action.__sigaction_handler.sa_handler = handler ?? SIG_DFL
        #elseif canImport(Darwin)
        action.__sigaction_u.__sa_handler = handler ?? SIG_DFL
        #endif
    }

    private static func handlerAddress(_ action: sigaction) -> Int {
        #if canImport(Glibc)
        return unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
        #elseif canImport(Darwin)
        return unsafeBitCast(action.__sigaction_u.__sa_handler, to: Int.self)
        #endif
    }
}

/// The handler: only atomics, `sigaction`, `write`, `raise` and `_exit`,
/// which are safe in a signal handler, and `errno` kept for the code it
/// interrupted. Its statics are made before it is installed (`take`).
private func stoppingSignalArrived(_ number: Int32) {
    let savedErrno = errno
    defer { errno = savedErrno }
    let state = StoppingSignals.handler
    let bit = UInt32(1) << UInt32(number)
    let first = StoppingSignals.stoppedBy.compareExchange(expected: 0, desired: number, ordering: .sequentiallyConsistent).exchanged
    // A local command writes files atomically and has nothing to record; a
    // command being handed to the helper has not begun.
    if state.ending.load(ordering: .sequentiallyConsistent) & bit != 0
        || state.handingOff.load(ordering: .sequentiallyConsistent) { _exit(128 + number) }
    // The next one ends the process (three calls, not a loop over an array,
    // which would retain and release it here).
    let stopping = state.stopping.load(ordering: .sequentiallyConsistent)
    if stopping & (UInt32(1) << UInt32(SIGINT)) != 0 { StoppingSignals.restoreDefault(SIGINT) }
    if stopping & (UInt32(1) << UInt32(SIGTERM)) != 0 { StoppingSignals.restoreDefault(SIGTERM) }
    if stopping & (UInt32(1) << UInt32(SIGHUP)) != 0 { StoppingSignals.restoreDefault(SIGHUP) }
    guard first else {
        // A second one, taken by another thread at the same moment: end now,
        // as its default does (it is blocked here until this returns).
        raise(number)
        return
    }
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(state.wakeFD.load(ordering: .sequentiallyConsistent), &byte, 1)
}
