import BooksyncCore
import Synchronization

/// What a command's Firestore requests cost, counted from the answers it
/// actually received, for `--verbose` (and an embedding app that wants to
/// watch its bill).
///
/// Money is a cost of its own (issue 13): Firestore bills one document read
/// per document an answer carries, whatever the projection, and the free tier
/// is 50,000 reads a day. `scripts/count_proxy.py` applies the same rules to
/// the same answers on the wire, so the two estimates can be compared.
///
/// Thread-safe: requests run in parallel and every attempt of a retried
/// request is counted (an attempt that got documents back was billed).
package final class FirestoreUsage: Sendable {
    /// Running totals of one remote's requests.
    package struct Totals: Sendable, Equatable {
        /// HTTP requests sent, retries included (answered or not).
        package var requests = 0
        /// Documents the answers carried (found documents, listed names).
        package var documents = 0
        /// Estimated billed document reads (see `FirestoreUsage.cost(method:url:answer:)`).
        package var billedReads = 0

        /// Totals (zero by default).
        package init(requests: Int = 0, documents: Int = 0, billedReads: Int = 0) {
            self.requests = requests
            self.documents = documents
            self.billedReads = billedReads
        }
    }

    private let state = Mutex(Totals())

    /// An empty tally.
    package init() {}

    /// The totals so far.
    package var totals: Totals { state.withLock { $0 } }

    /// Counts one attempt about to be sent.
    func requestSent() {
        state.withLock { $0.requests += 1 }
    }

    /// Counts the documents and billed reads of one 2xx answer that parsed.
    func answered(method: String, url: String, answer: Value) {
        let cost = Self.cost(method: method, url: url, answer: answer)
        guard cost.documents > 0 || cost.billedReads > 0 else { return }
        state.withLock {
            $0.documents += cost.documents
            $0.billedReads += cost.billedReads
        }
    }

    /// What one successful answer costs, by Firestore's pricing rules
    /// (firebase.google.com/docs/firestore/pricing):
    /// - `:runQuery` and `documents.list` (a GET of a collection): one read per
    ///   document returned, names-only projections included, and at least one
    ///   per query (Firestore's minimum charge for a query that matches nothing).
    /// - A GET of one document: one read.
    /// - `:batchGet`: one read per `found` document, and one per `missing`
    ///   one. The pricing pages say nothing explicit about documents that do
    ///   not exist; Firestore bills a read for a lookup of a missing document
    ///   in practice (it is a point read), so it is counted, to err on the
    ///   high side. `documents` counts found ones only.
    /// - `:runAggregationQuery`: one read per started 1,000 index entries
    ///   counted (0–1,000 → 1, 1,500 → 2), the largest count in the answer.
    /// - `:listCollectionIds`: one read per request (page), whatever it lists:
    ///   "for queries other than document reads, such as a request for a list
    ///   of collection IDs, you are billed for one document read", and a
    ///   paginated result once per request (the pricing page, "Reads").
    /// - Writes (`:commit`, `:batchWrite`, PATCH, DELETE): no reads.
    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - url: the request URL (a query string is ignored).
    ///   - answer: the parsed JSON body of a 2xx answer.
    package static func cost(method: String, url: String, answer: Value) -> (documents: Int, billedReads: Int) {
        let path = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? url
        if path.hasSuffix(":runQuery") {
            let found = entries(answer).count { $0["document"] != nil }
            return (found, max(1, found))
        }
        if path.hasSuffix(":batchGet") {
            let items = entries(answer)
            let found = items.count { $0["found"] != nil }
            let missing = items.count { $0["missing"] != nil }
            return (found, found + missing)
        }
        if path.hasSuffix(":listCollectionIds") { return (0, 1) }
        if path.hasSuffix(":runAggregationQuery") {
            let counted = entries(answer).map(largestCount).max() ?? 0
            return (0, max(1, (counted + 999) / 1000))
        }
        let parts = path.split(separator: "/")
        guard method == "GET", let root = parts.firstIndex(of: "documents"), root + 1 < parts.count else { return (0, 0) }
        if (parts.count - root - 1) % 2 == 0 { return (1, 1) }  // collection/document: one document
        guard case .map(let page) = answer else { return (0, 1) }
        var listed = 0
        if case .array(let documents)? = page["documents"] { listed = documents.count }
        return (listed, max(1, listed))
    }

    /// The objects of an answer that is a JSON array (`:runQuery`, `:batchGet`, aggregations).
    private static func entries(_ answer: Value) -> [[String: Value]] {
        guard case .array(let items) = answer else { return [] }
        return items.compactMap { if case .map(let entry) = $0 { entry } else { nil } }
    }

    /// The largest integer among an aggregation result's fields
    /// (`{"result": {"aggregateFields": {"n": {"integerValue": "1500"}}}}`).
    private static func largestCount(_ entry: [String: Value]) -> Int {
        guard case .map(let result)? = entry["result"], case .map(let fields)? = result["aggregateFields"] else { return 0 }
        return fields.values.compactMap { field -> Int? in
            guard case .map(let value) = field else { return nil }
            switch value["integerValue"] {
            case .string(let text)?: return Int(text)
            case .integer(let number)?: return Int(number)
            default: return nil
            }
        }.max() ?? 0
    }
}
