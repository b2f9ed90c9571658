import Synchronization
import BooksyncCore

/// What `verify` found: every record file compared with its remote document
/// by content, trusting neither the base nor the stat cache.
///
/// `status` trusts the committed base: a collaborator can commit a record
/// edit together with a manifest entry whose hash matches it, and status then
/// says nothing changed although the file differs from the remote. Only a
/// comparison of contents finds such a record.
package struct ContentVerification: Sendable, Equatable {
    /// Documents compared with a file (both sides valid records).
    package var compared = 0
    /// Records the base calls in sync with both sides (the file's hash and
    /// the remote revision are the base's) whose file differs from the
    /// remote's content: the base does not describe the remote.
    package var baseDisagrees: [RecordID] = []
    /// Records whose file differs from the remote and whose difference
    /// `status` shows (a change on one side or both since the base).
    package var differing = 0

    /// True when the base was found describing a remote it does not match.
    package var needsAttention: Bool { !baseDisagrees.isEmpty }
}

extension CollectionDirectory {
    /// Compares every record file with its remote document by content (a
    /// billed read per document, like a listing of every name). Files and
    /// documents only on one side, and invalid ones, are what `status` shows.
    /// - Throws: `BooksyncError` when the base cannot be read, the files
    ///   cannot be scanned, or the remote fails.
    package func verify(remote: any RemoteCollection, progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(BooksyncError) -> ContentVerification {
        let manifest = try manifestFile.load(for: remote)
        let scan = try LocalScanner(for: self, base: nil, choices: ScanChoices(writeIndex: false), trustsIndex: false).scan()
        let found = Mutex(ContentVerification())
        let counter = ProgressCounter(phase: "comparing", total: nil, report: progress)
        do {
            try await remote.listDocuments(batch: { _, documents in
                found.withLock { result in
                    for (id, document) in documents {
                        guard case .record(let record) = document.content, case .valid(let hash)? = scan.files[id] else { continue }
                        result.compared += 1
                        guard hash != record.hash else { continue }
                        let base = manifest.entries[id]
                        if base?.hash == hash, base?.revision == document.revision {
                            result.baseDisagrees.append(id)
                        } else {
                            result.differing += 1
                        }
                    }
                }
            }, progress: { counter.add($0) })
        } catch {
            throw .remoteFailure(error)
        }
        var result = found.withLock { $0 }
        result.baseDisagrees.sort()
        return result
    }

    /// Forgets the base of `ids` (what `verify --repair` does with the records
    /// it found): each is then a record on both sides with no base, so status
    /// shows it as added on both sides, and pull merges it or stores the
    /// conflict for `resolve`, as for any record of unknown history.
    package func forgetBase(of ids: [RecordID], onStaleLock: (Int32) -> Void = { _ in }) throws(BooksyncError) {
        guard !ids.isEmpty else { return }
        let lock = try self.lock(onStaleLock: onStaleLock)
        defer { lock.release() }
        var base = BaseState(copies: baseCopies, manifest: try manifestFile.load(), configFingerprint: configFingerprint)
        for id in ids { base.forget(id) }
        try base.finish()
    }
}
