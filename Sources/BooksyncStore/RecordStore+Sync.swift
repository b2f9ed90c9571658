import BooksyncCore
@_spi(Remote) import BooksyncKit

/// The engine's three-way status, pull and push, for the store's collection.
extension RecordStore {
    /// The three-way status of every record (the manual's ThreeWaySync article), as `booksync status`.
    /// - Parameter offline: Compare with the base only, without the remote
    ///   (`--offline`): what this device changed, with no network.
    /// - Throws: `RecordStoreError.collection` (the remote, the base, I/O).
    public func status(offline: Bool = false) async throws(RecordStoreError) -> SyncStatus {
        try await exclusively { () throws(RecordStoreError) -> SyncStatus in
            let collection = try openForSync()
            do throws(BooksyncError) {
                return try await collection.status(remote: offline ? nil : makeRemote(collection))
            } catch {
                throw .collection(error)
            }
        }
    }

    /// Applies remote changes to the files (`booksync pull`): changes to
    /// different fields of a record merge, conflicts are reported in the
    /// events and left alone unless `options.conflictChoice` says whose side wins.
    /// - Throws: `RecordStoreError.collection` (lock held, the remote, the
    ///   mass-delete guard, I/O); work done before a failure is recorded.
    public func pull(options: SyncOptions = SyncOptions()) async throws(RecordStoreError) -> SyncReport {
        try await exclusively { () throws(RecordStoreError) -> SyncReport in
            let collection = try openForSync()
            do throws(BooksyncError) {
                return try await collection.pull(remote: makeRemote(collection), options: options)
            } catch {
                throw .collection(error)
            }
        }
    }

    /// Publishes local changes (`booksync push`), every write guarded by the
    /// document's revision: a document changed remotely since the last pull is
    /// reported (`remoteChangedSincePull`), never overwritten; pull first.
    /// - Throws: `RecordStoreError.collection` (lock held, the remote, the
    ///   mass-delete guard, I/O); writes accepted before a failure are recorded.
    public func push(options: SyncOptions = SyncOptions()) async throws(RecordStoreError) -> SyncReport {
        try await exclusively { () throws(RecordStoreError) -> SyncReport in
            let collection = try openForSync()
            do throws(BooksyncError) {
                return try await collection.push(remote: makeRemote(collection), options: options)
            } catch {
                throw .collection(error)
            }
        }
    }

    /// Runs `body` after every write or sync called before it on this
    /// collection directory, by this store or another in the same process,
    /// has finished (`DirectoryTurns`). Waiters resume in call order.
    func exclusively<T: Sendable>(_ body: () async throws(RecordStoreError) -> T) async throws(RecordStoreError) -> T {
        let key = DirectoryTurns.key(directory)
        await DirectoryTurns.shared.acquire(key)
        do {
            let result = try await body()
            await DirectoryTurns.shared.release(key)
            return result
        } catch {
            await DirectoryTurns.shared.release(key)
            throw error
        }
    }
}
