/// Where a collection directory syncs to: a Firestore project, database and
/// collection path (which may be nested, e.g. `users/u1/books`).
public struct FirestoreTarget: Sendable, Equatable {
    /// The Google Cloud project id, checked by `problem(withProject:)` when read from a config.
    public let project: String
    /// The Firestore database id: `(default)` unless the config names another.
    public let database: String
    /// The collection's slash-separated path, e.g. `books` or `users/u1/books`.
    public let collectionPath: String

    /// Takes the parts as they are; validate untrusted input first with
    /// `problem(withProject:)`, `problem(withDatabase:)` and `validateCollectionPath(_:)`.
    public init(project: String, database: String = "(default)", collectionPath: String) {
        self.project = project
        self.database = database
        self.collectionPath = collectionPath
    }

    /// `projects/P/databases/D/documents`, the root that document names and references hang from.
    package var documentsRoot: String { "projects/\(project)/databases/\(database)/documents" }

    /// Checks a collection path: an odd number of non-empty segments, no
    /// `.`/`..`, and no scalar a terminal or an editor acts on instead of
    /// showing (controls, line separators, bidi overrides): the path of a
    /// cloned config.json is printed in every status header and written into
    /// the comments of `schema --swift`, where a newline would start a line of code.
    package static func validateCollectionPath(_ path: String) -> String? {
        if let scalar = path.unicodeScalars.first(where: TerminalEscaping.isUnsafe) {
            return "collection path '\(TerminalEscaping.escapeName(TerminalEscaping.abbreviate(path)))' contains "
                + "\(TerminalEscaping.describeUnsafe(scalar)); a collection id must be visible text"
        }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: { $0.isEmpty }) { return "collection path '\(path)' has an empty segment" }
        if segments.count % 2 == 0 {
            return "'\(path)' names a document, not a collection; a collection path has an odd number of segments (books, users/u1/books)"
        }
        if segments.contains(where: { $0 == "." || $0 == ".." }) { return "collection path '\(path)' contains '.' or '..'" }
        return nil
    }

    /// Checks a project id wherever it comes from (`--firestore`, the
    /// environment, `.firebaserc`, a cloned config.json): it becomes a segment
    /// of every request path, so nothing that could leave that segment or
    /// garble a URL or a terminal line is accepted. Deliberately looser than
    /// Google's rules for real projects (6–30 lowercase letters, digits and
    /// hyphens), because the emulator takes any name (`demo-x`, `p`).
    package static func problem(withProject project: String) -> String? {
        segmentProblem(project, what: "project id")
    }

    /// The same check for a database id (`(default)` or a named database).
    package static func problem(withDatabase database: String) -> String? {
        segmentProblem(database, what: "database id")
    }

    private static func segmentProblem(_ value: String, what: String) -> String? {
        if value.isEmpty { return "the \(what) is empty" }
        if value == "." || value == ".." { return "'\(value)' is not a \(what)" }
        if value.contains("/") { return "\(what) '\(value)' contains '/'" }
        if value.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F || $0.properties.isWhitespace }) {
            return "the \(what) contains whitespace or a control character"
        }
        return nil
    }
}

/// The contents of `.booksync/config.json`.
public struct CollectionConfig: Sendable, Equatable {
    /// The `"version"` this booksync writes and the only one `decode(_:)` accepts.
    package static let currentVersion: Int64 = 1
    /// The most bytes booksync reads of config.json (every command reads it,
    /// and a clone may bring it): a schema of thousands of fields takes a
    /// fraction of this.
    package static let maximumFileBytes = 4 << 20

