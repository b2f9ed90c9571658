import Synchronization

/// Progress of a long transfer, for a progress bar or progress lines.
public struct SyncProgress: Sendable, Equatable {
    /// What is being counted: "listing", "downloading", "applying", "uploading".
    public let phase: String
    /// How many have been counted so far.
    public let done: Int
    /// Nil while the total is not known (a listing).
    public let total: Int?

    /// A report of `done` of `total` in `phase`.
    package init(phase: String, done: Int, total: Int?) {
        self.phase = phase
        self.done = done
        self.total = total
    }
}

/// Counts progress from concurrent callbacks and reports totals.
///
/// A total unknown at the start can be learnt later (`learnTotal`, from the
/// remote's count), and is reported from then on, until more are done than
/// it said (documents created after the count): then it is dropped again,
/// rather than reporting a transfer done that is not.
final class ProgressCounter: Sendable {
    private struct Count {
        var done = 0
        var total: Int?
    }

    private let phase: String
    private let report: @Sendable (SyncProgress) -> Void
    private let count: Mutex<Count>

    init(phase: String, total: Int?, report: @escaping @Sendable (SyncProgress) -> Void) {
        self.phase = phase
        self.report = report
        self.count = Mutex(Count(total: total))
    }

    func add(_ count: Int) {
        let now = self.count.withLock { value in
            value.done += count
            if let total = value.total, value.done > total { value.total = nil }
            return value
        }
        report(SyncProgress(phase: phase, done: now.done, total: now.total))
    }

    /// The total learnt after the start; a count below what is already done
    /// (documents deleted after they were downloaded) is not a total and is ignored.
    func learnTotal(_ total: Int) {
        count.withLock { value in
            if value.done <= total { value.total = total }
        }
    }

    /// Asks `remote` for its document count once `after` has passed, unless
    /// cancelled first (the transfer ended): a short transfer never pays for
    /// the count. The caller cancels and awaits the task before it returns,
    /// so nothing outlives the command; a failed count only leaves the
    /// total unknown.
    func learnTotal(from remote: any RemoteCollection, after: Duration?) -> Task<Void, Never>? {
        guard let after else { return nil }
        return Task {
            do {
                try await Task.sleep(for: after)
                if let total = try await remote.documentCount() { learnTotal(total) }
            } catch {}
        }
    }
}
