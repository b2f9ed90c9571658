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
    /// Parses command-line record names: an id (`dune`, or `dune/reviews/r1`
    /// with subcollections), or a file name (`dune.json`,
    /// `books/%C3%BCber.json`, `books/dune/reviews/r1.json`) whose encoded
    /// name decodes to one.
    package func recordIDs(_ arguments: [String]) throws(BooksyncError) -> [RecordID] {
        var ids: [RecordID] = []
        for argument in arguments {
            if argument.hasSuffix(".json") {
                ids.append(try recordID(ofFileArgument: argument))
                continue
            }
            do {
                ids.append(try rules.recordID(argument))
            } catch {
                throw .invalidArgument("'\(TerminalEscaping.abbreviate(argument))': \(error.message)")
            }
        }
        return ids
    }

    // MARK: resolve

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
        let store = ConflictStore(paths: paths)
        var base = BaseState(copies: baseCopies, manifest: try loadManifest(), configFingerprint: configFingerprint)
        var outcomes: [(RecordID, ResolveOutcome)] = []
        // Each record once: a second mention would find the settlement not yet
        // saved and clear the stored conflict before the save (see `BaseState`).
        var seen = Set<RecordID>()
        for id in ids where seen.insert(id).inserted {
            guard let remote = store.load(id, rules: rules, base: base.manifest) else {
                outcomes.append((id, .noConflict))
                continue
            }
            let file: String
            do {
                file = try paths.recordFile(id)
            } catch {
                outcomes.append((id, .invalidLocal([RecordDiagnostic(message: error.description)])))
                continue
            }
            // A link, FIFO or device in the record's place is reported like every
            // command reports it, and neither read, replaced nor removed.
            if let kind = try? FileSystem.stat(file).kind, kind != .regular {
                outcomes.append((id, .invalidLocal([RecordDiagnostic(message: FileSystemError.refusal(kind))])))
                continue
            }
            do throws(FileSystemError) {
                // What the file holds now: every write below replaces exactly
                // this, so an editor's save made meanwhile is never overwritten.
                let current: [UInt8]?
                do {
                    current = try FileSystem.readFile(file)
                } catch where error.isNotFound {
                    current = nil
                }
                let unchanged: ([UInt8]?) -> Bool = { $0 == current }
                // The file's editor hint stays first in whatever replaces it.
                let hint = rules.hint(inFile: current)
                switch choice {
                case .theirs:
                    if let record = remote.record, let revision = remote.revision {
                        // Theirs for conflicting fields; one-sided local changes are kept.
                        let localFields = current.flatMap { try? rules.parse($0).get() }
                        let fields = localFields.map { merge(id, base: base, local: $0, remote: record.fields).keepingRemote } ?? record.fields
                        if !dryRun, !(try FileSystem.replace(file, with: rules.fileBytes(fields, id: id, hint: hint), ifCurrent: unchanged)) {
                            outcomes.append((id, .changedMeanwhile))
                            continue
                        }
                        base.record(record, revision: revision)
                    } else {
                        if !dryRun, !(try FileSystem.remove(file, ifCurrent: unchanged)) {
                            outcomes.append((id, .changedMeanwhile))
                            continue
                        }
                        base.forget(id)
                    }
                    outcomes.append((id, .tookRemote))
                case .ours, .edited:
                    if let bytes = current {
                        let local: CanonicalRecord
                        switch rules.load(bytes, id: id) {
                        case .failure(let problems):
                            outcomes.append((id, .invalidLocal(problems.diagnostics)))
                            continue
                        case .success(let loaded):
                            local = loaded
                        }
                        // --ours: ours for conflicting fields; one-sided remote changes are kept.
                        // Without a flag the file as edited is the resolution, exactly.
                        if choice == .ours, let record = remote.record, !dryRun,
                           !(try FileSystem.replace(file, with: rules.fileBytes(merge(id, base: base, local: local.fields, remote: record.fields).keepingLocal, id: id, hint: hint),
                                                    ifCurrent: unchanged)) {
                            outcomes.append((id, .changedMeanwhile))
                            continue
                        }
                    }
                    if let record = remote.record, let revision = remote.revision {
                        base.record(record, revision: revision)
                    } else {
                        base.forget(id)
                    }
                    outcomes.append((id, .keptLocal))
                }
            } catch {
                try base.saveAndThrow(.io(error))  // keep what was settled before the failure
            }
            // The stored conflict is cleared once a save records the new base (`BaseState`).
            if !dryRun { try base.saveIfDue() }
        }
        if !dryRun { try base.finish() }
        return outcomes
    }

    /// The merge of a stored conflict with the file as resolve read it.
    private func merge(_ id: RecordID, base: BaseState, local: Fields, remote: Fields) -> RecordMerge {
        RecordMerge(base: baseCopies.fields(id, hash: base.manifest.entries[id]?.hash), local: local, remote: remote)
    }
}

/// A collection's base, loaded on first use (nil when it cannot be read).
private final class LazyBase {
    private let collection: CollectionDirectory
    private var loaded: Manifest??

    init(_ collection: CollectionDirectory) { self.collection = collection }

    var manifest: Manifest? {
        if let loaded { return loaded }
        let manifest = try? collection.loadManifest()
        loaded = .some(manifest)
        return manifest
    }
}