    /// The Firestore collection this directory syncs with.
    public var remote: FirestoreTarget
    /// The fields every record must have (the Book schema unless `init --require` said otherwise).
    public var schema: RecordSchema
    /// `remote.tokenCommand` of configs written by older booksync versions: still
    /// read, so those configs load, and kept when the config is written back,
    /// but never run. A collection is data (it may be a stranger's clone); only
    /// the user's environment or user config names a program (the manual's Firestore and Safety articles),
    /// and remote commands warn that this one is ignored.
    public var tokenCommand: String?
    /// Where documents keep the record id: `"idField": "id"` (the default),
    /// another field name, or `null` for none (the manual's Firestore article).
    public var idField: IDField
    /// The document field every write sets to the server's request time
    /// (`"changeField": "updatedAt"`), so remote changes can be found by a
    /// query instead of listing every name (the manual's Firestore article, "What a command costs");
    /// nil (the default) for none.
    public var changeField: String?
    /// The subcollections synced as folders (`"subcollections": ["reviews"]`),
    /// with their required fields (`"schema": {"subcollections": {…}}`); none by default.
    public var subcollections: Subcollections
    /// The documents the directory mirrors (`"scope": "rating >= 4"`,
    /// `init --where`): nil (the default) for the whole collection (the manual's WholeProject article).
    package var scope: ScopeExpression?

    /// A config as `init` writes it; `tokenCommand` exists only to round-trip old configs.
    public init(remote: FirestoreTarget, schema: RecordSchema = .books, tokenCommand: String? = nil, idField: IDField = .standard,
                changeField: String? = nil, subcollections: Subcollections = .none) {
        self.subcollections = subcollections
        self.remote = remote
        self.schema = schema
        self.tokenCommand = tokenCommand
        self.idField = idField
        self.changeField = changeField
    }

    /// The rules that load this collection's record files and documents.
    public var rules: RecordRules {
        RecordRules(schema: schema, collectionPath: remote.collectionPath, documentsRoot: remote.documentsRoot, idField: idField,
                    changeField: changeField, subcollections: subcollections,
                    scope: scope.map { $0.shorteningReferences(under: remote.documentsRoot) })
    }

    /// Why `changeField` cannot be this collection's change field, or nil.
    /// It is set by the server on every write and kept out of record files,
    /// so it cannot be the record id (`id`, the id field) or a required field.
    package static func problem(changeField name: String, idField: IDField, schema: RecordSchema) -> String? {
        if let problem = IDField.topLevelFieldProblem(name, what: "the change field name") { return problem }
        if name == "id" || name == idField.fieldName {
            return "'\(name)' holds the record id; the change field must be another field, such as updatedAt"
        }
        if let declared = schema.declaredFields.first(where: { $0.name == name }) {
            return "'\(name)' cannot be both the change field and \(schema.kind(of: declared)): the server sets the change field, and record files leave it out"
        }
        return nil
    }

    /// Why `idField` and `schema` cannot go together, or nil: a record file may
    /// not have the id field (`docId`), so it cannot be a required field.
    package static func problem(idField: IDField, schema: RecordSchema) -> String? {
        guard let name = idField.fieldName, name != "id", let declared = schema.declaredFields.first(where: { $0.name == name }) else { return nil }
        return "'\(name)' cannot be both the id field and \(schema.kind(of: declared)): documents keep the record id in '\(name)', and record files keep it in 'id'"
    }

    /// The canonical JSON of `.booksync/config.json`, with `version`, `remote`
    /// and `schema` first; `decode(_:)` reads it back unchanged.
    package func encoded() -> [UInt8] {
        var remoteFields: Fields = [
            "type": .string("firestore"),
            "project": .string(remote.project),
            "database": .string(remote.database),
            "collection": .string(remote.collectionPath),
        ]
        if let tokenCommand { remoteFields["tokenCommand"] = .string(tokenCommand) }
        var fields: Fields = [
            "version": .integer(Self.currentVersion),
            "remote": .map(remoteFields),
            "schema": .map(encodedSchema()),
            "idField": idField.fieldName.map(Value.string) ?? .null,
        ]
        if let changeField { fields["changeField"] = .string(changeField) }
        if !subcollections.isEmpty { fields["subcollections"] = .array(subcollections.entries.map { .string($0.path) }) }
        if let scope { fields["scope"] = .string(scope.description) }
        return CanonicalJSON.encode(fields, leadingKeys: ["version", "remote", "schema"])
    }

