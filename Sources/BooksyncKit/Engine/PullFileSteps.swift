import BooksyncCore

/// Pull's steps on the record files, one record at a time: the journal entry
/// of what a step will write, then the write, removal, base change or stored
/// conflict itself. A write or removal checks the file against what the scan
/// saw at the moment it replaces it, the steps that only record (adopt,
/// forget, keep the local side, store a conflict) check it first, and a record
/// that left the scope keeps its file whatever it holds. It holds only the
/// collection's rules and paths, so the steps of different records run at once.
struct PullFileSteps: Sendable {
    let rules: RecordRules
    let paths: CollectionPaths

    /// The file names (lowercased) of more than one of `plan`'s steps: the
    /// records that could be one file on a case-insensitive or normalizing
    /// file system (macOS). Found by sorting 8-byte hashes of the names,
    /// then counting only the names whose hash repeats: a dictionary of
    /// every name held about 100 bytes a step while a pull of a million
    /// changes also held the base and the listing.
    static func collidingNames(in plan: PullPlan) -> Set<String> {
        func eachName(_ body: (String) -> Void) {
            for chunk in plan.chunks { for step in plan.steps(in: chunk) { body(step.id.fileName.lowercased()) } }
        }
        var hashes: [Int] = []
        hashes.reserveCapacity(plan.steps)
        eachName { hashes.append($0.hashValue) }
        hashes.sort()
        var repeated = Set<Int>()
        for i in hashes.indices.dropFirst() where hashes[i] == hashes[i - 1] { repeated.insert(hashes[i]) }
        hashes = []
        guard !repeated.isEmpty else { return [] }
        var counts: [String: Int] = [:]
        eachName { name in if repeated.contains(name.hashValue) { counts[name, default: 0] += 1 } }
        return Set(counts.compactMap { $0.value > 1 ? $0.key : nil })
    }

    /// The journal entry of a step that writes or removes a record file
    /// (`PullJournal`): what the file will hold and the base change it
    /// brings; nil for steps that leave the files alone. Pure.
    func journalEntry(_ step: PullStep, document: RemoteDocument?, revision: String?) -> PullJournal.Entry? {
        switch step.action {
        case .write:
            guard let record = document?.record, let revision else { return nil }
            return PullJournal.Entry(fileHash: record.hash, change: BaseState.copy(record, revision: revision))
        case .merge(let fields):
            guard let record = document?.record, let revision else { return nil }
            return PullJournal.Entry(fileHash: SHA256.contentHash(rules.canonicalBytes(fields, id: step.id)),
                                     change: BaseState.copy(record, revision: revision))
        case .delete:
            return PullJournal.Entry(fileHash: nil, change: .forgotten(step.id))
        case .adopt, .forget, .leaveScope, .keepLocal, .conflict:
            return nil
        }
    }

    /// Carries out one pull step on the files; returns what happened and what
    /// the manifest must now say.
    /// `baseRevision`: the base's revision of the record, stored with a conflict;
    /// `prepared`: the base change `journalEntry` made for it, not made twice.
    func apply(_ step: PullStep, scanned: LocalFileState?, read: LocalRead?, document: RemoteDocument?, revision: String?,
               baseRevision: String?, prepared: BaseChange?) -> Result<(SyncEventKind, BaseChange), BooksyncError> {
        let id = step.id
        // Folders on the way to a subcollection record are checked (never a
        // link), and created for a write.
        let file: String
        do {
            switch step.action {
            case .write, .merge: file = try paths.recordFileCreatingFolders(id)
            default: file = try paths.recordFile(id)
            }
        } catch {
            // A link or a file where a subcollection folder belongs makes this
            // record invalid here (named in the report), not the whole pull.
            guard error.unsafeKind == nil else { return .success((.invalidLocal([RecordDiagnostic(message: error.description)]), .none)) }
            return .failure(.io(error))
        }
        // The file must still be what the scan saw, or a concurrent edit would be
        // lost: writes and removals check it at the moment of replacement (see
        // `FileSystem.replace(_:with:ifCurrent:)`); the other steps only here.
        let stillScanned: ([UInt8]?) -> Bool = { bytes in self.matchesScan(bytes, scanned, read: read, id: id) }
        switch step.action {
        case .write, .delete, .merge, .leaveScope: break  // the file is kept whatever it holds
        default: guard stillScanned(try? FileSystem.readFile(file)) else { return .success((.changedDuringSync, .none)) }
        }
        let change: BaseChange
        do {
            switch step.action {
            case .write:
                guard let record = document?.record, let revision else { return .success((.conflict(.remoteContentUnknown), .none)) }
                guard try rules.replaceFile(file, id: id, with: record.fields, canonical: record.canonicalBytes, ifCurrent: stillScanned) else {
                    return .success((.changedDuringSync, .none))
                }
                change = prepared ?? BaseState.copy(record, revision: revision)
            case .delete:
                guard try FileSystem.remove(file, ifCurrent: stillScanned) else { return .success((.changedDuringSync, .none)) }
                change = .forgotten(id)
            case .adopt:
                guard let record = document?.record, let revision else { return .success((.conflict(.remoteContentUnknown), .none)) }
                change = BaseState.copy(record, revision: revision)
            case .forget, .leaveScope:
                change = .forgotten(id)
            case .merge(let fields):
                guard let record = document?.record, let revision else { return .success((.conflict(.remoteContentUnknown), .none)) }
                guard try rules.replaceFile(file, id: id, with: fields, ifCurrent: stillScanned) else {
                    return .success((.changedDuringSync, .none))
                }
                change = prepared ?? BaseState.copy(record, revision: revision)
            case .keepLocal:
                if let record = document?.record, let revision {
                    change = BaseState.copy(record, revision: revision)
                } else {
                    change = .forgotten(id)
                }
            case .conflict(let kind):
                guard kind != .remoteContentUnknown else { return .success((.conflict(kind), .none)) }
                try ConflictStore(paths: paths).save(id, record: document?.record, revision: document == nil ? nil : revision,
                                                    baseRevision: baseRevision)
                return .success((.conflict(kind), .none))
            }
            // Any earlier conflict of this record is settled once the base records it (`BaseState`).
        } catch {
            return .failure(.io(error))
        }
        return .success((.pulled(step.action), change))
    }

    /// True if `bytes` (nil: no file) are the content (or absence) the scan
    /// recorded. Bytes the classification already read and parsed (`read`)
    /// are not parsed again.
    private func matchesScan(_ bytes: [UInt8]?, _ scanned: LocalFileState?, read: LocalRead?, id: RecordID) -> Bool {
        switch (scanned, bytes) {
        case (nil, nil): return true
        case (nil, _?), (_?, nil): return false
        case (.invalid?, _?): return false
        case (.valid(let hash)?, let bytes?):
            if SHA256.contentHash(bytes) == hash { return true }  // canonical, as booksync wrote it
            let fields: Fields
            if let read, read.bytes == bytes {
                fields = read.fields
            } else {
                guard case .success(let parsed) = rules.parse(bytes) else { return false }
                fields = parsed
            }
            return SHA256.contentHash(rules.canonicalBytes(fields, id: id)) == hash
        }
    }
}
