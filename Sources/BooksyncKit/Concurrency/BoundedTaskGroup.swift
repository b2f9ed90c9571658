/// Work over a list of items with at most `limit` tasks running at once: the
/// one fan-out shape shared by the remote's batches of reads and writes and
/// the push pipeline's chunks.
///
/// What every use relies on:
/// - Items are added in input order, a new one when a running one ends (the
///   runtime may begin running added children in any order).
/// - Each result goes to `receive` on the calling task as soon as its task
///   ends (completion order, with the item's index). `receive` runs one result
///   at a time and may await and change the caller's state (inout parameters
///   included): it is where a pipeline records what a chunk did.
/// - `receive` says what happens next (`Next`): start the next item, start no
///   more but wait for the running ones (each still goes to `receive`), or
///   cancel the running ones and return once they end, without their results.
///   A task group always waits for its children: work that may never end
///   (an operation that ignores cancellation) belongs in `DeadlineRace`.
/// - Cancellation: once the calling task is cancelled no new item starts; the
///   running ones are child tasks, see the cancellation themselves, and their
///   results still go to `receive`.
package enum BoundedTaskGroup {
    /// What `run` does after a result was received.
    package enum Next: Sendable {
        /// Start the next item, if any.
        case proceed
        /// Start no more items; wait for the running ones (their results are received).
        case drain
        /// Cancel the running items and return once they end; their results are not received.
        case cancelRest
    }

    /// Runs `work` over `items`, at most `limit` at once, handing each result
    /// to `receive` as it completes (see the type's comment for the rules).
    ///
    /// - Parameters:
    ///   - items: what to work on, started in this order.
    ///   - limit: most items running at once (at least 1 is used).
    ///   - isolation: the caller's actor, where `receive` runs (the default).
    ///   - work: one item's work, in a child task; errors belong in `Output`
    ///     (a `Result`), so that `receive` decides what a failure means.
    ///   - receive: gets `(index in items, output)` in completion order.
    /// - Returns: how many items were started. Fewer than `items.count` means
    ///   `receive` stopped the run or the calling task was cancelled.
    @discardableResult
    package static func run<Item: Sendable, Output: Sendable>(
        _ items: [Item], limit: Int,
        isolation: isolated (any Actor)? = #isolation,
        work: @escaping @Sendable (Item) async -> Output,
        receive: (_ index: Int, _ output: Output) async -> Next
    ) async -> Int {
        await withTaskGroup(of: (Int, Output).self) { group in
            var next = 0
            var starting = true
            func startNext() {
                guard starting, next < items.count, !Task.isCancelled else { return }
                let index = next
                let item = items[index]
                next += 1
                group.addTask { (index, await work(item)) }
            }
            for _ in 0..<max(1, limit) { startNext() }
            while let (index, output) = await group.next() {
                switch await receive(index, output) {
                case .proceed: startNext()
                case .drain: starting = false
                case .cancelRest:
                    group.cancelAll()
                    return next
                }
            }
            return next
        }
    }

    /// `work` over every item, at most `limit` at once, the outputs in input
    /// order. The first failure starts no more items; it is thrown once the
    /// running ones have ended (their outputs are dropped), or, with
    /// `afterFailure: .cancelRest`, once they were cancelled and ended.
    ///
    /// - Parameters:
    ///   - items: what to work on, started in this order.
    ///   - limit: most items running at once (at least 1 is used).
    ///   - isolation: the caller's actor (the default).
    ///   - afterFailure: `.drain` (wait for the running items) or
    ///     `.cancelRest` (cancel them: work whose every step is a billed
    ///     read, useless once one item failed).
    ///   - cancelled: the error thrown when the calling task was
    ///     cancelled before every item could start and nothing failed.
    ///   - work: one item's work, in a child task.
    /// - Throws: the first failure of `work` in completion order, or `cancelled`.
    package static func map<Item: Sendable, Output: Sendable, Failure: Error>(
        _ items: [Item], limit: Int,
        isolation: isolated (any Actor)? = #isolation,
        afterFailure: Next = .drain,
        cancelled: @autoclosure () -> Failure,
        _ work: @escaping @Sendable (Item) async throws(Failure) -> Output
    ) async throws(Failure) -> [Output] {
        var outputs = [Output?](repeating: nil, count: items.count)
        var failure: Failure?
        let started = await run(items, limit: limit) { (item) async -> Result<Output, Failure> in
            do throws(Failure) {
                return .success(try await work(item))
            } catch {
                return .failure(error)
            }
        } receive: { index, result in
            switch result {
            case .success(let output): outputs[index] = output
            case .failure(let error): if failure == nil { failure = error }
            }
            return failure == nil ? .proceed : afterFailure
        }
        if let failure { throw failure }
        guard started == items.count else { throw cancelled() }
        return outputs.map { $0! }
    }
}