    /// Reads `.booksync/config.json`. The file may come from a stranger's clone,
    /// so every part is checked: project and database ids, collection path,
    /// schema types, id field.
    /// - Parameter bytes: The file's contents.
    /// - Throws: `StateFileError` naming the first bad key (with a position for
    ///   a syntax error); the caller adds the file name.
    package static func decode(_ bytes: [UInt8]) throws(StateFileError) -> CollectionConfig {
        let top: Fields
        do {
            top = try JSONParser.parseObject(bytes)
        } catch {
            throw StateFileError(position: error.position, message: error.message)
        }
        guard case .integer(let version)? = top["version"] else { throw StateFileError(message: "missing \"version\"") }
        guard version == currentVersion else {
            throw StateFileError(message: "version \(version) is not supported by this booksync (it reads version \(currentVersion))")
        }
        guard case .map(let remote)? = top["remote"] else { throw StateFileError(message: "missing \"remote\" object") }
        guard case .string("firestore")? = remote["type"] else {
            throw StateFileError(message: "remote.type must be \"firestore\" (the only remote booksync supports so far)")
        }
        guard case .string(let project)? = remote["project"], !project.isEmpty else {
            throw StateFileError(message: "remote.project must be a non-empty string")
        }
        if let problem = FirestoreTarget.problem(withProject: project) { throw StateFileError(message: "remote.project: \(problem)") }
        var database = "(default)"
        if let value = remote["database"] {
            guard case .string(let d) = value, !d.isEmpty else { throw StateFileError(message: "remote.database must be a non-empty string") }
            if let problem = FirestoreTarget.problem(withDatabase: d) { throw StateFileError(message: "remote.database: \(problem)") }
            database = d
        }
        guard case .string(let collection)? = remote["collection"] else {
            throw StateFileError(message: "remote.collection must be a string such as \"books\"")
        }
        if let problem = FirestoreTarget.validateCollectionPath(collection) { throw StateFileError(message: "remote.collection: \(problem)") }
        var tokenCommand: String?
        if let value = remote["tokenCommand"] {
            guard case .string(let command) = value else { throw StateFileError(message: "remote.tokenCommand must be a string") }
            tokenCommand = command
        }
        var schema = RecordSchema.books
        if let value = top["schema"] {
            guard case .map = value else { throw StateFileError(message: "schema must be {\"required\": [{\"name\": …, \"type\": …}, …]}") }
            schema = try RecordSchema.decode(config: value, what: "schema", extraKeys: ["subcollections"])
        }
        var idField = IDField.standard
        switch top["idField"] {
        case nil: break
        case .null?: idField = .none
        case .string(let name)?:
            if let problem = IDField.problem(withFieldName: name) { throw StateFileError(message: "idField: \(problem)") }
            idField = .field(name)
        case .some:
            throw StateFileError(message: "idField must be a field name such as \"id\" or \"docId\", or null for none")
        }
        if let problem = problem(idField: idField, schema: schema) { throw StateFileError(message: "idField: \(problem)") }
        var changeField: String?
        switch top["changeField"] {
        case nil, .null?: break
        case .string(let name)?:
            if let problem = problem(changeField: name, idField: idField, schema: schema) { throw StateFileError(message: "changeField: \(problem)") }
            changeField = name
        case .some:
            throw StateFileError(message: "changeField must be a field name such as \"updatedAt\", or null for none")
        }
        let subcollections = try decodeSubcollections(top, idField: idField, changeField: changeField)
        var config = CollectionConfig(
            remote: FirestoreTarget(project: project, database: database, collectionPath: collection),
            schema: schema, tokenCommand: tokenCommand, idField: idField, changeField: changeField, subcollections: subcollections)
        config.scope = try decodeScope(top, changeField: changeField, subcollections: subcollections, idField: idField)
        return config
    }
}
