/// Three-way merge of two manifests by record key: what git's merge driver for
/// `.booksync/manifest.json` computes, so that two branches that synced
/// different records merge cleanly (the manual's Safety article).
///
/// Per record id (compared by UTF-8 bytes, as `RecordID` does), on whole
/// (hash, revision) entries, with "changed" meaning "differs from the base":
///
/// | base | ours | theirs | merged |
/// |---|---|---|---|
/// | e | e | e | e |
/// | e | o | e | o (changed on our side only) |
/// | e | e | t | t (changed on their side only) |
/// | e | x | x | x (changed the same way on both) |
/// | – | o | – | o (added on one side) |
/// | e | – | e | – (removed on one side, unchanged on the other) |
/// | e | o | t | conflict (changed differently on both) |
/// | – | o | t | conflict (added differently on both) |
/// | e | – | t | conflict (removed on one side, changed on the other) |
///
/// A conflicting record is left out of the merged manifest. Whichever entry
/// were kept, a later push could be guarded by a revision the other branch had
/// already moved past and publish values the record file merge took from the
/// older side; with no entry, booksync compares the file with the remote
/// document by content on the next status or pull (equal: recorded as
/// converged; different: a conflict to resolve), so nothing is overwritten.
/// The merged manifest is always one booksync can read.
package enum ManifestMerge {
    /// A record whose entry changed differently on the two sides.
    package struct Conflict: Sendable, Equatable {
        /// The record, left out of the merged manifest.
        package let id: RecordID
        /// Its entry in the common ancestor; nil when it had none.
        package let base: BaseEntry?
        /// Its entry on our side (the branch being merged into); nil when removed.
        package let ours: BaseEntry?
        /// Its entry on their side; nil when removed.
        package let theirs: BaseEntry?

        /// A conflict; nil entries mean the manifest has no such record.
        package init(id: RecordID, base: BaseEntry?, ours: BaseEntry?, theirs: BaseEntry?) {
            self.id = id
            self.base = base
            self.ours = ours
            self.theirs = theirs
        }

        /// What happened on each side, in words.
        package var reason: String {
            switch (base, ours, theirs) {
            case (nil, _, _): "added differently on both sides"
            case (_, nil, _): "removed on our side, changed on theirs"
            case (_, _, nil): "changed on our side, removed on theirs"
            default: "changed differently on both sides"
            }
        }
    }

    /// The merged manifest and what could not be merged.
    package struct Result: Sendable, Equatable {
        /// The merge, without the conflicting records (and without a config
        /// fingerprint when that conflicted).
        package let manifest: Manifest
        /// Conflicting records, sorted by id.
        package let conflicts: [Conflict]
        /// Both sides recorded a different config fingerprint than the base.
        package let configConflict: Bool
        /// The two sides' bases were recorded against different targets
        /// (ours, theirs): their entries cannot be compared, so `manifest` is ours, unmerged.
        package let targetConflict: (ours: TargetIdentity, theirs: TargetIdentity)?

        init(manifest: Manifest, conflicts: [Conflict], configConflict: Bool, targetConflict: (ours: TargetIdentity, theirs: TargetIdentity)? = nil) {
            self.manifest = manifest
            self.conflicts = conflicts
            self.configConflict = configConflict
            self.targetConflict = targetConflict
        }

        /// Nothing conflicted: git may take the merge as is (the driver exits 0).
        package var isClean: Bool { conflicts.isEmpty && !configConflict && targetConflict == nil }

        package static func == (lhs: Result, rhs: Result) -> Bool {
            lhs.manifest == rhs.manifest && lhs.conflicts == rhs.conflicts && lhs.configConflict == rhs.configConflict
                && lhs.targetConflict?.ours == rhs.targetConflict?.ours && lhs.targetConflict?.theirs == rhs.targetConflict?.theirs
        }
    }

    /// Merges `ours` and `theirs` against their common ancestor `base`, record
    /// by record (the table on `ManifestMerge`); pure, never fails.
    /// - Returns: The merged manifest, always valid, with conflicting records
    ///   (and a conflicting config fingerprint) left out, and what conflicted.
    package static func merge(base: Manifest, ours: Manifest, theirs: Manifest) -> Result {
        // Entries recorded against two targets say nothing about each other.
        if let o = ours.target, let t = theirs.target, o != t {
            return Result(manifest: ours, conflicts: [], configConflict: false, targetConflict: (o, t))
        }
        var entries: [RecordID: BaseEntry] = [:]
        entries.reserveCapacity(max(ours.entries.count, theirs.entries.count))
        var conflicts: [Conflict] = []
        var oursChangedEntries = false, theirsChangedEntries = false
        var ids = Set(ours.entries.keys)
        ids.formUnion(theirs.entries.keys)
        ids.formUnion(base.entries.keys)
        for id in ids {
            let b = base.entries[id], o = ours.entries[id], t = theirs.entries[id]
            if o != b { oursChangedEntries = true }
            if t != b { theirsChangedEntries = true }
            let change = ThreeWay(base: b, ours: o, theirs: t)
            if change == .conflict {
                conflicts.append(Conflict(id: id, base: b, ours: o, theirs: t))
            } else {
                entries[id] = change.kept(ours: o, theirs: t)
            }
        }
        // The fingerprint says under which config.json every hash in the manifest
        // was found valid (a cold scan trusts files with those hashes). Taking
        // the changed side's is only true if the other side recorded nothing of
        // its own under the old config; otherwise no fingerprint is the truth,
        // which costs one full re-validation and is rewritten by the next sync.
        var fingerprint: String?
        var configConflict = false
        let change = ThreeWay(base: base.configFingerprint, ours: ours.configFingerprint, theirs: theirs.configFingerprint)
        switch change {
        case .conflict:
            configConflict = true
        case .ours where theirsChangedEntries, .theirs where oursChangedEntries:
            fingerprint = nil
        case .same, .ours, .theirs:
            fingerprint = change.kept(ours: ours.configFingerprint, theirs: theirs.configFingerprint)
        }
        // A change mark says the base reflects every remote change before it.
        // A side's mark holds for the merge only if the other side's entries
        // are the base's; otherwise no mark, and the next sync lists every
        // name once and sets a new one.
        let markChange = ThreeWay(base: base.changesSince, ours: ours.changesSince, theirs: theirs.changesSince)
        var mark: ChangeMark?
        switch markChange {
        case .same: mark = ours.changesSince
        case .ours where !theirsChangedEntries: mark = ours.changesSince
        case .theirs where !oursChangedEntries: mark = theirs.changesSince
        case .ours, .theirs, .conflict: mark = nil
        }
        // One side that never recorded its target (an older booksync) synced with the other's.
        return Result(manifest: Manifest(entries: entries, configFingerprint: fingerprint, changesSince: mark, target: ours.target ?? theirs.target),
                      conflicts: conflicts.sorted { $0.id < $1.id }, configConflict: configConflict)
    }
}
