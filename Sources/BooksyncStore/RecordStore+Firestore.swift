import Foundation
import BooksyncCore
@_spi(Remote) import BooksyncKit
import BooksyncURLSession

extension RecordStore {
    /// A store syncing with Firestore the way the `booksync` CLI does: the
    /// project, database and collection from the collection's config.json,
    /// the endpoint and credentials from `environment` (`FirestoreEndpoint.resolve`:
    /// the emulator with `FIRESTORE_EMULATOR_HOST`, else an access token,
    /// token command or Google's application default credentials), over URLSession.
    /// A `tokenCommand` in the collection's own config.json is never run (a
    /// cloned collection is someone else's data).
    /// - Parameters:
    ///   - directory: The collection directory.
    ///   - environment: Where the endpoint and credentials come from; the process's by default.
    ///   - retry: Timeouts and retries of each request (the CLI's by default).
    ///   - log: Receives one line per request (method, path, status, time; never tokens).
    ///   - remote: The remote to sync with, as `--remote` names it; nil
    ///     chooses as the CLI does (origin, or the emulator's own state when
    ///     `FIRESTORE_EMULATOR_HOST` is set and origin was synced elsewhere).
    public static func firestore(directory: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                                 retry: RetryPolicy = RetryPolicy(), remote: String? = nil,
                                 log: @escaping @Sendable (String) -> Void = { _ in }) -> RecordStore {
        // One URLSession for every sync of this store.
        let transport = URLSessionTransport.make(requestTimeout: retry.requestTimeout)
        return RecordStore(directory: directory, choosing: (remote, environment)) { (collection: CollectionDirectory) throws(BooksyncError) -> any RemoteCollection in
            let endpoint: FirestoreEndpoint
            let endpointEnvironment = try collection.remote.endpointEnvironment(environment)
            do throws(RemoteError) {
                endpoint = try FirestoreEndpoint.resolve(environment: endpointEnvironment, commandTimeout: retry.requestTimeout, transport: transport)
            } catch {
                throw .remote(error)
            }
            return FirestoreRemote(target: collection.config.remote, endpoint: endpoint, rules: collection.rules,
                                   transport: transport, retry: retry, log: log)
        }
    }
}
