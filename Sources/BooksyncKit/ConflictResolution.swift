import BooksyncCore

/// The three versions of one record, field by field (`booksync diff`).
public struct RecordDiff: Sendable, Equatable {
    public let id: RecordID
    public let state: SyncState
    /// Fields that are not the same in base, local and remote.
    public let fields: [FieldDifference]
    /// Whether each side has the record at all (a deleted side has no fields).
    public let inBase: Bool
    public let inLocal: Bool
    public let inRemote: Bool
}

/// What `diff` found: the records, and, when every changed record is asked
/// for, the files and documents that cannot be records at all.
public struct CollectionDiff: Sendable, Equatable {
    public let records: [RecordDiff]
    public let unusableFiles: [UnusableFile]
    public let unusableRemote: [UnusableRemoteDocument]

    /// Conflicts, invalid records or unusable files: exit status 1, as for `status`.
    public var needsAttention: Bool {
        !unusableFiles.isEmpty || !unusableRemote.isEmpty || records.contains { $0.state.needsAttention }
    }
}

extension SyncState {
    /// A conflict or an invalid side: what `status` and `diff` exit 1 for.
    public var needsAttention: Bool {
        switch self {
        case .conflict, .invalidLocal, .invalidRemote: true
        default: false
        }
    }
}

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
    /// Parses command-line record names: an id, or a file name (`dune.json`,
    /// `books/%C3%BCber.json`) whose encoded name decodes to one.
    public func recordIDs(_ arguments: [String]) throws(BooksyncError) -> [RecordID] {
        var ids: [RecordID] = []
        for argument in arguments {
            let name = FileSystem.split(argument).name
            if name.hasSuffix(".json"), let id = try? RecordID.fromFileName(name) {
                ids.append(id)
                continue
            }
            do {
                ids.append(try RecordID(argument))
            } catch {
                throw .invalidArgument("'\(TerminalEscaping.abbreviate(argument))': \(error.message)")
            }
        }
        return ids
    }

    // MARK: diff

    /// The field-level differences of the named records (all changed records,
    /// and the unusable files and documents, when none are named). Without a
    /// remote, the remote side is the base.
    public func diff(_ ids: [RecordID], remote: (any RemoteCollection)?, progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(BooksyncError) -> CollectionDiff {
        let manifest = try loadManifest()
        let scan = try await scanLocal()
        var snapshot: RemoteSnapshot?
        if let remote {
            let named = Set(ids)
            snapshot = try await readRemote(remote, manifest: manifest, needing: { named.isEmpty || named.contains($0) }, progress: progress)
        }
        let listing = snapshot?.listing
        let states = Dictionary(uniqueKeysWithValues: classify(scan: scan, manifest: manifest, remote: snapshot).records.map { ($0.id, $0.state) })
        let targets = ids.isEmpty ? states.filter { $0.value != .clean }.keys.sorted() : ids
        var diffs: [RecordDiff] = []
        for id in targets {
            guard let state = states[id] else {
                throw .invalidArgument("no record '\(TerminalEscaping.abbreviate(id.rawValue))' here, in the base or remotely")
            }
            let base = baseCopies.fields(id, hash: manifest.entries[id]?.hash)
            let local = scan.files[id] == nil ? nil : loadLocalFields(id)
            let remoteFields: Fields?
            if let listing, let revision = listing.revisions[id] {
                remoteFields = revision == manifest.entries[id]?.revision ? base : snapshot?.bodies[id]?.record?.fields
            } else if listing != nil {
                remoteFields = nil
            } else {
                remoteFields = base
            }
            diffs.append(RecordDiff(
                id: id, state: state, fields: FieldDiff.compare(base: base, local: local, remote: remoteFields),
                inBase: base != nil, inLocal: local != nil, inRemote: remoteFields != nil))
        }
        return CollectionDiff(
            records: diffs, unusableFiles: ids.isEmpty ? scan.unusableFiles : [],
            unusableRemote: ids.isEmpty ? listing?.unusable ?? [] : [])
    }

    // MARK: resolve

    /// The conflict that pull stored for `id` and resolve has not settled yet,
    /// nil when there is none. Push names `resolve` for such a record: sending
    /// the user back to pull would only report the same conflict again. The
    /// kind comes from the two sides (field names are not known here).
    public func unresolvedConflict(_ id: RecordID) -> ConflictKind? {
        guard let remote = ConflictStore(paths: paths).load(id, rules: rules) else { return nil }
        switch (FileSystem.exists(paths.recordFile(id.fileName)), remote.record != nil) {
        case (true, true): return .bothModified(fields: [])
        case (true, false): return .modifiedLocallyDeletedRemotely
        case (false, true): return .deletedLocallyModifiedRemotely
        case (false, false): return nil  // deleted on both sides: push simply forgets it
        }
    }

    /// Settles conflicts that pull stored, without contacting the remote: the
    /// base becomes the remote version pull saw, so the next push is guarded by
    /// that revision and a remote that moved again is never overwritten.
    public func resolve(_ ids: [RecordID], choice: ResolveChoice, onStaleLock: (Int32) -> Void = { _ in }) throws(BooksyncError) -> [(RecordID, ResolveOutcome)] {
        let lock = try self.lock(onStaleLock: onStaleLock)
        defer { lock.release() }
        let store = ConflictStore(paths: paths)
        var base = BaseState(copies: baseCopies, manifest: try loadManifest(), configFingerprint: configFingerprint)
        var outcomes: [(RecordID, ResolveOutcome)] = []
        for id in ids {
            guard let remote = store.load(id, rules: rules) else {
                outcomes.append((id, .noConflict))
                continue
            }
            let file = paths.recordFile(id.fileName)
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
                switch choice {
                case .theirs:
                    if let record = remote.record, let revision = remote.revision {
                        // Theirs for conflicting fields; one-sided local changes are kept.
                        let fields = preferredMerge(id, baseHash: base.manifest.entries[id]?.hash, remote: record.fields, preferLocal: false) ?? record.fields
                        guard try FileSystem.replace(file, with: rules.canonicalBytes(fields), ifCurrent: unchanged) else {
                            outcomes.append((id, .changedMeanwhile))
                            continue
                        }
                        base.record(record, revision: revision)
                    } else {
                        guard try FileSystem.remove(file, ifCurrent: unchanged) else {
                            outcomes.append((id, .changedMeanwhile))
                            continue
                        }
                        base.forget(id)
                    }
                    outcomes.append((id, .tookRemote))
                case .ours, .edited:
                    if let bytes = current {
                        if case .failure(let problems) = rules.load(bytes, id: id) {
                            outcomes.append((id, .invalidLocal(problems.diagnostics)))
                            continue
                        }
                        // --ours: ours for conflicting fields; one-sided remote changes are kept.
                        // Without a flag the file as edited is the resolution, exactly.
                        if choice == .ours, let record = remote.record,
                           let merged = preferredMerge(id, baseHash: base.manifest.entries[id]?.hash, remote: record.fields, preferLocal: true),
                           !(try FileSystem.replace(file, with: rules.canonicalBytes(merged), ifCurrent: unchanged)) {
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
                try store.clear(id)
            } catch {
                try base.saveAndThrow(.io(error))  // keep what was settled before the failure
            }
        }
        try base.finish()
        return outcomes
    }
}
