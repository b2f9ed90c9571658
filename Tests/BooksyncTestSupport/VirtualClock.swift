import Synchronization

/// Time that passes only when a test says so: a scripted remote advances it
/// by its delay per answer, so a rate measured against it is the script's,
/// however loaded the machine running the tests is.
package final class VirtualClock: Sendable {
    private let elapsed = Mutex(Duration.zero)

    package init() {}

    /// The time since the clock was made.
    package var now: Duration { elapsed.withLock { $0 } }

    package func advance(by duration: Duration) {
        elapsed.withLock { $0 += duration }
    }
}
