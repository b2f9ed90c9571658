import Synchronization

/// Runs an operation against a deadline that holds whatever the operation
/// does: the caller gets an answer by the deadline, or at once when it is
/// cancelled, even from an operation that never returns.
///
/// A task group cannot give that promise: it waits for every child before
/// it returns, so a request that ignores cancellation (URLSession on Linux,
/// cancelled, sometimes never completes) held the whole command forever,
/// with its timer already won and its caller already cancelled. Here the
/// operation runs in a task of its own that nobody waits for once the race
/// is decided; it is cancelled, and whatever it does later is dropped.
package enum DeadlineRace {
    /// `operation`'s result, or `timedOut` once `seconds` have passed, or
    /// `cancelled` as soon as the calling task is cancelled, whichever comes first.
    package static func run<Output: Sendable>(
        seconds: Double,
        timedOut: Output,
        cancelled: Output,
        operation: @escaping @Sendable () async -> Output
    ) async -> Output {
        let race = Race<Output>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Output, Never>) in
                guard race.wait(continuation) else { return }
                let work = Task { race.finish(await operation()) }
                let timer = Task {
                    // Saturated: a deadline of `inf` or 1e300 seconds is a very long one, not a trap.
                    try? await Task.sleep(for: .milliseconds(Int(min(max(seconds, 0), 1e12) * 1000)))
                    if !Task.isCancelled { race.finish(timedOut) }
                }
                race.onFinish { work.cancel(); timer.cancel() }
            }
        } onCancel: {
            race.finish(cancelled)
        }
    }

    /// The first result wins; the waiting caller is resumed exactly once.
    private final class Race<Output: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Output, Never>?
            var result: Output?
            var cleanUp: (@Sendable () -> Void)?
        }

        private let state = Mutex(State())

        /// Installs the caller; false (and resumed at once) when a result,
        /// such as a cancellation, came first.
        func wait(_ continuation: CheckedContinuation<Output, Never>) -> Bool {
            let early: Output? = state.withLock { state in
                if let result = state.result { return result }
                state.continuation = continuation
                return nil
            }
            guard let early else { return true }
            continuation.resume(returning: early)
            return false
        }

        /// Runs `cleanUp` once the race is decided (now, if it already is).
        func onFinish(_ cleanUp: @escaping @Sendable () -> Void) {
            let decided = state.withLock { state in
                if state.result != nil { return true }
                state.cleanUp = cleanUp
                return false
            }
            if decided { cleanUp() }
        }

        /// Offers a result; only the first counts.
        func finish(_ result: Output) {
            let (continuation, cleanUp) = state.withLock { state -> (CheckedContinuation<Output, Never>?, (@Sendable () -> Void)?) in
                guard state.result == nil else { return (nil, nil) }
                state.result = result
                defer { state.continuation = nil; state.cleanUp = nil }
                return (state.continuation, state.cleanUp)
            }
            continuation?.resume(returning: result)
            cleanUp?()
        }
    }
}
