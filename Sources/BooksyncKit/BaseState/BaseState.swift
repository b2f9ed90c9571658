import BooksyncCore

/// The base state being updated by a pull or push: the manifest in memory plus
/// the base copies on disk, saved as batches complete.
///
/// Order of writes for one record: record file (if any), then — once per
/// batch — its base copy appended to `base/pack` and the manifest (both
/// fsynced). If booksync is killed between them,
/// the manifest is behind the files, never ahead; the next run sees "both
/// changed to the same content" and records it (converged) instead of redoing
/// or losing anything. Record files are not fsynced, so this
/// holds for crashes of booksync, not for a power loss of the machine (see
/// the manual's Safety article).
///
/// A record whose conflict pull stored (`ConflictStore`) is settled once a
/// new base is recorded for it: its stored conflict is cleared only after
/// the manifest naming that base is saved. Cleared before, a kill would lose
/// the resolution (the conflict gone, the base still the old one, and push
/// refusing the record); cleared after, a kill between the two leaves a
/// stored conflict the base already records, which `ConflictStore.load`
/// recognises as settled.
struct BaseState {
    let copies: BaseCopyStore
    var manifest: Manifest
    private var dirty = false
    /// Pack lines of the copies recorded since the last save.
    private var pendingCopies: [UInt8] = []
    private var lastSave = ContinuousClock.now
    /// How long the last save took: `saveIfDue` waits a multiple of it.
    private var lastSaveDuration = Duration.zero
    /// Whether this command made a base copy stale (replaced or forgot a
    /// recorded one): only then can compaction shrink the pack.
    private var madeCopiesStale = false
    /// The stored conflicts, when there were any as the command started.
    private let conflicts: ConflictStore?
    /// Records given a new base since the last save whose stored conflict,
    /// if any, that save settles.
    private var settledSinceSave: [RecordID] = []
    /// Whether `journal` wrote entries that the next save makes redundant.
    private var journaled = false
    /// Whether this command journaled at all (the `.gitignore` is checked once).
    private var journaledBefore = false
    /// Whether the manifest on disk does not yet name the target this command
    /// records against (a first pull): saved before anything is journaled, so
    /// a replayed journal is never recorded against no target.
    private var targetUnsaved: Bool

    /// `configFingerprint`: the config the recorded records were validated under,
    /// and `target`: the remote they are synced with (nil: keep the manifest's),
    /// both written into the manifest on every save.
    init(copies: BaseCopyStore, manifest: Manifest, configFingerprint: String, target: TargetIdentity? = nil) {
        self.copies = copies
        self.manifest = manifest
        self.manifest.configFingerprint = configFingerprint
        targetUnsaved = target.map { $0 != manifest.target } ?? false
        if let target { self.manifest.target = target }
        let store = ConflictStore(paths: copies.paths)
        conflicts = FileSystem.exists(copies.paths.conflicts) ? store : nil
    }

    /// Records `record` at `revision` as what both sides now hold.
    mutating func record(_ record: CanonicalRecord, revision: String) {
        note(Self.copy(record, revision: revision))
    }

    /// Forgets a record both sides no longer have.
    mutating func forget(_ id: RecordID) {
        note(.forgotten(id))
    }

    /// Journals the record file writes and removals a pull is about to make
    /// (`PullJournal`), before it makes them: a pull killed before the next
    /// save then leaves files the next command can tell from local edits.
    mutating func journal(_ entries: [PullJournal.Entry]) throws(BooksyncError) {
        guard !entries.isEmpty else { return }
        if targetUnsaved {
            markChanged()
            try save()
        }
        if !journaledBefore {
            PullJournal.ensureIgnored(paths: copies.paths)
            journaledBefore = true
        }
        try BooksyncError.io { () throws(FileSystemError) in
            try PullJournal(paths: copies.paths).append(entries)
        }
        journaled = true
    }

    /// Records how far the base now reflects the remote's change field (nil:
    /// the next command lists every name). Only a completed pull calls this;
    /// a failed one keeps the old mark, which stays true for the base (every
    /// document it did not record changed after that mark).
    mutating func setChangeMark(_ mark: ChangeMark?) {
        guard manifest.changesSince != mark else { return }
        manifest.changesSince = mark
        dirty = true
    }

    /// Makes the next save write the manifest even if no entry changed (its target did).
    mutating func markChanged() { dirty = true }

