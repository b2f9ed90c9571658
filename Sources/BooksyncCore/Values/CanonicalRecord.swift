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
    /// - Parameters:
    ///   - id: The record's id.
    ///   - fields: All top-level fields, `id` included.
    ///   - leadingKeys: Keys written first in canonical order, normally
    ///     `RecordSchema.leadingKeys`; they change the bytes and therefore the hash.
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
    /// The documents the collection mirrors (config `"scope"`); nil for all.
    package let scope: ScopeExpression?

    /// Rules for one collection; an app normally takes `CollectionConfig.rules`
    /// instead. The defaults are the Book schema without reference shortening.
    package init(schema: RecordSchema = .books, collectionPath: String = "books", documentsRoot: String? = nil, idField: IDField = .standard,
                changeField: String? = nil, subcollections: Subcollections = .none, scope: ScopeExpression? = nil) {
        self.schema = schema
        self.scope = scope
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
        return subcollections.entry(forPath: path)?.schema ?? .idOnly
    }

    /// The id a record file or document name stands for, subcollection paths included.
    /// - Throws: `RecordIDError` as `RecordID(path:subcollections:)`.
    package func recordID(_ raw: String) throws(RecordIDError) -> RecordID {
        try RecordID(path: raw, subcollections: subcollections)
    }

    /// Parses a file into the record's fields, without the editor's
    /// `$schema` hint (`EditorSchemaHint`); syntax errors stop at the first problem.
    package func parse(_ bytes: [UInt8]) -> Result<Fields, RecordDiagnostic> {
        parseKeepingHint(bytes).map(\.fields)
    }

    /// Parses a file into the record's fields and the file's `$schema` hint (any value).
    package func parseKeepingHint(_ bytes: [UInt8]) -> Result<(fields: Fields, hint: Value?), RecordDiagnostic> {
        do {
            var fields = try JSONParser.parseObject(bytes)
            if let documentsRoot { fields = fields.mapValues { $0.shorteningReferences(under: documentsRoot) } }
            return .success(EditorSchemaHint.split(fields))
        } catch {
            return .failure(RecordDiagnostic(position: error.position, message: error.message))
        }
    }

    /// The `$schema` hint of a record file's bytes, when it has a string one
    /// (nil for none, for anything else, and for bytes that do not parse).
    package func hint(inFile bytes: [UInt8]?) -> String? {
        guard let bytes, EditorSchemaHint.mayBeIn(bytes), case .success(let parsed) = parseKeepingHint(bytes),
              case .string(let hint)? = parsed.hint else { return nil }
        return hint
    }

    /// The bytes of a record file holding `fields`: canonical, with `hint`
    /// (the `$schema` the file had) first when there is one.
    package func fileBytes(_ fields: Fields, id: RecordID?, hint: String?) -> [UInt8] {
        guard let hint else { return canonicalBytes(fields, id: id) }
        var withHint = fields
        withHint[EditorSchemaHint.key] = .string(hint)
        return CanonicalJSON.encode(withHint, leadingKeys: [EditorSchemaHint.key] + (id.map { schema(for: $0) } ?? schema).leadingKeys)
    }

    /// Schema, id-field and Firestore-limit problems of parsed fields; empty
    /// when valid. The limits apply to the document the record becomes
    /// (without `id` under `"idField": null`), which is what Firestore stores.
    package func problems(in fields: Fields, id: RecordID) -> [RecordDiagnostic] {
        problems(in: fields, id: id, unreadable: [])
    }

    /// What `validate` warns about in a valid record: fields its schema does
    /// not declare, under `"strict": "warning"`, and a record outside the scope.
    package func warnings(in fields: Fields, id: RecordID) -> [String] {
        var warnings = schema(for: id).warnings(in: fields)
        if let scope, !isInScope(fields: fields, id: id) {
            warnings.append("does not match the scope (config \"scope\": \(scope)); push does not create a record outside it")
        }
        return warnings
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

    /// Whether the document `record` stores matches the scope (true without
    /// one): a local record that does not is outside the scope, never pushed.
    package func isInScope(_ record: CanonicalRecord) -> Bool {
        scope?.matches(documentFields(of: record)) ?? true
    }

    /// `isInScope` of a record's fields as parsed from its file.
    package func isInScope(fields: Fields, id: RecordID) -> Bool {
        scope?.matches(idField.document(from: fields, id: id)) ?? true
    }

    /// The record a document named `id` holds, or everything wrong with it:
    /// the id mapping of `idField`, then the same checks as a record file.
    /// The change field's value is not part of the record: it changes with
    /// every write, as the revision does, and a file holding it would be
    /// stale after each push.
    package func record(fromDocument documentFields: Fields, id: RecordID) -> Result<CanonicalRecord, RecordFileProblems> {
        var documentFields = documentFields
        if let changeField { documentFields[changeField] = nil }
        if documentFields[EditorSchemaHint.key] != nil {
            // A file would read it as its editor hint and leave it out of the
            // record, so the next push would delete it: refuse it instead.
            return .failure(RecordFileProblems(diagnostics: [RecordDiagnostic(message:
                "the document has a field '\(EditorSchemaHint.key)', which a record file keeps for the editor's schema hint and never syncs; "
                + "rename the field in the document")]))
        }
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
        var (fields, hint) = EditorSchemaHint.split(parsed.fields)
        if let documentsRoot { fields = fields.mapValues { $0.shorteningReferences(under: documentsRoot) } }
        let hintProblems = parsed.unreadableFields.contains(EditorSchemaHint.key) ? []
            : hint.flatMap(EditorSchemaHint.problem(with:)).map { [RecordDiagnostic(message: $0)] } ?? []
        guard parsed.valueErrors.isEmpty else {
            let valueErrors = parsed.valueErrors.map { RecordDiagnostic(position: $0.position, message: $0.message) }
            return .failure(RecordFileProblems(diagnostics: valueErrors + hintProblems + problems(in: fields, id: id, unreadable: parsed.unreadableFields)))
        }
        let problems = hintProblems + problems(in: fields, id: id)
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
    /// - Parameters:
    ///   - fields: The file's fields, valid or not.
    ///   - id: The record the fields belong to, which decides the
    ///     leading keys (a subcollection has its own required fields); nil for
    ///     the collection's own records.
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
