import BooksyncCore

/// A document of the remote collection, decoded into a record when it can be one.
@_spi(Remote) public struct RemoteDocument: Sendable, Equatable {
    /// What the body decoded to. An invalid document is still listed and
    /// classified (shown as invalid, never pulled), not dropped.
    public enum Content: Sendable, Equatable {
        /// The body as a record, ready to be written as a record file.
        case record(CanonicalRecord)
        /// The document cannot become a record file (schema, unrepresentable values).
        case invalid([RecordDiagnostic])
    }

    /// The record id: the document's name within the collection.
    public let id: RecordID
    /// Firestore `updateTime`, exactly as the server wrote it.
    public let revision: String
    /// The decoded body, or why it cannot be a record.
    public let content: Content
    /// The change field's timestamp as the server wrote it (config
    /// `"changeField"`), kept out of the record; nil without one.
    public let changeTime: String?

    /// A document; `revision` must be the string `listRevisions` reports for it.
    public init(id: RecordID, revision: String, content: Content, changeTime: String? = nil) {
        self.id = id
        self.revision = revision
        self.content = content
        self.changeTime = changeTime
    }

    /// The record, or nil when the document is invalid.
    public var record: CanonicalRecord? {
        if case .record(let record) = content { return record }
        return nil
    }
}

/// A remote document whose name cannot be a record id (e.g. `..`).
///
/// Reported to the user and otherwise skipped: it has no record file to sync with.
public struct UnusableRemoteDocument: Error, Sendable, Equatable {
    /// The document's name, for messages (FirestoreRemote scrubs tokens from it).
    public let name: String
    /// Why it cannot be a record id, as a sentence fragment for the user.
    public let message: String
}

/// Revisions of every document in the remote collection, without bodies.
@_spi(Remote) public struct RemoteListing: Sendable, Equatable {
    /// Each document's revision (Firestore `updateTime`). The engine only
    /// compares it for equality with the base's and sends it back as a write
    /// precondition, so any opaque string that changes with every write works.
    /// Held compactly (`RemoteRevisions`): a pull holds every listed name.
    public var revisions: RemoteRevisions
    /// Documents whose names cannot be record ids; not in `revisions`.
    public var unusable: [UnusableRemoteDocument]
    /// The server's read time of the listing's first answer, when it said
    /// one: a change mark is taken from it (`ChangeMark.after`).
    public var readTime: String?

    /// A listing (empty by default, for building one page by page).
    public init(revisions: RemoteRevisions = [:], unusable: [UnusableRemoteDocument] = [], readTime: String? = nil) {
        self.revisions = revisions
        self.unusable = unusable
        self.readTime = readTime
    }
}

/// The documents changed since a change mark, and how many the collection
/// holds now (see `RemoteCollection.changes(since:progress:)`).
@_spi(Remote) public struct RemoteChanges: Sendable, Equatable {
    /// Every document whose change field is at or after the mark, with its body.
    public var documents: [RecordID: RemoteDocument]
    /// Changed documents whose names cannot be record ids.
    public var unusable: [UnusableRemoteDocument]
    /// The number of documents in the collection, counted by the server;
    /// nil when it was not asked (a live sync's poll between counts).
    public var count: Int?
    /// The server's read time of the query's first answer.
    public var readTime: String?

    /// The changes found by one query and count.
    public init(documents: [RecordID: RemoteDocument], unusable: [UnusableRemoteDocument] = [], count: Int?, readTime: String?) {
        self.documents = documents
        self.unusable = unusable
        self.count = count
        self.readTime = readTime
    }
}

/// One guarded write. Every write carries a precondition, so a concurrent change
/// on the server is never overwritten.
@_spi(Remote) public enum RemoteWrite: Sendable, Equatable {
    /// Precondition: the document does not exist.
    case create(CanonicalRecord)
    /// Precondition: the document's revision is `baseRevision`.
    case update(CanonicalRecord, baseRevision: String)
    /// Precondition: the document's revision is `baseRevision`.
    case delete(RecordID, baseRevision: String)
    /// No precondition: the document becomes the record (`seed`).
    case overwrite(CanonicalRecord)
    /// No precondition: the document is deleted if it exists (`seed --delete`).
    case remove(RecordID)

