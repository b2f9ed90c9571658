import BooksyncCore
import BooksyncKit

extension CommandContext {
    /// The live Firestore remote for a collection: endpoint and credentials from
    /// the environment and config.json, URLSession underneath, and request
    /// logging on stderr with `--verbose` (method, path, status, time; never tokens).
    /// Without a linked transport this hands the whole command to the network
    /// helper (see `NetworkAccess`) and does not return.
    func makeRemote(_ collection: CollectionDirectory) throws(BooksyncError) -> FirestoreRemote {
        let makeTransport: @Sendable (Double) -> HTTPTransport
        switch network {
        case .linked(let make):
            makeTransport = make
        case .helper(let name):
            console.flush()
            throw NetworkAccess.execute(helper: name, arguments: arguments, environment: environment)
        }
        let endpoint: FirestoreEndpoint
        do {
            endpoint = try FirestoreEndpoint.resolve(environment: environment, tokenCommand: collection.config.tokenCommand)
        } catch {
            throw .remote(error)
        }
        let console = self.console
        let verbose = self.verbose
        let retry = RetryPolicy.fromEnvironment(environment)
        return FirestoreRemote(
            target: collection.config.remote, endpoint: endpoint, rules: collection.rules,
            transport: makeTransport(retry.requestTimeout),
            retry: retry,
            log: { line in if verbose { console.err("booksync: \(line)") } })
    }
}

extension RetryPolicy {
    /// The default policy; `BOOKSYNC_REQUEST_TIMEOUT` and `BOOKSYNC_RETRY_DEADLINE`
    /// (seconds) shorten it, e.g. for fault-injection tests.
    static func fromEnvironment(_ environment: [String: String]) -> RetryPolicy {
        var policy = RetryPolicy()
        if let timeout = environment["BOOKSYNC_REQUEST_TIMEOUT"].flatMap(Double.init), timeout > 0 { policy.requestTimeout = timeout }
        if let deadline = environment["BOOKSYNC_RETRY_DEADLINE"].flatMap(Double.init), deadline > 0 { policy.totalDeadline = deadline }
        return policy
    }
}
