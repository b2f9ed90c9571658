import BooksyncCore

/// A document of the remote collection, decoded into a record when it can be one.
public struct RemoteDocument: Sendable, Equatable {
    public enum Content: Sendable, Equatable {
        case record(Record)
        /// The document cannot become a record file (schema, unrepresentable values).
        case invalid([RecordDiagnostic])
    }

    public let id: RecordID
    /// Firestore `updateTime`, exactly as the server wrote it.
    public let revision: String
    public let content: Content

    public init(id: RecordID, revision: String, content: Content) {
        self.id = id
        self.revision = revision
        self.content = content
    }

    public var record: Record? {
        if case .record(let record) = content { return record }
        return nil
    }
}

/// A remote document whose name cannot be a record id (e.g. `..`).
public struct UnusableRemoteDocument: Error, Sendable, Equatable {
    public let name: String
    public let message: String
}

/// Revisions of every document in the remote collection, without bodies.
public struct RemoteListing: Sendable, Equatable {
    public var revisions: [RecordID: String]
    public var unusable: [UnusableRemoteDocument]

    public init(revisions: [RecordID: String] = [:], unusable: [UnusableRemoteDocument] = []) {
        self.revisions = revisions
        self.unusable = unusable
    }
}

/// One guarded write. Every write carries a precondition, so a concurrent change
/// on the server is never overwritten.
public enum RemoteWrite: Sendable, Equatable {
    /// Precondition: the document does not exist.
    case create(Record)
    /// Precondition: the document's revision is `baseRevision`.
    case update(Record, baseRevision: String)
    /// Precondition: the document's revision is `baseRevision`.
    case delete(RecordID, baseRevision: String)

    public var id: RecordID {
        switch self {
        case .create(let record), .update(let record, _): record.id
        case .delete(let id, _): id
        }
    }
}

/// What became of one write.
public enum WriteOutcome: Sendable, Equatable {
    /// Applied; the new revision (nil for deletes).
    case written(revision: String?)
    /// The precondition failed: the remote changed since the base.
    case preconditionFailed
    /// The server refused the write for another reason (the message says why).
    case rejected(String)
}

/// A remote collection booksync can sync with. Firestore is the first; a second
/// backend is a new type, not a change to the engine.
public protocol RemoteCollection: Sendable {
    /// Where this remote is, for messages (`firestore demo/(default) books`).
    var displayName: String { get }
    /// Revisions of every document, following pages to the end; no bodies.
    func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing
    /// Every document with its body: fewer requests than listing and fetching
    /// when nearly every body is needed anyway (a first pull). Each answer's
    /// documents go to `batch` as soon as it arrives, so the caller can write
    /// them while the next answer is on its way.
    func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                       progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError)
    /// Bodies of the given documents; ids that do not exist are absent from the result.
    func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument]
    /// Applies guarded writes; `atomic` applies all or none.
    ///
    /// Chunking is the caller's: the push pipeline passes at most
    /// `FirestoreLimits.maximumWritesPerRequest` writes per call, a few calls
    /// in flight, and records each call's outcomes as they come. A remote
    /// sends what fits in one request as one request; it may split a larger
    /// call (FirestoreRemote does, at Firestore's limits), but never an atomic one.
    func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome]
}

/// A remote failure after retries, phrased for users. Never contains a token.
public enum RemoteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No answer (connection refused, reset, timeouts) after every retry.
    case unreachable(endpoint: String, detail: String, attempts: Int)
    /// The server refused a request (status, Firestore status name, its message).
    case rejected(during: String, status: Int, code: String, message: String)
    /// The answer could not be understood.
    case malformedResponse(during: String, detail: String)
    /// No usable credentials.
    case authentication(String)
    /// Settings that cannot work (bad emulator host, plain HTTP to a remote host).
    case configuration(String)
    /// The command's deadline for remote work ran out.
    /// `lastProblem` is why the last try failed: the cause, not only that time ran out.
    case deadlineExceeded(during: String, seconds: Int, lastProblem: String)

    public var description: String {
        switch self {
        case .unreachable(let endpoint, let detail, let attempts):
            "cannot reach Firestore at \(endpoint) (\(detail)) after \(attempts) attempt\(attempts == 1 ? "" : "s")"
        case .rejected(let during, let status, let code, let message):
            "Firestore refused to \(during): \(status) \(code)\(message.isEmpty ? "" : ": " + message)"
        case .malformedResponse(let during, let detail):
            "Firestore's answer to \(during) could not be read: \(detail)"
        case .authentication(let message):
            message
        case .configuration(let message):
            message
        case .deadlineExceeded(let during, let seconds, let lastProblem):
            "gave up trying to \(during) after \(seconds) s of retries" + (lastProblem.isEmpty ? "" : ": " + lastProblem)
        }
    }
}
