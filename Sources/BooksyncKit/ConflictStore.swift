import BooksyncCore

/// The remote side of unresolved conflicts (`.booksync/conflicts/`, local only).
///
/// For each conflicted record: `ID.json` holds the remote document as a record
/// file (absent when the remote deleted it) and `revisions/ID.json` the
/// revision that pull saw (a file of its own, so names stay within 255 bytes). `resolve` settles against exactly that revision, so
/// if the remote moves again before the push, the push's precondition fails
/// and the record becomes a conflict again instead of being overwritten.
struct ConflictStore {
    let paths: CollectionPaths

    /// What pull saw of the remote side of a conflict.
    struct RemoteSide: Sendable, Equatable {
        /// nil when the remote deleted the record.
        let record: Record?
        /// The document's revision, nil when it was deleted.
        let revision: String?
    }

    static let deletedMarker = "deleted"

    func save(_ id: RecordID, record: Record?, revision: String?) throws(FileSystemError) {
        try FileSystem.createDirectory(paths.conflicts)
        try FileSystem.createDirectory(paths.conflicts + "/revisions")
        if let record {
            try FileSystem.writeAtomically(record.canonicalBytes, to: paths.conflictFile(paths.stateFileName(id)))
        } else {
            try FileSystem.remove(paths.conflictFile(paths.stateFileName(id)))
        }
        try FileSystem.writeAtomically(Array((revision ?? Self.deletedMarker).utf8), to: revisionFile(id))
    }

    func clear(_ id: RecordID) throws(FileSystemError) {
        try FileSystem.remove(paths.conflictFile(paths.stateFileName(id)))
        try FileSystem.remove(revisionFile(id))
    }

    /// The stored remote side, nil when there is no unresolved conflict for `id`.
    /// - Parameter base: the manifest, when at hand: a stored side it already
    ///   records (resolve was killed after saving the manifest and before
    ///   clearing the conflict, see `BaseState`) is settled, and cleared.
    func load(_ id: RecordID, rules: RecordRules, base: Manifest? = nil) -> RemoteSide? {
        guard let bytes = try? FileSystem.readFile(revisionFile(id)) else { return nil }
        let revision = String(decoding: bytes, as: UTF8.self).trimmingWhitespace
        if let base, Self.isRecorded(revision: revision, in: base.entries[id]) {
            try? clear(id)
            return nil
        }
        if revision == Self.deletedMarker { return RemoteSide(record: nil, revision: nil) }
        guard let content = try? FileSystem.readFile(paths.conflictFile(paths.stateFileName(id))),
              case .success(let record) = rules.load(content, id: id)
        else { return nil }
        return RemoteSide(record: record, revision: revision)
    }

    /// True when the base entry is what settling a stored side records: the
    /// remote revision pull saw, or no entry for a remote deletion. An
    /// unsettled conflict never looks so: pull stores one only when the
    /// remote moved away from the base (a new revision, or a deletion of a
    /// record the base has).
    static func isRecorded(revision: String, in entry: BaseEntry?) -> Bool {
        revision == deletedMarker ? entry == nil : entry?.revision == revision
    }

    private func revisionFile(_ id: RecordID) -> String { paths.conflicts + "/revisions/" + paths.stateFileName(id) }
}