    /// The record the write is for; outcomes are keyed by it.
    public var id: RecordID {
        switch self {
        case .create(let record), .update(let record, _), .overwrite(let record): record.id
        case .delete(let id, _), .remove(let id): id
        }
    }

    /// The record the write sends; nil for a delete or a remove.
    var record: CanonicalRecord? {
        switch self {
        case .create(let record), .update(let record, _), .overwrite(let record): record
        case .delete, .remove: nil
        }
    }

    /// True for a write that deletes the document (a delete or a remove).
    var isDelete: Bool {
        switch self {
        case .delete, .remove: true
        case .create, .update, .overwrite: false
        }
    }
}

/// What became of one write.
@_spi(Remote) public enum WriteOutcome: Sendable, Equatable {
    /// Applied; the new revision (nil for deletes).
    case written(revision: String?)
    /// The precondition failed: the remote changed since the base.
    case preconditionFailed
    /// The server refused the write for another reason (the message says why).
    case rejected(String)
}

/// A remote collection booksync can sync with. Firestore is the first; a second
/// backend is a new type, not a change to the engine.
///
/// This is the whole interface the engine talks to. What every conforming
/// type must guarantee:
/// - Revisions are opaque strings (Firestore `updateTime`) that change with
///   every write; the same string appears in listings, in documents and in
///   `RemoteWrite` preconditions.
/// - `progress` closures receive the number of documents just done (an
///   increment, not a total) and may be called from any thread or task.
/// - Errors are `RemoteError` sentences with no token in them. When the
///   calling task is cancelled, throw (any case): the engine reports the
///   command as interrupted.
@_spi(Remote) public protocol RemoteCollection: Sendable {
    /// Where this remote is, for messages (`firestore demo/(default) books`).
    var displayName: String { get }
    /// The target a base synced with this remote is recorded against; nil for
    /// a remote that cannot say (test doubles), whose base is never checked.
    var identity: TargetIdentity? { get }
    /// Revisions of every document, following pages to the end; no bodies.
    /// Names that cannot be record ids go to `unusable`, never silently dropped.
    func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing
    /// The same, set into `revisions` (empty, and keyed like the base: see
    /// `RemoteRevisions`) as each answer arrives, so that a listing of a
    /// million names the base holds does not store each name again.
    func listRevisions(into revisions: RemoteRevisions, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing
    /// Revisions of at least the documents whose raw ids start with one of
    /// `prefixes` (`dune`, `dune/reviews/`): a folder or glob pathspec's
    /// listing. It may list more (the engine narrows), never fewer.
    func listRevisions(prefixes: [String], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing
    /// Whether the collection holds no document at all (the emptied-target
    /// guard of a scoped pull, which did not list everything).
    func isEmpty() async throws(RemoteError) -> Bool
    /// How many documents the collection holds (with its synced
    /// subcollections), or nil when this remote cannot count without listing
    /// everything; progress asks it once, only for a long first pull.
    func documentCount() async throws(RemoteError) -> Int?
    /// Every document with its body: fewer requests than listing and fetching
    /// when nearly every body is needed anyway (a first pull). Each answer's
    /// documents go to `batch` as soon as it arrives, so the caller can write
    /// them while the next answer is on its way. Every document in a batch's
    /// listing must also be in its documents, with the same revision.
    func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                       progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError)
    /// At least the documents whose raw ids start with one of `prefixes`,
    /// with their bodies, as `listDocuments(batch:progress:)` hands them on:
    /// a folder or glob pathspec's documents (`booksync compare`). It may
    /// list more (the caller narrows), never fewer.
    func listDocuments(prefixes: [String], batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                       progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError)
    /// Bodies of the given documents; ids that do not exist are absent from the
    /// result (not an error): the engine takes a listed document that is
    /// missing here as deleted in the meantime.
    func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument]
    /// Applies guarded writes; `atomic` applies all or none.
    ///
    /// Chunking is the caller's: the push pipeline passes at most
    /// `FirestoreLimits.maximumWritesPerRequest` writes per call, a few calls
    /// in flight, and records each call's outcomes as they come. A remote
    /// sends what fits in one request as one request; it may split a larger
    /// call (FirestoreRemote does, at Firestore's limits), but never an atomic one.
    ///
    /// - Returns: An outcome for each write's id. A write without one is
    ///   reported as rejected ("no answer for this write"), and so is a
    ///   create or update written without its new revision.
    /// - Throws: `RemoteError` when the request itself fails; per-write
    ///   refusals are outcomes, not errors.
    func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome]
    /// The documents whose change field (config `"changeField"`) is at or
    /// after `mark`, with bodies, and with `counting` a count of the whole
    /// collection; nil when this remote has no change field (the engine lists
    /// every name). Writes to a remote that answers must set the change field.
    func changes(since mark: ChangeMark, counting: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteChanges?
    /// The documents of `changes(since:counting:progress:)` handed to
    /// `batch` as they arrive, as `listDocuments(batch:progress:)` hands them
    /// on, the next asked for once `batch` returns: a pull applies each batch
    /// and keeps no body of it, and makes the reading wait while it is behind.
    /// The result holds the count, the read time and the unusable names, no
    /// documents; nil, with no batch, when this remote has no change field.
    func changes(since mark: ChangeMark, counting: Bool, batch: (RemoteListing, [RecordID: RemoteDocument]) async -> Void,
                 progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteChanges?
    /// The bytes `writes` take in one atomic request, and the most one may
    /// take; nil when this remote sets no such limit. `push --atomic` asks
    /// before anything is sent (its dry run too) and refuses what would not fit.
    func atomicRequestSize(_ writes: [RemoteWrite]) -> (bytes: Int, limit: Int)?
}

@_spi(Remote) extension RemoteCollection {
    /// The listing of every name, then set into `revisions`: both are held at
    /// once, so a remote that lists many names implements this itself.
    public func listRevisions(into revisions: RemoteRevisions, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
        var listing = try await listRevisions(progress: progress)
        var keyed = revisions
        keyed.merge(listing.revisions) { _, listed in listed }
        listing.revisions = keyed
        return listing
    }

    /// Every name: a superset of any prefix's.
    public func listRevisions(prefixes: [String], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
        try await listRevisions(progress: progress)
    }

    /// Every document: a superset of any prefix's.
    public func listDocuments(prefixes: [String], batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                              progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
        try await listDocuments(batch: batch, progress: progress)
    }

    /// From a listing of every name.
    public func isEmpty() async throws(RemoteError) -> Bool {
        let listing = try await listRevisions(progress: { _ in })
        return listing.revisions.isEmpty && listing.unusable.isEmpty
    }

    /// Cannot count without listing.
    public func documentCount() async throws(RemoteError) -> Int? { nil }

    /// No limit on the bytes of one atomic request.
    public func atomicRequestSize(_ writes: [RemoteWrite]) -> (bytes: Int, limit: Int)? { nil }

    /// No change field: status and pull list every name.
    public func changes(since mark: ChangeMark, counting: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteChanges? { nil }

    /// From `changes(since:counting:progress:)`, in one batch.
    public func changes(since mark: ChangeMark, counting: Bool, batch: (RemoteListing, [RecordID: RemoteDocument]) async -> Void,
                        progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteChanges? {
        guard var found = try await changes(since: mark, counting: counting, progress: progress) else { return nil }
        await batch(RemoteListing(revisions: RemoteRevisions(found.documents.mapValues(\.revision)), unusable: found.unusable, readTime: found.readTime), found.documents)
        found.documents = [:]
        return found
    }
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

@_spi(Remote) extension RemoteCollection {
    /// None: a remote that cannot say where it is (test doubles).
    public var identity: TargetIdentity? { nil }
}
