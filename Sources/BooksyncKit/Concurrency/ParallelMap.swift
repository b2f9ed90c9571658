import Dispatch

/// Runs blocking work (stat, read, hash) on several threads and keeps the order.
///
/// Swift Concurrency's pool is only as wide as the core count and must not be
/// blocked by `read(2)`; Dispatch's `concurrentPerform` gives real threads for
/// this CPU- and I/O-bound fan-out and returns when every item is done.
enum ParallelMap {
    static func map<Input: Sendable, Output: Sendable>(
        _ inputs: [Input], chunkSize: Int = 256, _ transform: @Sendable (Input) -> Output
    ) -> [Output] {
        if inputs.count <= chunkSize { return inputs.map(transform) }
        let results = ResultSlots<Output>(count: inputs.count)
        let chunks = (inputs.count + chunkSize - 1) / chunkSize
        inputs.withUnsafeBufferPointer { buffer in
            nonisolated(unsafe) let source = buffer
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                let start = chunk * chunkSize
                for i in start..<min(start + chunkSize, source.count) {
                    results.set(i, transform(source[i]))
                }
            }
        }
        return results.collect()
    }
}

/// Write-once slots filled from several threads, each slot by exactly one thread.
/// Raw memory, not an array property, so concurrent writes to distinct slots do
/// not trip Swift's exclusivity checks.
private final class ResultSlots<T>: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<T?>
    private let count: Int

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil, count: count)
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    func set(_ index: Int, _ value: T) { slots[index] = value }

    func collect() -> [T] { (0..<count).map { slots[$0]! } }
}
