import BooksyncCore

/// The base state being updated by a pull or push: the manifest in memory plus
/// the base copies on disk, saved as batches complete.
///
/// Order of writes for one record: record file (if any), then base copy, then —
/// once per batch — the manifest (fsynced). If booksync is killed between them,
/// the manifest is behind the files, never ahead; the next run sees "both
/// changed to the same content" and records it (converged) instead of redoing
/// or losing anything. Record files and base copies are not fsynced, so this
/// holds for crashes of booksync, not for a power loss of the machine (see
/// README, "Writes and durability").
struct BaseState {
    let paths: CollectionPaths
    var manifest: Manifest
    private var dirty = false
    private var lastSave = ContinuousClock.now

    /// `configFingerprint`: the config the recorded records were validated under,
    /// written into the manifest on every save.
    init(paths: CollectionPaths, manifest: Manifest, configFingerprint: String) {
        self.paths = paths
        self.manifest = manifest
        self.manifest.configFingerprint = configFingerprint
    }

    /// Records `record` at `revision` as what both sides now hold.
    mutating func record(_ record: Record, revision: String) throws(BooksyncError) {
        do {
            note(try Self.copy(record, revision: revision, paths: paths))
        } catch {
            throw .io(error)
        }
    }

    /// Forgets a record both sides no longer have.
    mutating func forget(_ id: RecordID) throws(BooksyncError) {
        do {
            note(try Self.removeCopy(id, paths: paths))
        } catch {
            throw .io(error)
        }
    }

    /// Writes the manifest if anything changed since the last save.
    mutating func save() throws(BooksyncError) {
        guard dirty else { return }
        do {
            try FileSystem.writeAtomically(manifest.encoded(), to: paths.manifest, durable: true)
        } catch {
            throw .io(error)
        }
        dirty = false
        lastSave = .now
    }

    /// Saves after a batch when the last save is more than a second old: a
    /// large pull records progress regularly without rewriting (and fsyncing) a
    /// multi-megabyte manifest after every 500 records. Work done since the
    /// last save is recovered as "converged" by the next run.
    mutating func saveIfDue() throws(BooksyncError) {
        if ContinuousClock.now - lastSave > .seconds(1) { try save() }
    }

    /// Writes the base copy of a record; the manifest entry follows via `note`.
    /// Safe to call for different records at once.
    /// `base/` must exist (`CollectionDirectory.lock` creates it).
    static func copy(_ record: Record, revision: String, paths: CollectionPaths) throws(FileSystemError) -> BaseChange {
        try FileSystem.writeAtomically(record.canonicalBytes, to: paths.baseFile(record.id.fileName))
        return .recorded(BaseEntry(hash: record.hash, revision: revision), record.id)
    }

    /// Removes the base copy of a record; the manifest entry goes via `note`.
    static func removeCopy(_ id: RecordID, paths: CollectionPaths) throws(FileSystemError) -> BaseChange {
        try FileSystem.remove(paths.baseFile(id.fileName))
        return .forgotten(id)
    }

    /// Applies a change prepared by `copy` or `removeCopy` to the manifest.
    mutating func note(_ change: BaseChange) {
        switch change {
        case .none: return
        case .recorded(let entry, let id): manifest.entries[id] = entry
        case .forgotten(let id): manifest.entries[id] = nil
        }
        dirty = true
    }

    /// The fields of the base copy of a record, for field-level merges; nil if missing or unreadable.
    static func baseFields(_ id: RecordID, paths: CollectionPaths) -> Fields? {
        guard let bytes = try? FileSystem.readFile(paths.baseFile(id.fileName)) else { return nil }
        return try? JSONParser.parseObject(bytes)
    }
}

/// A manifest change whose base copy is already on disk.
enum BaseChange: Sendable {
    case none
    case recorded(BaseEntry, RecordID)
    case forgotten(RecordID)
}
