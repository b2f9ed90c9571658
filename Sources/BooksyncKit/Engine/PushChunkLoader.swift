import BooksyncCore

/// Loads push's writes a chunk at a time, when the chunk is about to be sent.
/// It holds only the collection's rules and paths, so chunks load at once.
struct PushChunkLoader: Sendable {
    let rules: RecordRules
    let paths: CollectionPaths

    /// The writes for one chunk of planned push steps, loaded when the chunk
    /// is about to be sent, so a push holds the records of the chunks in
    /// flight, not of the whole collection. Records parsed by the scan are
    /// sent as scanned; the others (the scan keeps only a few, and the stat
    /// cache proves changes without parsing) are read now, on several threads.
    func load(_ planned: [PushStep], scanned: [RecordID: CanonicalRecord]) -> LoadedChunk {
        let loaded = ParallelMap.map(planned, chunkSize: 64) { step -> PushLoad in
            let id = step.id
            let record: CanonicalRecord
            switch step.action {
            case .delete(let revision):
                return .write(.delete(id, baseRevision: revision))
            case .remove:
                return .write(.remove(id))
            case .adopt, .forget:
                return .nothing
            case .create, .update, .overwrite:
                if let scannedRecord = scanned[id] {
                    record = scannedRecord
                } else {
                    guard let bytes = try? FileSystem.readFile(paths.recordFile(id)) else { return .event(.changedDuringSync) }
                    switch rules.load(bytes, id: id) {
                    case .failure(let problems): return .event(.invalidLocal(problems.diagnostics))
                    case .success(let loaded): record = loaded
                    }
                }
            }
            switch step.action {
            case .update(let revision): return .write(.update(record, baseRevision: revision))
            // A scoped collection publishes only what its scope covers.
            case .overwrite: return rules.isInScope(record) ? .write(.overwrite(record)) : .event(.outsideScope)
            default: return .write(.create(record))
            }
        }
        var chunk = LoadedChunk()
        for (step, outcome) in zip(planned, loaded) {
            switch outcome {
            case .write(let write): chunk.writes.append(write)
            case .nothing: break
            case .event(let kind): chunk.events.append(SyncEvent(id: step.id, kind: kind))
            }
        }
        return chunk
    }
}

/// What loading one planned push step gave.
fileprivate enum PushLoad: Sendable {
    case write(RemoteWrite)
    case nothing
    /// The record cannot be sent (changed away, invalid).
    case event(SyncEventKind)
}

/// One chunk of planned push steps, loaded: its writes (each carries the
/// record it sends), and the steps that could not be loaded.
struct LoadedChunk: Sendable {
    var writes: [RemoteWrite] = []
    var events: [SyncEvent] = []
}
