import BooksyncCore

/// The gather step's result for `diff` and the change query's answers: the
/// records classified, with the local files it had to read to merge.
struct Classification: Sendable {
    /// Sorted by id.
    var records: [ClassifiedRecord]
    /// The local files read (once) for a field merge, by id. Pull's safety
    /// check at replace time compares the file with these bytes, so it need
    /// not parse the file again.
    var localReads: [RecordID: LocalRead]
}

/// A local record file as read for a merge: its bytes and their fields.
struct LocalRead: Sendable {
    let bytes: [UInt8]
    let fields: Fields

    /// The file of `id` in `collection`, parsed; nil when it cannot be read or parsed.
    init?(_ id: RecordID, in collection: CollectionDirectory) {
        guard let bytes = try? FileSystem.readFile(collection.paths.recordFile(id)),
              case .success(let fields) = collection.rules.parse(bytes) else { return nil }
        self.bytes = bytes
        self.fields = fields
    }
}

/// The gather stage every three-way command shares — status, diff, pull,
/// push, and through push plan, apply and seed: the base narrowed to the
/// pathspecs (loaded by the command, which knows which base it needs) and
/// the files scanned against it (`init(_:manifest:scope:scanning:)`, the one
/// place a command's scan is set up), the remote read (`readRemote`,
/// SyncGather+Remote.swift), the pathspecs matched (`requireMatches`,
/// SyncScope.swift), and the records that can differ classified by the one
/// rule table, one at a time (`eachDiffering`; `classify` for named ones).
///
/// `SyncEngine` holds one for pull and push, which plan from it; `status`
/// and `diff` (SyncGather+Status.swift, SyncGather+Diff.swift) are its
/// read-only ends, which stop after it and record nothing. A `Sendable`
/// value, so work that runs on several threads at once can classify
/// through it.
struct SyncGather: Sendable {
    /// The collection the files and the base are in.
    let collection: CollectionDirectory
    /// The base, narrowed to `scope`: what every record is classified against.
    var manifest: Manifest
    /// The files, scanned against `manifest`.
    var scan: LocalScan
    /// The pathspecs (everything without them).
    let scope: RecordScope

    /// How records look in this collection (id field, schema, scope).
    var rules: RecordRules { collection.rules }

    /// Classifies the records `ids` (clean ones too), sorted by id. Without a
    /// snapshot (`--offline`, push) the remote side counts as unchanged. A
    /// record both sides modified is read and merged here, once: the merge
    /// goes into the class and into the `ClassifiedRecord`, where the planner
    /// finds it.
    func classify(remote snapshot: RemoteSnapshot?, only ids: [RecordID]) -> Classification {
        var result = Classification(records: [], localReads: [:])
        result.records.reserveCapacity(ids.count)
        for id in ids { result.records.append(classifiedRecord(id, remote: snapshot, localReads: &result.localReads)) }
        result.records.sort { $0.id < $1.id }
        return result
    }

    /// The records that are not clean, classified, in id order: what `status`
    /// and `diff` list (see `eachDiffering`).
    func classifyDiffering(remote snapshot: RemoteSnapshot?) -> Classification {
        var result = Classification(records: [], localReads: [:])
        eachDiffering(remote: snapshot, localReads: &result.localReads) { result.records.append($0) }
        return result
    }

    /// Calls `body` with each record that is not clean, classified, in id
    /// order, one at a time: only the records that can differ from the base
    /// are classified (`DifferingRecords`), and none is kept here, so a pull
    /// of a million changes plans each as it comes instead of holding a
    /// million classified records beside its plan. The records `skipping`
    /// names are left out (a pull's change query settled them); what was
    /// read for a merge goes into `localReads`.
    func eachDiffering(remote snapshot: RemoteSnapshot?, skipping: ((RecordID) -> Bool)? = nil,
                       localReads: inout [RecordID: LocalRead], _ body: (ClassifiedRecord) -> Void) {
        DifferingRecords(scan: scan, manifest: manifest, listing: snapshot?.listing).walk { id in
            if let skipping, skipping(id) { return true }
            let record = classifiedRecord(id, remote: snapshot, localReads: &localReads)
            if record.state != .clean { body(record) }
            return true
        }
    }

    /// The class of the record `id` (see `classify`). A record both sides
    /// modified is read and merged here; what was read goes into `localReads`.
    func classifiedRecord(_ id: RecordID, remote snapshot: RemoteSnapshot?, localReads: inout [RecordID: LocalRead]) -> ClassifiedRecord {
        // A scan without hashes has none to compare with the remote's.
        precondition(scan.files.keepsHashes || snapshot == nil, "a scan without hashes classified against a remote")
        let base = manifest.entries[id]
        let local: LocalVersion
        switch scan.files[id] {
        case nil: local = .absent
        case .invalid(let diagnostics)?: local = .invalid(diagnostics)
        case .valid(let hash)?: local = .present(hash: hash)
        }
        var merge: RecordMerge?
        let state = SyncRules.classify(base: base, local: local, remote: snapshot?.version(id) ?? .notChecked,
                                       localInScope: { rules.scope == nil || LocalRead(id, in: collection).map { rules.isInScope(fields: $0.fields, id: id) } ?? true }) {
            guard let remoteFields = snapshot?.bodies[id]?.record?.fields, let read = LocalRead(id, in: collection) else { return nil }
            localReads[id] = read
            merge = RecordMerge(base: collection.baseCopies.fields(id, hash: base?.hash), local: read.fields, remote: remoteFields)
            return merge?.outcome
        }
        return ClassifiedRecord(id: id, state: state, base: base, remoteRevision: snapshot?.listing.revisions[id], merge: merge)
    }

    /// The class of the record `id` against the base alone (no remote, so
    /// nothing is merged and nothing read for a merge).
    func classifiedRecord(_ id: RecordID) -> ClassifiedRecord {
        var noReads: [RecordID: LocalRead] = [:]
        return classifiedRecord(id, remote: nil, localReads: &noReads)
    }

    /// The valid local records without a base entry, when the collection
    /// has a scope (`findLeftScope` reads them by name); none without one.
    var unbasedLocal: [RecordID] {
        guard rules.scope != nil else { return [] }
        return scan.files.keys.filter { id in
            guard manifest.entries[id] == nil, case .valid? = scan.files[id] else { return false }
            return true
        }
    }
}
