import BooksyncCore

extension SyncGather {
    /// The field-level differences of `ids` (of every record that is not
    /// clean, and the unusable files and documents, when `ids` is empty):
    /// the gather stage, then the three versions of each record shown.
    /// - Throws: `BooksyncError.invalidArgument` for a named record no side knows.
    func diff(_ ids: [RecordID], remote: (any RemoteCollection)?,
              progress: @escaping @Sendable (SyncProgress) -> Void) async throws(BooksyncError) -> CollectionDiff {
        var snapshot: RemoteSnapshot?
        if let remote {
            let named = Set(ids)
            snapshot = try await readRemote(remote, needing: { named.isEmpty || named.contains($0) }, progress: progress)
        }
        let listing = snapshot?.listing
        // Only the records shown are classified and kept: a million clean
        // records would otherwise be a million states held to print none.
        for id in ids where scan.files[id] == nil && manifest.entries[id] == nil && listing?.revisions[id] == nil {
            throw .invalidArgument("no record '\(TerminalEscaping.abbreviate(id.rawValue))' here, in the base or remotely")
        }
        let classified = ids.isEmpty ? classifyDiffering(remote: snapshot) : classify(remote: snapshot, only: ids)
        let states = Dictionary(classified.records.map { ($0.id, $0.state) }, uniquingKeysWith: { first, _ in first })
        let targets = ids.isEmpty ? classified.records.map(\.id) : ids
        var diffs: [RecordDiff] = []
        for id in targets {
            guard let state = states[id] else { continue }
            diffs.append(recordDiff(id, state: state, snapshot: snapshot))
        }
        return CollectionDiff(
            records: diffs, unusableFiles: ids.isEmpty ? scan.unusableFiles : [],
            unusableRemote: ids.isEmpty ? listing?.unusable ?? [] : [])
    }

    /// The three versions of `id`, field by field. Offline (no snapshot) the
    /// base stands in for the remote; a remote revision equal to the base's
    /// is the base copy, read from disk rather than fetched.
    private func recordDiff(_ id: RecordID, state: SyncState, snapshot: RemoteSnapshot?) -> RecordDiff {
        let base = collection.baseCopies.fields(id, hash: manifest.entries[id]?.hash)
        let local = scan.files[id] == nil ? nil : LocalRead(id, in: collection)?.fields
        let remoteFields: Fields?
        if let listing = snapshot?.listing {
            if let revision = listing.revisions[id] {
                remoteFields = revision == manifest.entries[id]?.revision ? base : snapshot?.bodies[id]?.record?.fields
            } else {
                remoteFields = nil
            }
        } else {
            remoteFields = base
        }
        // A file there that cannot be read as a record (a syntax error, a
        // duplicate key) has fields nobody knows, not none: compared as
        // absent, every field would read as deleted locally.
        let unreadable = local == nil && scan.files[id] != nil
        return RecordDiff(
            id: id, state: state, fields: unreadable ? [] : FieldDiff.compare(base: base, local: local, remote: remoteFields),
            inBase: base != nil, inLocal: local != nil, inRemote: remoteFields != nil)
    }
}
