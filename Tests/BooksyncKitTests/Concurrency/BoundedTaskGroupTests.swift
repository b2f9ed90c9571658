import Synchronization
import Testing
@_spi(Remote) @testable import BooksyncKit

/// The one bounded task group: at most N in flight, results as they complete,
/// stopping (drain or cancel) decided by the receiver, cancellation respected.
@Suite struct BoundedTaskGroupTests {
    /// Counts tasks running at once, and for each item how many had finished
    /// when it began (item i is only added once i - limit + 1 have finished; the
    /// order in which added children begin running is the runtime's, not ours).
    final class InFlight: Sendable {
        let state = Mutex((now: 0, most: 0, finished: 0, finishedBefore: [Int: Int]()))
        func enter(_ item: Int) {
            state.withLock { $0.now += 1; $0.most = max($0.most, $0.now); $0.finishedBefore[item] = $0.finished }
        }
        func leave() { state.withLock { $0.now -= 1; $0.finished += 1 } }
    }

    @Test(arguments: [(items: 0, limit: 3), (items: 1, limit: 3), (items: 20, limit: 3), (items: 7, limit: 1), (items: 5, limit: 8)])
    func neverMoreThanTheLimitInFlightAndEveryItemReceivedOnce(items: Int, limit: Int) async {
        let flight = InFlight()
        var received: [Int] = []
        let started = await BoundedTaskGroup.run(Array(0..<items), limit: limit) { item in
            flight.enter(item)
            try? await Task.sleep(for: .milliseconds((item * 7) % 5))
            flight.leave()
            return item * 10
        } receive: { index, output in
            #expect(output == index * 10)
            received.append(index)
            return .proceed
        }
        #expect(started == items)
        #expect(received.sorted() == Array(0..<items))
        let state = flight.state.withLock { $0 }
        #expect(state.most <= limit)
        for (item, finished) in state.finishedBefore {
            #expect(finished >= item - limit + 1, "item \(item) started with only \(finished) finished: items are added in input order")
        }
    }

    /// The push pipeline's shape: each result recorded into the caller's state
    /// as it arrives; after a failure no new item starts, the running ones are
    /// still recorded, and the count started tells "stopped early" apart.
    @Test func drainStartsNothingNewButReceivesWhatIsRunning() async {
        var recorded: [Int] = []
        var failure: String?
        func pipeline(_ state: inout [Int]) async -> Int {
            await BoundedTaskGroup.run(Array(0..<10), limit: 3) { item -> Result<Int, CancellationError> in
                item == 1 ? .failure(CancellationError()) : .success(item)
            } receive: { _, result in
                switch result {
                case .success(let item): state.append(item)
                case .failure: failure = failure ?? "failed"
                }
                return failure == nil ? .proceed : .drain
            }
        }
        let started = await pipeline(&recorded)
        #expect(failure == "failed")
        #expect(started < 10)
        #expect(recorded.count == started - 1, "every started item but the failed one is recorded")
        #expect(Set(recorded).isSubset(of: Set([0] + Array(2..<10))))
    }

    /// The first answer wins and a child still asleep is cancelled instead of
    /// waited out (it wakes cancelled, not after 60 s; no wall-clock bound,
    /// which a loaded machine could break).
    @Test func cancelRestReturnsWithoutWaitingForTheOthers() async {
        let sawCancellation = Mutex(false)
        var winner: String?
        await BoundedTaskGroup.run(["answer", "timer"], limit: 2) { racer -> String? in
            if racer == "timer" {
                try? await Task.sleep(for: .seconds(60))
                sawCancellation.withLock { $0 = Task.isCancelled }
                return nil
            }
            return racer
        } receive: { _, result in
            guard let result else { return .proceed }
            winner = result
            return .cancelRest
        }
        #expect(winner == "answer")
        #expect(sawCancellation.withLock { $0 })
    }

    @Test func mapKeepsInputOrderAndThrowsTheFirstFailure() async throws {
        let outputs = try await BoundedTaskGroup.map(Array(0..<12), limit: 4, cancelled: RemoteError.configuration("cancelled")) {
            (item) throws(RemoteError) -> Int in
            try? await Task.sleep(for: .milliseconds(12 - item))
            return item * item
        }
        #expect(outputs == (0..<12).map { $0 * $0 })

        let flight = InFlight()
        await #expect(throws: RemoteError.configuration("item 2")) {
            _ = try await BoundedTaskGroup.map(Array(0..<50), limit: 2, cancelled: RemoteError.configuration("cancelled")) {
                (item) throws(RemoteError) -> Int in
                flight.enter(item)
                defer { flight.leave() }
                if item == 2 { throw .configuration("item 2") }
                return item
            }
        }
        #expect(flight.state.withLock { $0.finishedBefore.count } < 50, "no new item starts after the failure")
    }

    /// A cancelled caller starts nothing; `map` says so with the caller's error
    /// instead of returning fewer outputs than items.
    @Test func aCancelledCallerStartsNothing() async {
        let flight = InFlight()
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            let started = await BoundedTaskGroup.run([1, 2, 3], limit: 2) { item in flight.enter(item) } receive: { _, _ in .proceed }
            let mapped: Result<[Int], RemoteError>
            do throws(RemoteError) {
                mapped = .success(try await BoundedTaskGroup.map([1, 2, 3], limit: 2, cancelled: RemoteError.configuration("cancelled")) { (item) throws(RemoteError) in item })
            } catch {
                mapped = .failure(error)
            }
            return (started, mapped)
        }
        task.cancel()
        let (started, mapped) = await task.value
        #expect(started == 0)
        #expect(flight.state.withLock { $0.finishedBefore }.isEmpty)
        #expect(throws: RemoteError.configuration("cancelled")) { try mapped.get() }
    }
}
