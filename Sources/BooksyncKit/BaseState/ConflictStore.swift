import BooksyncCore

/// The remote side of unresolved conflicts (`.booksync/conflicts/`, local only).
///
/// For each conflicted record: `ID.json` holds the remote document as a record
/// file (absent when the remote deleted it) and `revisions/ID.json` the
/// revision that pull saw together with the base revision the manifest had
/// then (a file of its own, so names stay within 255 bytes). `resolve` settles
/// against exactly that revision, so if the remote moves again before the
/// push, the push's precondition fails and the record becomes a conflict
/// again instead of being overwritten.
///
/// The revision file is the marker: without it there is no conflict, and it
/// alone says whether the remote side is a document or a deletion.
struct ConflictStore {
    let paths: CollectionPaths

    /// What pull saw of the remote side of a conflict.
    struct RemoteSide: Sendable, Equatable {
        /// nil when the remote deleted the record.
        let record: CanonicalRecord?
        /// The document's revision, nil when it was deleted.
        let revision: String?
    }

    /// The base a stored conflict was found against.
    enum StoredBase: Sendable, Equatable {
        /// The manifest had no entry for the record.
        case absent
        /// The manifest's entry had this revision.
        case revision(String)
        /// Written by a booksync that did not store the base.
        case unknown
    }

    /// What the revision file says.
    struct Revisions: Sendable, Equatable {
        /// The remote revision pull saw, nil for a remote deletion.
        let remote: String?
        let base: StoredBase
    }

    /// The one line an older booksync wrote for a remote deletion.
    static let deletedMarker = "deleted"

    /// The most bytes read of a revision file, which holds two revisions
    /// (timestamps) in a few dozen: a larger one, committed by a clone, is
    /// not read, and like any unreadable one means no stored conflict, so
    /// the next pull stores the remote side anew.
    static let maximumRevisionFileBytes = 64 << 10

    /// Stores the remote side of `id`'s conflict, found against `baseRevision`
    /// (the manifest entry's revision then, nil when it had none).
    func save(_ id: RecordID, record: CanonicalRecord?, revision: String?, baseRevision: String?) throws(FileSystemError) {
        try FileSystem.createDirectory(paths.conflicts)
        try FileSystem.createDirectory(paths.conflicts + "/revisions")
        for step in writes(id, record: record, revision: revision, baseRevision: baseRevision) {
            try step.perform()
        }
    }

    /// One file operation of `save`.
    enum Write: Equatable {
        case write([UInt8], to: String)
        case remove(String)

        func perform() throws(FileSystemError) {
            switch self {
            case .write(let bytes, let path): try FileSystem.writeAtomically(bytes, to: path)
            case .remove(let path): try FileSystem.remove(path)
            }
        }
    }

    /// The writes of `save`, in order: a kill between two of them must leave
    /// a conflict that is still safe to resolve. A document's content goes
    /// first: until its revision follows, the old revision file reads as the
    /// old conflict, at worst with newer content, and push's precondition on
    /// that older revision fails, so nothing is overwritten unseen (the other
    /// way round a newer revision would guard older content, and push would
    /// overwrite a remote change resolve never saw). For a deletion the
    /// revision file goes first: it alone makes the side a deletion, so the
    /// content left behind is ignored until removed. Removing first, a kill
    /// left a revision without content, which reads as no conflict at all.
    func writes(_ id: RecordID, record: CanonicalRecord?, revision: String?, baseRevision: String?) -> [Write] {
        let content = paths.conflictFile(paths.stateFileName(id))
        let revisions = Write.write(Self.encode(Revisions(remote: revision, base: baseRevision.map(StoredBase.revision) ?? .absent)),
                                    to: revisionFile(id))
        if let record { return [.write(record.canonicalBytes, to: content), revisions] }
        if revision == nil { return [revisions, .remove(content)] }
        // A document without usable content: a revision without content reads as no conflict, before and after.
        return [.remove(content), revisions]
    }

    func clear(_ id: RecordID) throws(FileSystemError) {
        try FileSystem.remove(paths.conflictFile(paths.stateFileName(id)))
        try FileSystem.remove(revisionFile(id))
    }

    /// The stored remote side, nil when there is no unresolved conflict for `id`.
    /// - Parameter base: the manifest, when at hand: a stored side found
    ///   against another base is stale (resolve or pull saved a new base and
    ///   was killed before clearing it, see `BaseState`), and cleared.
    func load(_ id: RecordID, rules: RecordRules, base: Manifest? = nil) -> RemoteSide? {
        guard let bytes = try? FileSystem.readFile(revisionFile(id), limit: Self.maximumRevisionFileBytes) else { return nil }
        let stored = Self.decode(bytes)
        if let base, Self.isSettled(stored, by: base.entries[id]) {
            try? clear(id)
            return nil
        }
        guard let revision = stored.remote else { return RemoteSide(record: nil, revision: nil) }
        guard let content = try? FileSystem.readFile(paths.conflictFile(paths.stateFileName(id))),
              case .success(let record) = rules.load(content, id: id)
        else { return nil }
        return RemoteSide(record: record, revision: revision)
    }

    /// True when the manifest no longer has the base the conflict was found
    /// against: a later save gave the record a new base, which settles it.
    /// Revisions compare by their bytes, as the server wrote them.
    static func isSettled(_ stored: Revisions, by entry: BaseEntry?) -> Bool {
        switch stored.base {
        case .absent: return entry != nil
        case .revision(let revision): return !(entry.map { $0.revision.utf8.elementsEqual(revision.utf8) } ?? false)
        case .unknown: return isRecorded(revision: stored.remote, in: entry)
        }
    }

    /// For a conflict stored without its base: true when the base entry is
    /// what settling it records, the remote revision pull saw, or no entry for
    /// a remote deletion. A guess: a base moved elsewhere (a merged manifest,
    /// a local deletion kept by `resolve --ours`) still looks unsettled.
    static func isRecorded(revision: String?, in entry: BaseEntry?) -> Bool {
        guard let revision else { return entry == nil }
        return entry?.revision == revision
    }

    /// `{"base": …, "remote": …}`, null for an absent base or a remote deletion.
    static func encode(_ revisions: Revisions) -> [UInt8] {
        let base: Value
        switch revisions.base {
        case .revision(let revision): base = .string(revision)
        case .absent, .unknown: base = .null
        }
        return CanonicalJSON.encode(["base": base, "remote": revisions.remote.map(Value.string) ?? .null])
    }

    /// Reads either format: the JSON object `encode` writes, or the single
    /// line of an older booksync (the revision, or `deleted`), whose base is unknown.
    static func decode(_ bytes: [UInt8]) -> Revisions {
        if let fields = try? JSONParser.parseObject(bytes), let remote = fields["remote"], let base = fields["base"] {
            switch (remote, base) {
            case (.string(let remote), .string(let base)): return Revisions(remote: remote, base: .revision(base))
            case (.string(let remote), .null): return Revisions(remote: remote, base: .absent)
            case (.null, .string(let base)): return Revisions(remote: nil, base: .revision(base))
            case (.null, .null): return Revisions(remote: nil, base: .absent)
            default: break
            }
        }
        let line = String(decoding: bytes, as: UTF8.self).trimmingWhitespace
        return Revisions(remote: line == deletedMarker ? nil : line, base: .unknown)
    }

    private func revisionFile(_ id: RecordID) -> String { paths.conflicts + "/revisions/" + paths.stateFileName(id) }
}
