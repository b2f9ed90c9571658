/// config.json's subcollections: `"subcollections": ["reviews", "reviews/likes"]`
/// and their schemas under `"schema": {"subcollections": {"reviews":
/// [{"name": "rating", "type": "integer"}]}}` (written only when some are set).
extension CollectionConfig {
    /// The `schema` object: the collection's schema, and the subcollections'
    /// that declare anything.
    func encodedSchema() -> Fields {
        var schemaFields = schema.configFields
        var perPath: Fields = [:]
        for entry in subcollections.entries where entry.schema != .idOnly {
            perPath[entry.path] = entry.schema.subcollectionConfigValue
        }
        if !perPath.isEmpty { schemaFields["subcollections"] = .map(perPath) }
        return schemaFields
    }

    /// Reads `"subcollections"` and `schema.subcollections` of a config (data
    /// from a clone, so every path is checked like `init --subcollection`'s,
    /// and required fields may only name configured paths).
    static func decodeSubcollections(_ top: Fields, idField: IDField, changeField: String?) throws(StateFileError) -> Subcollections {
        var paths: [String] = []
        var listed: Set<String> = []
        switch top["subcollections"] {
        case nil, .null?: break
        case .array(let items)?:
            for item in items {
                guard case .string(let path) = item else {
                    throw StateFileError(message: "subcollections must be a list of subcollection paths such as \"reviews\" or \"reviews/likes\"")
                }
                if let problem = Subcollections.problem(withPath: path) { throw StateFileError(message: "subcollections: \(problem)") }
                guard listed.insert(path).inserted else { throw StateFileError(message: "subcollections lists '\(path)' twice") }
                paths.append(path)
            }
            if let problem = Subcollections.problem(withPaths: paths) { throw StateFileError(message: "subcollections: \(problem)") }
        case .some:
            throw StateFileError(message: "subcollections must be a list of subcollection paths such as \"reviews\" or \"reviews/likes\"")
        }
        var schemas: [String: RecordSchema] = [:]
        if case .map(let schema)? = top["schema"], let value = schema["subcollections"] {
            guard case .map(let perPath) = value else {
                throw StateFileError(message: "schema.subcollections must map subcollection paths to required-field lists")
            }
            for (path, list) in perPath {
                guard listed.contains(path) else {
                    throw StateFileError(message: "schema.subcollections names '\(path)', which is not in \"subcollections\"")
                }
                let schema = try RecordSchema.decode(config: list, what: "schema.subcollections.\(path)")
                if let problem = problem(idField: idField, schema: schema) { throw StateFileError(message: "idField: \(problem)") }
                if let changeField, schema.declaredFields.contains(where: { $0.name == changeField }) {
                    throw StateFileError(message: "changeField: '\(changeField)' cannot also be a field of subcollection '\(path)'")
                }
                schemas[path] = schema
            }
        }
        return Subcollections(entries: paths.map { Subcollections.Entry(path: $0, schema: schemas[$0] ?? .idOnly) })
    }
}
