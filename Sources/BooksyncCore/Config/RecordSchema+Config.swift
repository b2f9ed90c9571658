/// config.json's `"schema"` object, and a subcollection's under
/// `schema.subcollections`:
///
/// ```json
/// {"title": "Book", "description": "…", "strict": "error",
///  "required": [{"name": "genre", "type": "string", "enum": ["fiction", "poetry"]}],
///  "optional": [{"name": "year", "type": "integer", "description": "first published"}]}
/// ```
///
/// A subcollection with nothing but required fields is written as the bare
/// list, as before the other keys existed, so older configs read unchanged.
extension RecordSchema {
    /// The keys a schema object may have; any other is refused as a likely typo.
    static let configKeys: Set<String> = ["title", "description", "required", "optional", "strict"]

    /// This schema as config.json keeps it: `required`, and the other keys when set.
    package var configFields: Fields {
        var fields: Fields = ["required": .array(requiredFields.map(\.configValue))]
        if !optionalFields.isEmpty { fields["optional"] = .array(optionalFields.map(\.configValue)) }
        if strictness != .off { fields["strict"] = .string(strictness.rawValue) }
        if let title { fields["title"] = .string(title) }
        if let description { fields["description"] = .string(description) }
        return fields
    }

    /// A subcollection's schema as config.json keeps it: the required-field
    /// list alone when that is all it says, else the whole object.
    package var subcollectionConfigValue: Value {
        optionalFields.isEmpty && strictness == .off && title == nil && description == nil
            ? .array(requiredFields.map(\.configValue)) : .map(configFields)
    }

    /// Reads a schema object (or, for a subcollection, a bare required-field
    /// list). The file may come from a stranger's clone, so every name, type
    /// and value list is checked.
    /// - Parameters:
    ///   - value: The object or list.
    ///   - what: Where it is in config.json (`schema`, `schema.subcollections.reviews`), for errors.
    ///   - extraKeys: Keys the caller reads itself (`subcollections` at the top).
    /// - Throws: `StateFileError` naming the key and field.
    package static func decode(config value: Value, what: String, extraKeys: Set<String> = []) throws(StateFileError) -> RecordSchema {
        let object: Fields
        switch value {
        case .array:
            object = ["required": value]
        case .map(let fields):
            object = fields
        default:
            throw StateFileError(message: "\(what) must be {\"required\": [{\"name\": …, \"type\": …}, …]}")
        }
        if let unknown = object.keys.filter({ !configKeys.contains($0) && !extraKeys.contains($0) }).sorted(by: CanonicalJSON.utf8Less).first {
            let known = (configKeys.union(extraKeys)).sorted().joined(separator: ", ")
            throw StateFileError(message: "\(what) has an unknown key '\(TerminalEscaping.abbreviate(unknown))' (known: \(known))")
        }
        guard case .array(let requiredItems)? = object["required"] else {
            throw StateFileError(message: "\(what) must be {\"required\": [{\"name\": …, \"type\": …}, …]}")
        }
        var names: Set<String> = []
        let required = try decodeFields(requiredItems, what: "\(what).required", names: &names)
        var optional: [FieldRequirement] = []
        switch object["optional"] {
        case nil, .null?: break
        case .array(let items)?: optional = try decodeFields(items, what: "\(what).optional", names: &names)
        case .some: throw StateFileError(message: "\(what).optional must be [{\"name\": …, \"type\": …}, …]")
        }
        let declared = DeclaredFields(required: required, optional: optional).count
        guard declared <= FirestoreLimits.maximumFieldCount else {
            throw StateFileError(message: "\(what) declares \(declared) fields (counting those inside maps); a Firestore document holds "
                + "at most \(FirestoreLimits.maximumFieldCount), and booksync reads no more")
        }
        var strictness = SchemaStrictness.off
        switch object["strict"] {
        case nil, .null?, .bool(false)?: break
        case .string(let text)? where SchemaStrictness(rawValue: text) != nil: strictness = SchemaStrictness(rawValue: text)!
        case .some: throw StateFileError(message: "\(what).strict must be \"warning\", \"error\" or \"off\"")
        }
        return RecordSchema(requiredFields: required, optionalFields: optional, strictness: strictness,
                            title: try text(object["title"], what: "\(what).title"),
                            description: try text(object["description"], what: "\(what).description"))
    }

    /// A field list, checked: known types, usable names, no name twice (nor
    /// one of `names`, the level's names so far, which these join), value
    /// lists only for strings; `id` is dropped (always required). A set, so
    /// that a cloned config of many fields costs each one look-up.
    /// - Parameter depth: The fields' level in a record (1 at the top), for
    ///   Firestore's 20 levels; below the top, `id` is an ordinary name.
    private static func decodeFields(_ items: [Value], what: String, names: inout Set<String>, depth: Int = 1) throws(StateFileError) -> [FieldRequirement] {
        var fields: [FieldRequirement] = []
        for item in items {
            guard let field = try decodeField(item, what: what, depth: depth) else { continue }
            guard names.insert(field.name).inserted else {
                throw StateFileError(message: "\(what) lists '\(TerminalEscaping.abbreviate(field.name))' twice (a field is either required or optional, once)")
            }
            fields.append(field)
        }
        return fields
    }

    /// The keys a field entry may have.
    static let fieldKeys = ["name", "type", "title", "enum", "description", "required", "optional", "items"]

