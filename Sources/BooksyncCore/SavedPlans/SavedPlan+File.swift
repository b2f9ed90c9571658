/// The plan file (`booksync plan --out`), version 1, or 2 with `scope`:
/// canonical JSON, so the same plan is always the same bytes and a diff of
/// two plans is readable.
///
/// ```json
/// {
///   "format": "booksync-plan",
///   "version": 2,
///   "digest": "sha256:…",
///   "held": [{"file": "bad.json", "id": "bad", "reason": "…"}],
///   "pathspecs": [],
///   "scope": "rating >= 4",
///   "summary": {"creates": 1, "deletes": 0, "fields": 3, "held": 1, "updates": 1},
///   "target": {"collection": "projects/p/databases/(default)/documents/books",
///              "endpoint": "https://firestore.googleapis.com/v1/", "remote": "origin"},
///   "writes": [{"action": "update", "changes": [{"after": 4.5, "before": 4.2,
///               "field": "stats.rating", "path": ["stats", "rating"]}],
///               "file": "dune.json", "fileSHA256": "sha256:…", "id": "dune",
///               "remoteRevision": "2026-12-05T10:00:00.123456Z"}]
/// }
/// ```
///
/// `digest` is the SHA-256 of the file's canonical bytes without it: a plan
/// changed by hand (a value, a revision, a write added) no longer matches it
/// and is refused. It detects edits, not forgery: whoever can write the file
/// can compute it, so `apply` also checks every write against the files, the
/// base and the remote. `summary`, `file` and `field` are for readers and
/// are checked against the rest. `scope` is there only for a collection
/// with one (config.json `"scope"`), in a version 2 plan; other plans are
/// version 1, the bytes they were before it existed, and a booksync that
/// reads only version 1 refuses a scoped plan instead of ignoring its scope.
extension SavedPlan {
    /// The plan as its file's bytes (canonical JSON, newline-terminated).
    public func fileBytes() -> [UInt8] {
        var fields = contentFields()
        fields["digest"] = .string(Self.digest(of: fields).text)
        return CanonicalJSON.encode(fields, leadingKeys: Self.leadingKeys)
    }

    /// Reads a plan file.
    /// - Parameters:
    ///   - bytes: The file's contents.
    ///   - recordID: Parses an id as the collection names records (with its subcollections).
    /// - Throws: `SavedPlanError` naming what is wrong: not a plan, another
    ///   format version, a field missing or mistyped, a digest that does not
    ///   match (edited by hand), a summary that disagrees with the writes.
    public static func read(_ bytes: [UInt8], recordID: (String) throws(RecordIDError) -> RecordID) throws(SavedPlanError) -> SavedPlan {
        guard bytes.count <= maximumFileBytes else { throw .tooLarge(bytes: bytes.count, limit: maximumFileBytes) }
        var fields: Fields
        do {
            fields = try JSONParser.parseObject(bytes)
        } catch {
            throw .notAPlan("line \(error.position.line), column \(error.position.column): \(error.message)")
        }
        guard case .string(formatName)? = fields["format"] else { throw .notAPlan("it has no \"format\": \"\(formatName)\"") }
        guard case .integer(let version)? = fields["version"] else { throw .notAPlan("it has no \"version\"") }
        guard (1...formatVersion).contains(version) else { throw .otherVersion(version) }
        guard case .string(let digest)? = fields.removeValue(forKey: "digest") else { throw .field("digest", "a string") }
        guard digest == Self.digest(of: fields).text else { throw .edited }
        let reader = FieldReader(fields: fields, path: "")
        let target = try reader.map("target")
        let (endpoint, collection) = (try target.string("endpoint"), try target.string("collection"))
        guard !endpoint.isEmpty, !endpoint.contains(" "), !collection.isEmpty else { throw .field("target", "an endpoint and a collection") }
        let identity = TargetIdentity(endpoint: endpoint, collection: collection)
        let plan = SavedPlan(
            remoteName: try target.string("remote"), target: identity,
            pathspecs: try reader.array("pathspecs").map { item throws(SavedPlanError) in try item.stringValue() },
            writes: try reader.array("writes").map { item throws(SavedPlanError) in try Self.write(item.asMap(), recordID: recordID) },
            held: try reader.array("held").map { item throws(SavedPlanError) in
                let map = try item.asMap()
                return Held(id: try Self.id(map, recordID: recordID), reason: try map.string("reason"))
            },
            scope: try reader.optionalString("scope"))
        guard (plan.scope != nil) == (version >= 2) else {
            throw .field("scope", "in a plan of version 2 only, and always there (make the plan again with booksync plan)")
        }
        guard .map(plan.summaryFields()) == fields["summary"] else { throw .edited }
        // As booksync writes them: each record once, in id order (a record
        // written twice would be sent twice).
        let ids = plan.writes.map(\.id) + plan.held.map(\.id)
        guard zip(plan.writes, plan.writes.dropFirst()).allSatisfy({ $0.id < $1.id }), Set(ids).count == ids.count else {
            throw .field("writes", "in id order, each record once (in writes or in held)")
        }
        return plan
    }

