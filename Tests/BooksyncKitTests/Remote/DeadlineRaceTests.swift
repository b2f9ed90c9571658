import Synchronization
import Testing
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit

/// A request's deadline holds whatever the request does: an operation that
/// never returns and ignores cancellation (URLSession on Linux, cancelled,
/// sometimes never completes) still gives its caller an answer by the
/// deadline, and at once when the caller is cancelled. A task-group race
/// waited for such an operation forever (`status` hung with no CPU).
@Suite(.hangGuard) struct DeadlineRaceTests {
    /// An operation that waits until the test opens it, deaf to cancellation.
    final class Stuck: Sendable {
        private let waiting = Mutex<[CheckedContinuation<Void, Never>]>([])
        private let open = Mutex(false)
        let started = Mutex(false)

        func wait() async {
            started.withLock { $0 = true }
            await withCheckedContinuation { continuation in
                let resumeNow = open.withLock { isOpen in isOpen }
                if resumeNow { continuation.resume() } else { waiting.withLock { $0.append(continuation) } }
            }
        }

        /// Lets every waiting operation end, so no task outlives the test.
        func release() {
            open.withLock { $0 = true }
            for continuation in waiting.withLock({ list in defer { list = [] }; return list }) { continuation.resume() }
        }
    }

    @Test func theDeadlineWinsOverAnOperationThatNeverReturns() async {
        let stuck = Stuck()
        defer { stuck.release() }
        let outcome = await DeadlineRace.run(seconds: 0.2, timedOut: "timed out", cancelled: "cancelled") {
            await stuck.wait()
            return "answer"
        }
        #expect(outcome == "timed out")
    }

    @Test func aCancelledCallerIsAnsweredAtOnceThoughTheOperationIgnoresIt() async throws {
        let stuck = Stuck()
        defer { stuck.release() }
        // A deadline far beyond the hang guard: only the cancellation can end this.
        let caller = Task {
            await DeadlineRace.run(seconds: 3_600, timedOut: "timed out", cancelled: "cancelled") {
                await stuck.wait()
                return "answer"
            }
        }
        while !stuck.started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        caller.cancel()
        #expect(await caller.value == "cancelled")
    }

    @Test func aCallerCancelledBeforeTheRaceStartsRunsNothing() async {
        let ran = Mutex(false)
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await DeadlineRace.run(seconds: 3_600, timedOut: "timed out", cancelled: "cancelled") {
                ran.withLock { $0 = true }
                return "answer"
            }
        }
        #expect(await caller.value == "cancelled")
        try? await Task.sleep(for: .milliseconds(50))
        #expect(!ran.withLock { $0 }, "no operation starts for a caller already cancelled")
    }

    /// The answer wins, and the timer still asleep is not waited for (a
    /// deadline of an hour would otherwise hold the test).
    @Test func anAnswerWinsAndItsTimerIsNotWaitedFor() async {
        let outcome = await DeadlineRace.run(seconds: 3_600, timedOut: "timed out", cancelled: "cancelled") { "answer" }
        #expect(outcome == "answer")
    }
}
