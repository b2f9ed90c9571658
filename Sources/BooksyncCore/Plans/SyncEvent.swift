/// What a pull or push did (or, with `--dry-run`, would do) to one record.
///
/// In Core because a plan already carries the events of the records that get
/// no step (invalid on one side); the engine appends what executing the steps did.
public enum SyncEventKind: Sendable, Equatable {
    case pulled(PullAction)
    case pushed(PushAction)
    /// Written (or deleted) by `seed`, whatever the remote held.
    case seeded(deleted: Bool)
    /// Left alone: both sides changed it (pull).
    case conflict(ConflictKind)
    /// Push found the remote changed since the base and the content differs.
    case remoteChangedSincePull
    case invalidLocal([RecordDiagnostic])
    case invalidRemote([RecordDiagnostic])
    /// The server refused the write for a reason other than a precondition.
    case rejected(String)
    /// The local file changed while booksync was working; it was left alone.
    case changedDuringSync
    /// A new local record that does not match the scope: not pushed.
    case outsideScope
}

/// One record's line in a pull or push report.
public struct SyncEvent: Sendable, Equatable {
    /// The record the event is about.
    public let id: RecordID
    /// What happened to the record.
    public let kind: SyncEventKind

    /// An event for the record `id`.
    public init(id: RecordID, kind: SyncEventKind) {
        self.id = id
        self.kind = kind
    }
}
