import BooksyncCore

/// `resolve`'s engine: settles the conflicts pull stored, one record at a
/// time, in the stages every command has (gather, decide, execute and
/// record), without the remote.
///
/// Not a `SyncGather`: what resolve compares is already on disk. The remote
/// side is the one pull stored (`ConflictStore`), the local side the file as
/// it is now, and the base the one they conflict over; a listing or a scan of
/// the whole collection would add reads and nothing to decide by.
struct ConflictResolver {
    let collection: CollectionDirectory
    let choice: ResolveChoice
    let dryRun: Bool
    /// The base being recorded; a settled record's stored conflict is cleared
    /// once a save records it (`BaseState`).
    var base: BaseState
    private let store: ConflictStore

    init(collection: CollectionDirectory, choice: ResolveChoice, dryRun: Bool) throws(BooksyncError) {
        self.collection = collection
        self.choice = choice
        self.dryRun = dryRun
        store = ConflictStore(paths: collection.paths)
        base = BaseState(copies: collection.baseCopies, manifest: try collection.manifestFile.load(), configFingerprint: collection.configFingerprint)
    }

    /// Settles each record of `ids` once and saves the base.
    mutating func run(_ ids: [RecordID]) throws(BooksyncError) -> [(RecordID, ResolveOutcome)] {
        var outcomes: [(RecordID, ResolveOutcome)] = []
        // Each record once: a second mention would find the settlement not yet
        // saved and clear the stored conflict before the save (see `BaseState`).
        var seen = Set<RecordID>()
        for id in ids where seen.insert(id).inserted {
            let outcome: ResolveOutcome
            do throws(FileSystemError) {
                switch try gather(id) {
                case .settled(let early): outcome = early
                case .conflict(let conflict): outcome = try settle(conflict)
                }
            } catch {
                try base.saveAndThrow(.io(error))  // keep what was settled before the failure
            }
            outcomes.append((id, outcome))
            if !dryRun, outcome == .keptLocal || outcome == .tookRemote { try base.saveIfDue() }
        }
        if !dryRun { try base.finish() }
        return outcomes
    }

    /// One stored conflict and the file it is settled in, as read now.
    private struct Conflict {
        let id: RecordID
        let file: String
        /// The remote side pull stored.
        let remote: ConflictStore.RemoteSide
        /// What the file holds now (nil: no file): every write replaces exactly
        /// this, so an editor's save made meanwhile is never overwritten.
        let current: [UInt8]?
    }

    private enum Gathered {
        case conflict(Conflict)
        /// Nothing to settle: the outcome is known already.
        case settled(ResolveOutcome)
    }

    /// The stored remote side and the file; an outcome at once when there is
    /// no conflict or the file cannot be settled.
    private func gather(_ id: RecordID) throws(FileSystemError) -> Gathered {
        guard let remote = store.load(id, rules: collection.rules, base: base.manifest) else { return .settled(.noConflict) }
        let file: String
        do {
            file = try collection.paths.recordFile(id)
        } catch {
            return .settled(.invalidLocal([RecordDiagnostic(message: error.description)]))
        }
        // A link, FIFO or device in the record's place is reported like every
        // command reports it, and neither read, replaced nor removed.
        if let kind = try? FileSystem.stat(file).kind, kind != .regular {
            return .settled(.invalidLocal([RecordDiagnostic(message: FileSystemError.refusal(kind))]))
        }
        let current: [UInt8]?
        do {
            current = try FileSystem.readFile(file)
        } catch where error.isNotFound {
            current = nil
        }
        return .conflict(Conflict(id: id, file: file, remote: remote, current: current))
    }

    /// Writes the resolution (not in a dry run) and records it in the base.
    private mutating func settle(_ conflict: Conflict) throws(FileSystemError) -> ResolveOutcome {
        let (id, file, remote, current) = (conflict.id, conflict.file, conflict.remote, conflict.current)
        let rules = collection.rules
        let unchanged: ([UInt8]?) -> Bool = { $0 == current }
        // The file's editor hint stays first in whatever replaces it.
        let hint = rules.hint(inFile: current)
        switch choice {
        case .theirs:
            if let record = remote.record, let revision = remote.revision {
                // Theirs for conflicting fields; one-sided local changes are kept.
                let localFields = current.flatMap { try? rules.parse($0).get() }
                let fields = localFields.map { merge(id, local: $0, remote: record.fields).keepingRemote } ?? record.fields
                if !dryRun, !(try FileSystem.replace(file, with: rules.fileBytes(fields, id: id, hint: hint), ifCurrent: unchanged)) {
                    return .changedMeanwhile
                }
                base.record(record, revision: revision)
            } else {
                if !dryRun, !(try FileSystem.remove(file, ifCurrent: unchanged)) { return .changedMeanwhile }
                base.forget(id)
            }
            return .tookRemote
        case .ours, .edited:
            if let bytes = current {
                let local: CanonicalRecord
                switch rules.load(bytes, id: id) {
                case .failure(let problems): return .invalidLocal(problems.diagnostics)
                case .success(let loaded): local = loaded
                }
                // --ours: ours for conflicting fields; one-sided remote changes are kept.
                // Without a flag the file as edited is the resolution, exactly.
                if choice == .ours, let record = remote.record, !dryRun {
                    let merged = rules.fileBytes(merge(id, local: local.fields, remote: record.fields).keepingLocal, id: id, hint: hint)
                    if !(try FileSystem.replace(file, with: merged, ifCurrent: unchanged)) { return .changedMeanwhile }
                }
            }
            if let record = remote.record, let revision = remote.revision {
                base.record(record, revision: revision)
            } else {
                base.forget(id)
            }
            return .keptLocal
        }
    }

    /// The merge of a stored conflict with the file as resolve read it.
    private func merge(_ id: RecordID, local: Fields, remote: Fields) -> RecordMerge {
        RecordMerge(base: collection.baseCopies.fields(id, hash: base.manifest.entries[id]?.hash), local: local, remote: remote)
    }
}
