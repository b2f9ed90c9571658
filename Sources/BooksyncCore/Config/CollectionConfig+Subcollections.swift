/// config.json's subcollections: `"subcollections": ["reviews", "reviews/likes"]`
/// and their required fields under `"schema": {"subcollections": {"reviews":
/// [{"name": "rating", "type": "integer"}]}}` (written only when some are set).
extension CollectionConfig {
    /// The `schema` object: the collection's required fields, and the
    /// subcollections' when any has some.
    func encodedSchema(required: [Value]) -> Fields {
        var schemaFields: Fields = ["required": .array(required)]
        var perPath: Fields = [:]
        for entry in subcollections.entries where !entry.schema.requiredFields.isEmpty {
            perPath[entry.path] = .array(entry.schema.requiredFields.map {
                Value.map(["name": .string($0.name), "type": .string($0.type.rawValue)])
            })
        }
        if !perPath.isEmpty { schemaFields["subcollections"] = .map(perPath) }
        return schemaFields
    }

    /// A required-field list (`[{"name": …, "type": …}, …]`), checked: known
    /// types, no name twice; `id` is dropped (always required).
    static func decodeRequired(_ items: [Value], what: String, fieldsOf owner: String) throws(StateFileError) -> [FieldRequirement] {
        var fields: [FieldRequirement] = []
        for item in items {
            guard case .map(let m) = item, case .string(let name)? = m["name"], case .string(let typeName)? = m["type"] else {
                throw StateFileError(message: "each \(what) entry needs \"name\" and \"type\" strings")
            }
            guard let type = FieldType(rawValue: typeName) else {
                let known = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
                throw StateFileError(message: "\(owner) field '\(name)': unknown type '\(typeName)' (known: \(known))")
            }
            if name == "id" { continue }  // always required
            guard !fields.contains(where: { $0.name == name }) else {
                throw StateFileError(message: "\(what) lists '\(name)' twice")
            }
            fields.append(FieldRequirement(name: name, type: type))
        }
        return fields
    }

    /// Reads `"subcollections"` and `schema.subcollections` of a config (data
    /// from a clone, so every path is checked like `init --subcollection`'s,
    /// and required fields may only name configured paths).
    static func decodeSubcollections(_ top: Fields, idField: IDField, changeField: String?) throws(StateFileError) -> Subcollections {
        var paths: [String] = []
        switch top["subcollections"] {
        case nil, .null?: break
        case .array(let items)?:
            if let problem = Subcollections.problem(withCount: items.count) { throw StateFileError(message: "subcollections: \(problem)") }
            for item in items {
                guard case .string(let path) = item else {
                    throw StateFileError(message: "subcollections must be a list of subcollection paths such as \"reviews\" or \"reviews/likes\"")
                }
                if let problem = Subcollections.problem(withPath: path) { throw StateFileError(message: "subcollections: \(problem)") }
                guard !paths.contains(path) else { throw StateFileError(message: "subcollections lists '\(path)' twice") }
                paths.append(path)
            }
        case .some:
            throw StateFileError(message: "subcollections must be a list of subcollection paths such as \"reviews\" or \"reviews/likes\"")
        }
        var schemas: [String: RecordSchema] = [:]
        if case .map(let schema)? = top["schema"], let value = schema["subcollections"] {
            guard case .map(let perPath) = value else {
                throw StateFileError(message: "schema.subcollections must map subcollection paths to required-field lists")
            }
            for (path, list) in perPath {
                guard paths.contains(path) else {
                    throw StateFileError(message: "schema.subcollections names '\(path)', which is not in \"subcollections\"")
                }
                guard case .array(let items) = list else {
                    throw StateFileError(message: "schema.subcollections.\(path) must be [{\"name\": …, \"type\": …}, …]")
                }
                let required = RecordSchema(requiredFields: try decodeRequired(items, what: "schema.subcollections.\(path)", fieldsOf: "subcollection '\(path)'"))
                if let problem = problem(idField: idField, schema: required) { throw StateFileError(message: "idField: \(problem)") }
                if let changeField, required.requiredFields.contains(where: { $0.name == changeField }) {
                    throw StateFileError(message: "changeField: '\(changeField)' cannot also be a required field of subcollection '\(path)'")
                }
                schemas[path] = required
            }
        }
        return Subcollections(entries: paths.map { Subcollections.Entry(path: $0, schema: schemas[$0] ?? RecordSchema(requiredFields: [])) })
    }
}
