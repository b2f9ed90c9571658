@_spi(Remote) import BooksyncKit
import Synchronization

/// The closing `--verbose` line of a remote command: how many requests it
/// sent and what its reads cost, e.g.
/// `booksync: 3 requests, 1,012 documents read (estimated billed reads: 1,012)`.
///
/// Printed whether the command succeeded or failed (a failed command was
/// billed too), once, after everything else the command printed and before
/// its error. The estimate follows Firestore's pricing rules, counted from the
/// answers booksync received (see `FirestoreUsage.cost`).
final class RemoteUsageLine: Sendable {
    private let usage = Mutex<[FirestoreUsage]>([])

    /// Remembers the tally of a remote the command made (`compare` makes
    /// two: the line adds them up).
    func watch(_ tally: FirestoreUsage) {
        usage.withLock { $0.append(tally) }
    }

    /// Writes the line on stderr if the command made a remote.
    func report(to console: Console) {
        let tallies = usage.withLock { $0 }
        guard !tallies.isEmpty else { return }
        let totals = tallies.map(\.totals).reduce(into: FirestoreUsage.Totals()) { sum, totals in
            sum.requests += totals.requests
            sum.documents += totals.documents
            sum.billedReads += totals.billedReads
        }
        console.err("booksync: \(Self.describe(totals))")
    }

    /// `3 requests, 1,012 documents read (estimated billed reads: 1,012)`.
    static func describe(_ totals: FirestoreUsage.Totals) -> String {
        let requests = "\(grouped(totals.requests)) request\(totals.requests == 1 ? "" : "s")"
        let documents = "\(grouped(totals.documents)) document\(totals.documents == 1 ? "" : "s") read"
        return "\(requests), \(documents) (estimated billed reads: \(grouped(totals.billedReads)))"
    }
}
