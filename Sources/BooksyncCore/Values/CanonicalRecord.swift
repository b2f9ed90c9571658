/// A valid record: its id, its fields, and the canonical bytes its hash covers.
public struct CanonicalRecord: Sendable, Equatable {
    /// The record's id: its file name without `.json` and its Firestore document id.
    public let id: RecordID
    /// All top-level fields, `id` included.
    public let fields: Fields
    /// The bytes booksync writes for this record and hashes.
    public let canonicalBytes: [UInt8]
    /// `sha256:<hex>` of `canonicalBytes`; equals `sha256sum` of a canonical file.
    public let hash: ContentHash

    /// Encodes and hashes `fields` at once; does not validate them (use
    /// `RecordRules.load(_:id:)` for untrusted bytes).
    /// - Parameter leadingKeys: Keys written first in canonical order, normally
    ///   `RecordSchema.leadingKeys`; they change the bytes and therefore the hash.
    package init(id: RecordID, fields: Fields, leadingKeys: [String]) {
        self.id = id
        self.fields = fields
        self.canonicalBytes = CanonicalJSON.encode(fields, leadingKeys: leadingKeys)
        self.hash = SHA256.contentHash(canonicalBytes)
    }
}

/// One thing wrong with a record file, with a position when it is a syntax error.
public struct RecordDiagnostic: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where in the file the problem is (syntax and value errors); nil for
    /// problems of the record as a whole (schema, limits).
    public let position: SourcePosition?
    /// The problem as a sentence, without file name or position.
    public let message: String

    /// A diagnostic; pass a position when the problem has a place in the file.
    package init(position: SourcePosition? = nil, message: String) {
        self.position = position
        self.message = message
    }

    /// `7:12: expected ',' or '}'` or just the message; callers prefix the file.
    public var description: String {
        if let position { return "\(position): \(message)" }
        return message
    }
}

/// The rules that turn the bytes of one record file into a `CanonicalRecord`.
public struct RecordRules: Sendable, Equatable {
    /// The fields every record must have.
    package let schema: RecordSchema
    /// The remote collection path, for Firestore's document-size rule.
    package let collectionPath: String
    /// `projects/P/databases/D/documents`: references written as full names under
    /// it are shortened to the canonical relative form.
    package let documentsRoot: String?
    /// Where documents keep the record id (config `"idField"`).
    package let idField: IDField
    /// The field the server sets on every write (config `"changeField"`):
    /// metadata like the revision, so documents' values are left out of
    /// records and a record file may not have it.
    package let changeField: String?
    /// The subcollections synced besides the collection's own documents,
    /// each with its own required fields (config `"subcollections"`).
    package let subcollections: Subcollections

    /// Rules for one collection; an app normally takes `CollectionConfig.rules`
    /// instead. The defaults are the Book schema without reference shortening.
    package init(schema: RecordSchema = .books, collectionPath: String = "books", documentsRoot: String? = nil, idField: IDField = .standard,
                changeField: String? = nil, subcollections: Subcollections = .none) {
        self.schema = schema
        self.subcollections = subcollections
        self.collectionPath = collectionPath
        self.documentsRoot = documentsRoot
        self.idField = idField
        self.changeField = changeField
    }

    /// The schema of the record `id`: the collection's for a top-level id, its
    /// subcollection's for a path id (nothing but `id` when none is configured).
    package func schema(for id: RecordID) -> RecordSchema {
        guard let path = id.subcollectionPath else { return schema }
        return subcollections.entry(forPath: path)?.schema ?? RecordSchema(requiredFields: [])
    }

    /// The id a record file or document name stands for, subcollection paths included.
    /// - Throws: `RecordIDError` as `RecordID(path:subcollections:)`.
    package func recordID(_ raw: String) throws(RecordIDError) -> RecordID {
        try RecordID(path: raw, subcollections: subcollections)
    }

    /// Parses a file; syntax errors stop at the first problem.
    package func parse(_ bytes: [UInt8]) -> Result<Fields, RecordDiagnostic> {
        do {
            let fields = try JSONParser.parseObject(bytes)
            guard let documentsRoot else { return .success(fields) }
            return .success(fields.mapValues { $0.shorteningReferences(under: documentsRoot) })
        } catch {
            return .failure(RecordDiagnostic(position: error.position, message: error.message))
        }
    }

    /// Schema, id-field and Firestore-limit problems of parsed fields; empty
    /// when valid. The limits apply to the document the record becomes
    /// (without `id` under `"idField": null`), which is what Firestore stores.
    package func problems(in fields: Fields, id: RecordID) -> [RecordDiagnostic] {
        problems(in: fields, id: id, unreadable: [])
    }

    /// A record file may not hold the change field: every push sets it on the
    /// server, so a value in the file would be overwritten (and stale at once).
    func changeFieldProblems(inRecord fields: Fields) -> [String] {
        guard let changeField, fields[changeField] != nil else { return [] }
        return ["field '\(changeField)' cannot be in a record file: it is this collection's change field (config \"changeField\"), "
            + "which the server sets on every write; remove it from the file"]
    }

