/// Where a collection directory syncs to: a Firestore project, database and
/// collection path (which may be nested, e.g. `users/u1/books`).
public struct FirestoreTarget: Sendable, Equatable {
    public let project: String
    public let database: String
    public let collectionPath: String

    public init(project: String, database: String = "(default)", collectionPath: String) {
        self.project = project
        self.database = database
        self.collectionPath = collectionPath
    }

    /// `projects/P/databases/D/documents`, the root that document names and references hang from.
    public var documentsRoot: String { "projects/\(project)/databases/\(database)/documents" }

    /// Checks a collection path: an odd number of non-empty segments, no `.`/`..`.
    public static func validateCollectionPath(_ path: String) -> String? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: { $0.isEmpty }) { return "collection path '\(path)' has an empty segment" }
        if segments.count % 2 == 0 {
            return "'\(path)' names a document, not a collection; a collection path has an odd number of segments (books, users/u1/books)"
        }
        if segments.contains(where: { $0 == "." || $0 == ".." }) { return "collection path '\(path)' contains '.' or '..'" }
        return nil
    }
}

/// The contents of `.booksync/config.json`.
public struct CollectionConfig: Sendable, Equatable {
    public static let currentVersion: Int64 = 1

    public var remote: FirestoreTarget
    public var schema: RecordSchema
    /// `remote.tokenCommand` of configs written by older booksync versions: still
    /// read, so those configs load, and kept when the config is written back,
    /// but never run. A collection is data (it may be a stranger's clone); only
    /// the user's environment or user config names a program (DESIGN.md §5, §6),
    /// and remote commands warn that this one is ignored.
    public var tokenCommand: String?

    public init(remote: FirestoreTarget, schema: RecordSchema = .books, tokenCommand: String? = nil) {
        self.remote = remote
        self.schema = schema
        self.tokenCommand = tokenCommand
    }

    public var rules: RecordRules {
        RecordRules(schema: schema, collectionPath: remote.collectionPath, documentsRoot: remote.documentsRoot)
    }

    public func encoded() -> [UInt8] {
        var remoteFields: Fields = [
            "type": .string("firestore"),
            "project": .string(remote.project),
            "database": .string(remote.database),
            "collection": .string(remote.collectionPath),
        ]
        if let tokenCommand { remoteFields["tokenCommand"] = .string(tokenCommand) }
        let required = schema.requiredFields.map { Value.map(["name": .string($0.name), "type": .string($0.type.rawValue)]) }
        let fields: Fields = [
            "version": .integer(Self.currentVersion),
            "remote": .map(remoteFields),
            "schema": .map(["required": .array(required)]),
        ]
        return CanonicalJSON.encode(fields, leadingKeys: ["version", "remote", "schema"])
    }

    public static func decode(_ bytes: [UInt8]) throws(StateFileError) -> CollectionConfig {
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
        var database = "(default)"
        if let value = remote["database"] {
            guard case .string(let d) = value, !d.isEmpty else { throw StateFileError(message: "remote.database must be a non-empty string") }
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
            guard case .map(let s) = value, case .array(let items)? = s["required"] else {
                throw StateFileError(message: "schema must be {\"required\": [{\"name\": …, \"type\": …}, …]}")
            }
            var fields: [FieldRequirement] = []
            for item in items {
                guard case .map(let m) = item, case .string(let name)? = m["name"], case .string(let typeName)? = m["type"] else {
                    throw StateFileError(message: "each schema.required entry needs \"name\" and \"type\" strings")
                }
                guard let type = FieldType(rawValue: typeName) else {
                    let known = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
                    throw StateFileError(message: "schema field '\(name)': unknown type '\(typeName)' (known: \(known))")
                }
                if name == "id" { continue }  // always required
                guard !fields.contains(where: { $0.name == name }) else {
                    throw StateFileError(message: "schema.required lists '\(name)' twice")
                }
                fields.append(FieldRequirement(name: name, type: type))
            }
            schema = RecordSchema(requiredFields: fields)
        }
        return CollectionConfig(
            remote: FirestoreTarget(project: project, database: database, collectionPath: collection),
            schema: schema, tokenCommand: tokenCommand)
    }
}