    /// One entry of a field list; nil for a top-level `id`, which is always required.
    private static func decodeField(_ item: Value, what: String, depth: Int) throws(StateFileError) -> FieldRequirement? {
        guard case .map(let m) = item, case .string(let name)? = m["name"], case .string(let typeName)? = m["type"] else {
            throw StateFileError(message: "each \(what) entry needs \"name\" and \"type\" strings")
        }
        let field = "\(what) field '\(TerminalEscaping.abbreviate(name))'"
        if let unknown = m.keys.filter({ !fieldKeys.contains($0) }).sorted().first {
            throw StateFileError(message: "\(field) has an unknown key '\(TerminalEscaping.abbreviate(unknown))' (known: \(fieldKeys.joined(separator: ", ")))")
        }
        guard let type = FieldType(rawValue: typeName) else {
            let known = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
            throw StateFileError(message: "\(field): unknown type '\(TerminalEscaping.abbreviate(typeName))' (known: \(known))")
        }
        if name == "id", depth == 1 { return nil }
        if let problem = FieldRequirement.nameProblem(name) { throw StateFileError(message: "\(what): \(problem)") }
        if type == .map || type == .array, depth >= FirestoreLimits.maximumDepth {
            throw StateFileError(message: "\(field): \(type == .map ? "a map" : "an array") here would be nested more than \(FirestoreLimits.maximumDepth) levels deep; Firestore allows \(FirestoreLimits.maximumDepth)")
        }
        return FieldRequirement(name: name, type: type, allowedValues: try allowedValues(m["enum"], type: type, field: field),
                                description: try text(m["description"], what: "\(field) description"),
                                mapFields: try mapFields(m, type: type, field: field, depth: depth),
                                itemType: try itemType(m["items"], type: type, field: field),
                                title: try text(m["title"], what: "\(field) title"))
    }

    /// `"enum"`: distinct strings, for a string field only, at most
    /// `FieldRequirement.maximumAllowedValues`; duplicates found with a set.
    private static func allowedValues(_ list: Value?, type: FieldType, field: String) throws(StateFileError) -> [String]? {
        guard let list else { return nil }
        guard type == .string else { throw StateFileError(message: "\(field): \"enum\" lists allowed strings, so the type must be string") }
        guard case .array(let values) = list, !values.isEmpty else {
            throw StateFileError(message: "\(field): \"enum\" must be a non-empty list of strings")
        }
        guard values.count <= FieldRequirement.maximumAllowedValues else {
            throw StateFileError(message: "\(field): \"enum\" lists \(values.count) values; booksync takes at most "
                + "\(FieldRequirement.maximumAllowedValues) (for more, declare the field a plain string)")
        }
        var strings: [String] = []
        var seen: Set<String> = []
        for value in values {
            guard case .string(let s) = value else { throw StateFileError(message: "\(field): \"enum\" must be a non-empty list of strings") }
            guard seen.insert(s).inserted else { throw StateFileError(message: "\(field): \"enum\" lists \"\(TerminalEscaping.abbreviate(s))\" twice") }
            strings.append(s)
        }
        return strings
    }

    /// A map field's own `"required"` and `"optional"` fields, one level down.
    private static func mapFields(_ m: Fields, type: FieldType, field: String, depth: Int) throws(StateFileError) -> DeclaredFields? {
        guard m["required"] != nil || m["optional"] != nil else { return nil }
        guard type == .map else {
            throw StateFileError(message: "\(field): \"required\" and \"optional\" declare a map's fields, so the type must be map")
        }
        func list(_ key: String) throws(StateFileError) -> [Value] {
            switch m[key] {
            case nil, .null?: return []
            case .array(let items)?: return items
            case .some: throw StateFileError(message: "\(field): \"\(key)\" must be [{\"name\": …, \"type\": …}, …]")
            }
        }
        var names: Set<String> = []
        let required = try decodeFields(try list("required"), what: "\(field).required", names: &names, depth: depth + 1)
        let optional = try decodeFields(try list("optional"), what: "\(field).optional", names: &names, depth: depth + 1)
        return DeclaredFields(required: required, optional: optional)
    }

    /// An array field's `"items"`: a type name, never `array`.
    private static func itemType(_ items: Value?, type: FieldType, field: String) throws(StateFileError) -> FieldType? {
        guard let items else { return nil }
        guard type == .array else { throw StateFileError(message: "\(field): \"items\" gives an array's item type, so the type must be array") }
        guard case .string(let itemName) = items, let item = FieldType(rawValue: itemName), item != .array else {
            let known = FieldType.allCases.filter { $0 != .array }.map(\.rawValue).joined(separator: ", ")
            throw StateFileError(message: "\(field): \"items\" must be a type name (\(known); Firestore has no arrays in arrays)")
        }
        return item
    }

    private static func text(_ value: Value?, what: String) throws(StateFileError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let s)?: return s
        case .some: throw StateFileError(message: "\(what) must be a string")
        }
    }
}

extension FieldRequirement {
    /// `{"name": …, "type": …}`, with `enum`, `description` and `title` when set.
    var configValue: Value {
        var fields: Fields = ["name": .string(name), "type": .string(type.rawValue)]
        if let allowedValues { fields["enum"] = .array(allowedValues.map(Value.string)) }
        if let description { fields["description"] = .string(description) }
        if let title { fields["title"] = .string(title) }
        if let mapFields {
            fields["required"] = .array(mapFields.required.map(\.configValue))
            if !mapFields.optional.isEmpty { fields["optional"] = .array(mapFields.optional.map(\.configValue)) }
        }
        if let itemType { fields["items"] = .string(itemType.rawValue) }
        return .map(fields)
    }
}
