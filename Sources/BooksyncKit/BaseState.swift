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
/// README, "Writes and durability").
struct BaseState {
    let copies: BaseCopyStore
    var manifest: Manifest
    private var dirty = false
    /// Pack lines of the copies recorded since the last save.
    private var pendingCopies: [UInt8] = []
    private var lastSave = ContinuousClock.now

    /// `configFingerprint`: the config the recorded records were validated under,
    /// written into the manifest on every save.
    init(copies: BaseCopyStore, manifest: Manifest, configFingerprint: String) {
        self.copies = copies
        self.manifest = manifest
        self.manifest.configFingerprint = configFingerprint
    }

    /// Records `record` at `revision` as what both sides now hold.
    mutating func record(_ record: Record, revision: String) {
        note(Self.copy(record, revision: revision))
    }

    /// Forgets a record both sides no longer have.
    mutating func forget(_ id: RecordID) {
        note(.forgotten(id))
    }

    /// Writes the base copies recorded since the last save, then the manifest
    /// that names them, if anything changed.
    mutating func save() throws(BooksyncError) {
        guard dirty else { return }
        do {
            try copies.append(pendingCopies)
            pendingCopies = []
            try CollectionDirectory.writeManifest(manifest, to: copies.paths.manifest)
        } catch {
            throw .io(error)
        }
        dirty = false
        lastSave = .now
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
    mutating func finish() throws(BooksyncError) {
        try save()
        try? copies.compactIfGrown(manifest: manifest)
    }

    /// Saves after a batch when the last save is more than a second old: a
    /// large pull records progress regularly without rewriting (and fsyncing) a
    /// multi-megabyte manifest after every 500 records. Work done since the
    /// last save is recovered as "converged" by the next run.
    mutating func saveIfDue() throws(BooksyncError) {
        if ContinuousClock.now - lastSave > .seconds(1) { try save() }
    }

    /// The change that records `record` at `revision`: a manifest entry and the
    /// base copy's pack line. Pure, so it can be prepared on any thread.
    static func copy(_ record: Record, revision: String) -> BaseChange {
        .recorded(BaseEntry(hash: record.hash, revision: revision), record.id, packLine: BasePack.line(for: record))
    }

    /// Applies a change prepared by `copy` (or `.forgotten`) to the manifest.
    mutating func note(_ change: BaseChange) {
        switch change {
        case .none: return
        case .recorded(let entry, let id, let line):
            manifest.entries[id] = entry
            pendingCopies += line
        case .forgotten(let id): manifest.entries[id] = nil
        }
        dirty = true
    }
}

/// A manifest change, with the base copy to write for it.
enum BaseChange: Sendable {
    case none
    case recorded(BaseEntry, RecordID, packLine: [UInt8])
    case forgotten(RecordID)

    var isForgotten: Bool {
        if case .forgotten = self { return true }
        return false
    }
}
