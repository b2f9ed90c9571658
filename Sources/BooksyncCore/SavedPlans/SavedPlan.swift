/// What `booksync plan` decided `push` would do, kept so that a reviewer can
/// read it and `booksync apply` can do exactly that later (the manual's ReviewingChanges article).
///
/// A push plan is made against the base; a saved plan is pinned to more:
/// the bytes of every record file it sends (their SHA-256) and the remote
/// revision of every document it writes, read when the plan was made. `apply`
/// checks both before it writes anything, so a plan is never applied to
/// files or documents other than the ones it was reviewed against.
public struct SavedPlan: Sendable, Equatable {
    /// One document the plan writes.
    public struct Write: Sendable, Equatable {
        /// What the write does to the document.
        public enum Action: String, Sendable, Equatable, CaseIterable {
            /// The document does not exist and is created from the file.
            case create
            /// The document is replaced by the file.
            case update
            /// The document is deleted (its file was deleted).
            case delete
        }

        /// The record written.
        public let id: RecordID
        /// What is done to its document.
        public let action: Action
        /// SHA-256 of the record file's bytes as planned; nil for a delete (no file).
        public let fileHash: ContentHash?
        /// The document's revision (`updateTime`) the plan was made against;
        /// nil when it did not exist. The write's precondition.
        public let remoteRevision: String?
        /// The fields that change, by path, outermost first; `before` is the
        /// document's value, `after` the file's (nil: absent on that side).
        public let changes: [FieldChange]

        /// A planned write; see the properties.
        public init(id: RecordID, action: Action, fileHash: ContentHash?, remoteRevision: String?, changes: [FieldChange]) {
            self.id = id
            self.action = action
            self.fileHash = fileHash
            self.remoteRevision = remoteRevision
            self.changes = changes
        }
    }

    /// One field a write changes.
    public struct FieldChange: Sendable, Equatable {
        /// Where the field is.
        public let path: FieldPath
        /// The value the document holds now; nil when it has no such field.
        public let before: Value?
        /// The value the write leaves; nil when the write removes the field.
        public let after: Value?

        /// A change of the field at `path`.
        public init(path: FieldPath, before: Value?, after: Value?) {
            self.path = path
            self.before = before
            self.after = after
        }
    }

    /// A record push would touch that the plan does not write, and why
    /// (an invalid file, a document changed remotely since the last pull).
    public struct Held: Sendable, Equatable {
        /// The record.
        public let id: RecordID
        /// Why it is not written, as a sentence.
        public let reason: String

        /// A held record; see the properties.
        public init(id: RecordID, reason: String) {
            self.id = id
            self.reason = reason
        }
    }

    /// The format's name in the file's `format` field.
    public static let formatName = "booksync-plan"
    /// The newest version of the plan file format, which this booksync
    /// reads and writes. Version 2 is version 1 and `scope`; a plan without
    /// a scope is written as version 1, the bytes booksync wrote before
    /// scopes, while a booksync that reads only version 1 refuses a scoped
    /// plan rather than apply it under whatever scope it finds.
    public static let formatVersion: Int64 = 2

    /// The remote's name in the collection (`origin`, `production`).
    public let remoteName: String
    /// The endpoint and collection the plan writes to.
    public let target: TargetIdentity
    /// The pathspecs the plan was made for (empty: the whole collection), so
    /// a stale plan can be made again for the same records.
    public let pathspecs: [String]
    /// The writes, in id order.
    public let writes: [Write]
    /// Records left out, in id order.
    public let held: [Held]
    /// The collection's scope (config.json `"scope"`) the plan was made
    /// under, as booksync spells it; nil for a collection without one. A
    /// plan is applied only under the same scope: another one changes what
    /// push writes and holds.
    public let scope: String?

    /// A plan; see the properties.
    public init(remoteName: String, target: TargetIdentity, pathspecs: [String], writes: [Write], held: [Held], scope: String? = nil) {
        self.remoteName = remoteName
        self.target = target
        self.pathspecs = pathspecs
        self.writes = writes
        self.held = held
        self.scope = scope
    }

    /// How many writes do `action`.
    public func count(_ action: Write.Action) -> Int {
        writes.reduce(0) { $0 + ($1.action == action ? 1 : 0) }
    }

    /// How many field changes the writes hold.
    public var fieldChangeCount: Int {
        writes.reduce(0) { $0 + $1.changes.count }
    }
}

extension SavedPlan.FieldChange {
    /// The changes that turn `before` into `after`, field by field (maps on both
    /// sides key by key, as `diff` compares them), sorted by path.
    package static func between(_ before: Fields?, _ after: Fields?) -> [SavedPlan.FieldChange] {
        // As a three-way diff whose remote side is the document: every difference is the file's.
        FieldDiff.compare(base: before, local: after, remote: before).map {
            SavedPlan.FieldChange(path: $0.path, before: $0.base, after: $0.local)
        }
    }
}
