import BooksyncCore

/// How a command narrowed by pathspecs (`RecordScope`) sees the base and the
/// remote: only the records in scope, so they alone are planned, counted by the
/// mass-delete guard, and reported; every other base entry is carried over
/// unchanged by the full manifest that `BaseState` keeps.
extension Manifest {
    /// The entries in `scope`, with no change mark (a narrowed command never
    /// moves it: it has not seen the whole collection).
    func scoped(to scope: RecordScope) -> Manifest {
        guard !scope.isEverything else { return self }
        var entries = ManifestEntries()
        for (id, entry) in self.entries where scope.contains(id) { entries[id] = entry }
        return Manifest(entries: entries, configFingerprint: configFingerprint, changesSince: nil, target: target)
    }
}

extension RemoteSnapshot {
    /// The documents in `scope` only.
    func scoped(to scope: RecordScope) -> RemoteSnapshot {
        guard !scope.isEverything else { return self }
        var copy = self
        copy.listing.revisions = listing.revisions.filter { scope.contains($0.key) }
        copy.listing.unusable = []
        copy.bodies = bodies.filter { scope.contains($0.key) }
        return copy
    }
}

extension SyncGather {
    /// Refuses pathspecs that match no record on any side, as git does
    /// ("did not match any file"): a typo must not look like "nothing to do".
    /// `fromWatcher`: the scope is what a live sync saw change, which may be gone.
    func requireMatches(_ snapshot: RemoteSnapshot?, fromWatcher: Bool = false) throws(BooksyncError) {
        guard !scope.isEverything, !fromWatcher else { return }
        var left = scope.unmatched(scan.files.keys)
        if !left.isEmpty { left = RecordScope(left).unmatched(manifest.entries.keys) }
        if !left.isEmpty, let snapshot { left = RecordScope(left).unmatched(snapshot.listing.revisions.keys) }
        guard let first = left.first else { return }
        let names = left.map { "'\(TerminalEscaping.abbreviate($0.text))'" }.joined(separator: ", ")
        throw .invalidArgument("pathspec \(names) matches no record: no file, no base entry"
            + (snapshot == nil ? "" : ", no document") + (left.count > 1 || first.text.contains("*") ? "" : " (check the id or path)"))
    }
}