    /// A plan file larger than this is refused unread: 64 MiB holds a plan
    /// of a hundred thousand writes with a few changed fields each.
    package static let maximumFileBytes = 64 << 20

    private static let leadingKeys = ["format", "version", "digest"]

    private static func digest(of fields: Fields) -> ContentHash {
        SHA256.contentHash(CanonicalJSON.encode(fields, leadingKeys: leadingKeys))
    }

    private func contentFields() -> Fields {
        var fields: Fields = [
            "format": .string(Self.formatName), "version": .integer(scope == nil ? 1 : Self.formatVersion),
            "target": .map(["remote": .string(remoteName), "endpoint": .string(target.endpoint), "collection": .string(target.collection)]),
            "pathspecs": .array(pathspecs.map(Value.string)),
            "summary": .map(summaryFields()),
            "writes": .array(writes.map { write in
                var entry: Fields = [
                    "id": .string(write.id.rawValue), "file": .string(write.id.fileName), "action": .string(write.action.rawValue),
                    "remoteRevision": .string(write.remoteRevision ?? Self.absent),
                    "changes": .array(write.changes.map { change in
                        var item: Fields = ["field": .string(change.path.description), "path": .array(change.path.segments.map(Value.string))]
                        if let before = change.before { item["before"] = before }
                        if let after = change.after { item["after"] = after }
                        return .map(item)
                    }),
                ]
                if let hash = write.fileHash { entry["fileSHA256"] = .string(hash.text) }
                return .map(entry)
            }),
            "held": .array(held.map { .map(["id": .string($0.id.rawValue), "file": .string($0.id.fileName), "reason": .string($0.reason)]) }),
        ]
        if let scope { fields["scope"] = .string(scope) }
        return fields
    }

    private func summaryFields() -> Fields {
        [
            "creates": .integer(Int64(count(.create))), "updates": .integer(Int64(count(.update))),
            "deletes": .integer(Int64(count(.delete))), "fields": .integer(Int64(fieldChangeCount)),
            "held": .integer(Int64(held.count)),
        ]
    }

    /// How a plan file spells a document that did not exist.
    static let absent = "absent"

