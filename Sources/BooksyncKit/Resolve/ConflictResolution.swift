import BooksyncCore

/// How `resolve` settles a conflict.
public enum ResolveChoice: Sendable, Equatable {
    /// Our value for each conflicting field; every one-sided change, from
    /// either side, is kept. Push publishes the result.
    case ours
    /// Their value for each conflicting field; one-sided changes are kept.
    /// A record deleted remotely is deleted.
    case theirs
    /// Accept the local file as edited by hand (it must be valid); the same as
    /// `ours` once the user has merged the conflict into the file.
    case edited
}

/// What `resolve` did for one record.
public enum ResolveOutcome: Sendable, Equatable {
    /// Settled; push publishes the result (guarded by the remote revision pull saw).
    case keptLocal
    /// Settled by taking the remote version locally.
    case tookRemote
    /// There is no unresolved conflict for this record (pull detects and stores them).
    case noConflict
    /// The local file cannot be published; fix it and resolve again.
    case invalidLocal([RecordDiagnostic])
    /// The file was saved while resolve worked on it; nothing was settled.
    case changedMeanwhile
}

extension CollectionDirectory {
    /// The conflict that pull stored for `id` and resolve has not settled yet,
    /// nil when there is none. Push names `resolve` for such a record: sending
    /// the user back to pull would only report the same conflict again. The
    /// kind comes from the two sides (field names are not known here).
    /// With `base`, a stored conflict the base has moved past is none (`ConflictStore.load`).
    package func unresolvedConflict(_ id: RecordID, base: Manifest? = nil) -> ConflictKind? {
        guard let remote = ConflictStore(paths: paths).load(id, rules: rules, base: base) else { return nil }
        switch ((try? paths.recordFile(id)).map(FileSystem.exists) ?? true, remote.record != nil) {
        case (true, true): return .bothModified(fields: [])
        case (true, false): return .modifiedLocallyDeletedRemotely
        case (false, true): return .deletedLocallyModifiedRemotely
        case (false, false): return nil  // deleted on both sides: push simply forgets it
        }
    }

    /// `unresolvedConflict` for the records of one report, against the base
    /// as the command left it: read once, and only when a record asks.
    package func unresolvedConflicts() -> (RecordID) -> ConflictKind? {
        let base = LazyBase(self)
        return { self.unresolvedConflict($0, base: base.manifest) }
    }

    /// Settles conflicts that pull stored, without contacting the remote: the
    /// base becomes the remote version pull saw, so the next push is guarded by
    /// that revision and a remote that moved again is never overwritten.
    /// With `dryRun`, the outcomes are decided as for real and nothing is
    /// written or locked: no file, no base, no stored conflict.
    public func resolve(_ ids: [RecordID], choice: ResolveChoice, dryRun: Bool = false,
                        onStaleLock: (Int32) -> Void = { _ in }) throws(BooksyncError) -> [(RecordID, ResolveOutcome)] {
        let lock = dryRun ? nil : try self.lock(onStaleLock: onStaleLock)
        defer { lock?.release() }
        var resolver = try ConflictResolver(collection: self, choice: choice, dryRun: dryRun)
        return try resolver.run(ids)
    }
}

/// A collection's base, loaded on first use (nil when it cannot be read).
private final class LazyBase {
    private let collection: CollectionDirectory
    private var loaded: Manifest??

    init(_ collection: CollectionDirectory) { self.collection = collection }

    var manifest: Manifest? {
        if let loaded { return loaded }
        let manifest = try? collection.manifestFile.load()
        loaded = .some(manifest)
        return manifest
    }
}