    /// Writes the base copies recorded since the last save, then the manifest
    /// that names them, if anything changed.
    mutating func save() throws(BooksyncError) {
        guard dirty else { return }
        let started = ContinuousClock.now
        try writePendingCopies()
        try BooksyncError.io { () throws(FileSystemError) in
            try ManifestFile.write(manifest, to: copies.paths.manifest)
        }
        dirty = false
        targetUnsaved = false
        lastSave = .now
        lastSaveDuration = lastSave - started
        // The manifest now records everything journaled (see `PullJournal`).
        if journaled {
            PullJournal(paths: copies.paths).remove()
            journaled = false
        }
        // Only now that the manifest records their new base (see the type's comment).
        if let conflicts {
            for id in settledSinceSave { try? conflicts.clear(id) }
            settledSinceSave.removeAll(keepingCapacity: true)
        }
    }

    /// Saves what was done before a failure, then throws it: the next run
    /// starts from there instead of redoing (or misjudging) that work.
    /// - Throws: the failure, or the save's own failure if saving fails.
    mutating func saveAndThrow(_ failure: BooksyncError) throws(BooksyncError) -> Never {
        try save()
        throw failure
    }

    /// The last save of a command; then the pack is compacted if stale copies
    /// have made it grow (best effort: the sync itself is already complete).
    /// A command that only added copies (a first pull, a push of new records)
    /// left nothing stale, so it does not rewrite a pack that cannot shrink.
    mutating func finish() throws(BooksyncError) {
        try save()
        if madeCopiesStale { try? copies.compactIfGrown(manifest: manifest) }
    }

    /// The shortest time between two saves of `saveIfDue`.
    static let minimumSaveInterval = Duration.seconds(1)
    /// `saveIfDue` waits at least this many times as long as the last save
    /// took, so saving costs at most about 1/(this + 1) of a command's time.
    static let saveCostFactor = 10

    /// Saves after a batch when the last save is old enough: at least a
    /// second, and ten times as long as that save took. A large pull records
    /// progress regularly without rewriting (and fsyncing) a multi-megabyte
    /// manifest after every 500 records; the second bound keeps the rewrites
    /// linear in total (a manifest that grows with every batch, rewritten every
    /// second, made a 100,000-document first pull quadratic: a quarter of its
    /// CPU time went to manifest saves). Work done since the last save is
    /// recovered as "converged" by the next run.
    mutating func saveIfDue() throws(BooksyncError) {
        if Self.saveIsDue(waited: ContinuousClock.now - lastSave, lastSaveTook: lastSaveDuration) {
            try save()
        } else if pendingCopies.count >= Self.pendingCopiesLimit {
            try writePendingCopies()
        }
    }

    /// Pack bytes held at most between saves: beyond this they are appended
    /// early (a copy the manifest does not name yet is harmless), so a first
    /// pull of a large collection does not hold every copy while saves grow
    /// rarer (the Benchmarks article).
    static let pendingCopiesLimit = 4 << 20

    /// Appends the copies recorded since the last append (and syncs them).
    private mutating func writePendingCopies() throws(BooksyncError) {
        guard !pendingCopies.isEmpty else { return }
        try BooksyncError.io { () throws(FileSystemError) in
            try copies.append(pendingCopies)
        }
        pendingCopies.removeAll(keepingCapacity: true)
    }

    /// Whether `saveIfDue` saves, `waited` after a save that took `lastSaveTook`.
    static func saveIsDue(waited: Duration, lastSaveTook: Duration) -> Bool {
        waited > minimumSaveInterval && waited > lastSaveTook * saveCostFactor
    }

    /// The change that records `record` at `revision`: a manifest entry and the
    /// base copy's pack line. Pure, so it can be prepared on any thread.
    static func copy(_ record: CanonicalRecord, revision: String) -> BaseChange {
        .recorded(BaseEntry(hash: record.hash, revision: revision), record.id, packLine: BasePack.line(for: record))
    }

    /// Applies a change prepared by `copy` (or `.forgotten`) to the manifest.
    mutating func note(_ change: BaseChange) {
        guard let id = change.id else { return }
        if manifest.entries[id] != nil { madeCopiesStale = true }
        change.apply(to: &manifest)
        if case .recorded(_, _, let line) = change { pendingCopies += line }
        if conflicts != nil { settledSinceSave.append(id) }
        dirty = true
    }
}

/// A manifest change, with the base copy to write for it.
enum BaseChange: Sendable {
    case none
    case recorded(BaseEntry, RecordID, packLine: [UInt8])
    case forgotten(RecordID)

    /// The record it changes; nil for `.none`.
    var id: RecordID? {
        switch self {
        case .none: nil
        case .recorded(_, let id, _), .forgotten(let id): id
        }
    }

    /// Sets or removes the record's manifest entry (the base copy is not written).
    func apply(to manifest: inout Manifest) {
        switch self {
        case .none: return
        case .recorded(let entry, let id, _): manifest.entries[id] = entry
        case .forgotten(let id): manifest.entries[id] = nil
        }
    }

    var isForgotten: Bool {
        if case .forgotten = self { return true }
        return false
    }
}