    private static func write(_ map: FieldReader, recordID: (String) throws(RecordIDError) -> RecordID) throws(SavedPlanError) -> Write {
        let id = try id(map, recordID: recordID)
        guard let action = Write.Action(rawValue: try map.string("action")) else {
            throw .field(map.path + "action", "create, update or delete")
        }
        let revision = try map.string("remoteRevision")
        let hash = try map.optionalString("fileSHA256")
        guard (hash == nil) == (action == .delete), (revision == absent) == (action == .create) else {
            throw .field(map.path + "action", "a create with remoteRevision \"absent\", a delete without fileSHA256")
        }
        let changes = try map.array("changes").map { item throws(SavedPlanError) -> FieldChange in
            let change = try item.asMap()
            let segments = try change.array("path").map { segment throws(SavedPlanError) in try segment.stringValue() }
            guard !segments.isEmpty else { throw .field(change.path + "path", "at least one name") }
            let path = FieldPath(segments)
            guard try change.string("field") == path.description else { throw .edited }
            return FieldChange(path: path, before: change.fields["before"], after: change.fields["after"])
        }
        return Write(id: id, action: action, fileHash: hash.map(ContentHash.init(text:)), remoteRevision: revision == absent ? nil : revision,
                     changes: changes)
    }

    private static func id(_ map: FieldReader, recordID: (String) throws(RecordIDError) -> RecordID) throws(SavedPlanError) -> RecordID {
        let raw = try map.string("id")
        let id: RecordID
        do {
            id = try recordID(raw)
        } catch {
            throw .badRecord(TerminalEscaping.abbreviate(raw), error.message)
        }
        guard try map.string("file") == id.fileName else { throw .edited }
        return id
    }
}

/// Why a plan file cannot be used.
public enum SavedPlanError: Error, Sendable, Equatable {
    /// Not JSON, or not a booksync plan.
    case notAPlan(String)
    /// Written by a booksync with another plan format.
    case otherVersion(Int64)
    /// The field at this path is missing or not of the kind named.
    case field(String, String)
    /// A record id that is not one of this collection's.
    case badRecord(String, String)
    /// The contents no longer match the digest or their own summary.
    case edited
    /// Larger than any plan booksync writes.
    case tooLarge(bytes: Int, limit: Int)

    /// The problem as the end of a sentence that starts with the file's name.
    public var message: String {
        switch self {
        case .notAPlan(let detail): "is not a booksync plan file (\(detail))"
        case .otherVersion(let version):
            "is a plan of format version \(version); this booksync reads versions 1 to \(SavedPlan.formatVersion): make the plan again with this booksync"
        case .field(let path, let kind): "is not a usable plan: \"\(path)\" must be \(kind)"
        case .badRecord(let id, let problem): "names the record '\(id)', which cannot be one of this collection's: \(problem)"
        case .edited: "was changed after booksync wrote it (it no longer agrees with its digest, or with itself); make the plan again with booksync plan"
        case .tooLarge(let bytes, let limit): "is \(bytes) bytes, larger than any plan (at most \(limit))"
        }
    }
}

/// Typed access to one JSON object of a plan file, naming the path of what is missing.
private struct FieldReader {
    let fields: Fields
    /// `writes.3.` and so on: where this object is, for messages.
    let path: String

    func value(_ key: String) throws(SavedPlanError) -> ValueReader {
        guard let value = fields[key] else { throw .field(path + key, "present") }
        return ValueReader(value: value, path: path + key)
    }

    func string(_ key: String) throws(SavedPlanError) -> String { try value(key).stringValue() }

    func optionalString(_ key: String) throws(SavedPlanError) -> String? {
        fields[key] == nil ? nil : try string(key)
    }

    func map(_ key: String) throws(SavedPlanError) -> FieldReader { try value(key).asMap() }

    func array(_ key: String) throws(SavedPlanError) -> [ValueReader] {
        let item = try value(key)
        guard case .array(let values) = item.value else { throw .field(item.path, "a list") }
        return values.enumerated().map { ValueReader(value: $1, path: item.path + ".\($0)") }
    }
}

/// One value of a plan file and its path.
private struct ValueReader {
    let value: Value
    let path: String

    func stringValue() throws(SavedPlanError) -> String {
        guard case .string(let text) = value else { throw .field(path, "a string") }
        return text
    }

    func asMap() throws(SavedPlanError) -> FieldReader {
        guard case .map(let fields) = value else { throw .field(path, "an object") }
        return FieldReader(fields: fields, path: path + ".")
    }
}