    /// The document fields that store `record` remotely.
    package func documentFields(of record: CanonicalRecord) -> Fields {
        idField.document(from: record.fields, id: record.id)
    }

    /// The record a document named `id` holds, or everything wrong with it:
    /// the id mapping of `idField`, then the same checks as a record file.
    /// The change field's value is not part of the record: it changes with
    /// every write, as the revision does, and a file holding it would be
    /// stale after each push.
    package func record(fromDocument documentFields: Fields, id: RecordID) -> Result<CanonicalRecord, RecordFileProblems> {
        var documentFields = documentFields
        if let changeField { documentFields[changeField] = nil }
        switch idField.record(from: documentFields, id: id) {
        case .failure(let problems):
            return .failure(problems)
        case .success(let fields):
            let problems = problems(in: fields, id: id)
            if !problems.isEmpty { return .failure(RecordFileProblems(diagnostics: problems)) }
            return .success(CanonicalRecord(id: id, fields: fields, leadingKeys: schema(for: id).leadingKeys))
        }
    }

    /// The record in a file, or everything wrong with it: a syntax error
    /// alone (nothing after it can be trusted), else every value error, then
    /// every schema and Firestore-limit problem.
    package func load(_ bytes: [UInt8], id: RecordID) -> Result<CanonicalRecord, RecordFileProblems> {
        let parsed: JSONParser.ParsedRecord
        do {
            parsed = try JSONParser.parseRecord(bytes)
        } catch {
            return .failure(RecordFileProblems(diagnostics: [RecordDiagnostic(position: error.position, message: error.message)]))
        }
        var fields = parsed.fields
        if let documentsRoot { fields = fields.mapValues { $0.shorteningReferences(under: documentsRoot) } }
        guard parsed.valueErrors.isEmpty else {
            let valueErrors = parsed.valueErrors.map { RecordDiagnostic(position: $0.position, message: $0.message) }
            return .failure(RecordFileProblems(diagnostics: valueErrors + problems(in: fields, id: id, unreadable: parsed.unreadableFields)))
        }
        let problems = problems(in: fields, id: id)
        if !problems.isEmpty { return .failure(RecordFileProblems(diagnostics: problems)) }
        return .success(CanonicalRecord(id: id, fields: fields, leadingKeys: schema(for: id).leadingKeys))
    }

    /// The problems of fields some of whose top-level values could not be
    /// read (null stands in for them in `fields`): for the schema check, each
    /// such required field holds a value of its declared type instead, since
    /// its own error already says what is wrong; so a bad `{"$timestamp": …}`
    /// in `title` is not also "title must be string". The schema itself is
    /// used as it is, whatever else it checks.
    func problems(in fields: Fields, id: RecordID, unreadable: Set<String>) -> [RecordDiagnostic] {
        var standIns = fields
        let recordSchema = schema(for: id)
        for requirement in recordSchema.requiredFields where unreadable.contains(requirement.name) {
            standIns[requirement.name] = requirement.type.standIn
        }
        if unreadable.contains("id") { standIns["id"] = .string(id.documentID) }
        let document = idField.document(from: fields, id: id)
        return (recordSchema.problems(in: standIns, id: id) + idField.problems(inRecord: fields) + changeFieldProblems(inRecord: fields)
            + FirestoreLimits.problems(in: document, id: id, collectionPath: collectionPath))
            .map { RecordDiagnostic(message: $0) }
    }

    /// Canonical bytes for a file's content, whether or not it meets the schema
    /// (formatting is about syntax; `validate` reports the schema).
    /// - Parameter id: the record the fields belong to, which decides the
    ///   leading keys (a subcollection has its own required fields); nil for
    ///   the collection's own records.
    package func canonicalBytes(_ fields: Fields, id: RecordID? = nil) -> [UInt8] {
        CanonicalJSON.encode(fields, leadingKeys: (id.map { schema(for: $0) } ?? schema).leadingKeys)
    }
}

extension FieldType {
    /// Some value this type accepts: the stand-in for a field whose value could not be read.
    var standIn: Value {
        switch self {
        case .string: .string("")
        case .integer: .integer(0)
        case .double, .number: .double(0)
        case .boolean: .bool(false)
        case .timestamp: .timestamp(Timestamp(microsecondsSinceEpoch: 0))
        case .bytes: .bytes([])
        case .reference: .reference("a/b")
        case .geopoint: .geoPoint(latitude: 0, longitude: 0)
        case .array: .array([])
        case .map: .map([:])
        case .any: .null
        }
    }
}

/// The diagnostics of an invalid record file.
package struct RecordFileProblems: Error, Sendable, Equatable {
    /// Every problem found; never empty.
    package let diagnostics: [RecordDiagnostic]
}

extension Value {
    /// The value with full reference names under `documentsRoot` shortened.
    package func shorteningReferences(under documentsRoot: String) -> Value {
        switch self {
        case .reference(let path): .reference(ReferencePath.shorten(path, documentsRoot: documentsRoot))
        case .array(let items): .array(items.map { $0.shorteningReferences(under: documentsRoot) })
        case .map(let fields): .map(fields.mapValues { $0.shorteningReferences(under: documentsRoot) })
        default: self
        }
    }
}
