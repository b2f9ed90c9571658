/// The kinds a field can be declared with in config.json.
public enum FieldType: String, Sendable, CaseIterable, Equatable {
    /// One per `Value` kind (`boolean` is `.bool`, `geopoint` `.geoPoint`), plus
    /// `number` (an integer or a double) and `any` (every value, `null` included).
    case string, integer, double, number, boolean, timestamp, bytes, reference, geopoint, map, array, any

    func accepts(_ value: Value) -> Bool {
        switch (self, value) {
        case (.any, _): true
        case (.string, .string), (.integer, .integer), (.double, .double), (.boolean, .bool),
             (.timestamp, .timestamp), (.bytes, .bytes), (.reference, .reference),
             (.geopoint, .geoPoint), (.array, .array), (.map, .map): true
        case (.number, .integer), (.number, .double): true
        default: false
        }
    }
}

/// One declared field: its name, its type, for strings the values it may
/// take, for a map the fields it declares, and for an array its items' type.
/// Required fields must be present; optional ones may be missing or `null`,
/// and otherwise hold their type.
public struct FieldRequirement: Sendable, Equatable {
    /// The field name, byte for byte.
    public let name: String
    /// The kind of value the field must hold.
    public let type: FieldType
    /// The only strings the field may hold (config `"enum"`), in the order
    /// given; nil for any value of `type`. Only string fields have them.
    public let allowedValues: [String]?
    /// The field's meaning (config `"description"`), shown by editors on hover.
    public let description: String?
    /// A short name for the field (config `"title"`): editors show it, and a
    /// plan's Markdown names the field by it beside its path.
    public let title: String?
    /// For a map: the fields it declares (config `"required"`/`"optional"`
    /// inside the field's entry), checked like a record's; nil for any map.
    public let mapFields: DeclaredFields?
    /// For an array: the type every item must have (config `"items"`); nil
    /// for any value but an array (Firestore has no arrays in arrays).
    public let itemType: FieldType?

    /// `allowedValues` as a set, so that checking a value costs one look-up
    /// however many there are (`isAllowed(_:)`).
    private let allowedSet: Set<String>?

    /// The most values an `"enum"` may list. A config.json may come with a
    /// clone, and an enumeration of thousands is a list of data, not a rule
    /// (declare such a field a plain string).
    package static let maximumAllowedValues = 10_000

    /// A declaration as given; `parse(_:)` and config decoding check user text first.
    public init(name: String, type: FieldType, allowedValues: [String]? = nil, description: String? = nil,
                mapFields: DeclaredFields? = nil, itemType: FieldType? = nil) {
        self.init(name: name, type: type, allowedValues: allowedValues, description: description, mapFields: mapFields, itemType: itemType, title: nil)
    }

    /// A declaration with a short `title` (config `"title"`) as well.
    public init(name: String, type: FieldType, allowedValues: [String]? = nil, description: String? = nil,
                mapFields: DeclaredFields? = nil, itemType: FieldType? = nil, title: String?) {
        self.title = title
        self.name = name
        self.type = type
        self.allowedValues = allowedValues
        self.allowedSet = allowedValues.map(Set.init)
        self.description = description
        self.mapFields = mapFields
        self.itemType = itemType
    }

    /// Whether `text` is one of `allowedValues` byte for byte. The set finds
    /// a value equal as a Swift string (canonically equivalent); only when
    /// that one's bytes differ can another with the same bytes be listed too.
    func isAllowed(_ text: String) -> Bool {
        guard let allowedValues, let allowedSet else { return true }
        guard let index = allowedSet.firstIndex(of: text) else { return false }
        return allowedSet[index].utf8.elementsEqual(text.utf8) || allowedValues.contains { $0.utf8.elementsEqual(text.utf8) }
    }

    /// Every way `value` does not fit this declaration, as sentences naming
    /// `path` (the field's name, or its path inside a map: `printing.copies`).
    func problems(with value: Value, path: String) -> [String] {
        if !type.accepts(value) {
            return ["field '\(path)' must be \(type.rawValue), found \(value.kindName)"]
        }
        switch value {
        case .string(let text):
            if let allowedValues, !isAllowed(text) {
                // Up to 10 named, so a long enumeration does not bury the sentence.
                var list = allowedValues.prefix(10).map { "\"\(TerminalEscaping.abbreviate($0))\"" }.joined(separator: ", ")
                if allowedValues.count > 10 { list += ", … (\(allowedValues.count) values in all)" }
                return ["field '\(path)' must be one of \(list); found \"\(TerminalEscaping.abbreviate(text))\""]
            }
        case .map(let fields):
            // Undeclared keys inside are `undeclared(in:…)`'s to report, once, from the top.
            if let mapFields { return mapFields.problems(in: fields, path: path, strictness: .off) }
        case .array(let items):
            if let itemType {
                return items.indices.compactMap { i in
                    itemType.accepts(items[i]) ? nil : "field '\(path)[\(i)]' must be \(itemType.rawValue), found \(items[i].kindName)"
                }
            }
        default:
            break
        }
        return []
    }
}

/// The fields a record or a map declares: required ones, then optional ones.
public struct DeclaredFields: Sendable, Equatable {
    /// Fields that must be present, in the order canonical files list a record's.
    public let required: [FieldRequirement]
    /// Fields that may be present, with the type (and values) they must hold then.
    public let optional: [FieldRequirement]

    /// The given lists, as they are.
    public init(required: [FieldRequirement], optional: [FieldRequirement] = []) {
        self.required = required
        self.optional = optional
    }

    /// Every declared field: the required ones, then the optional ones.
    package var all: [FieldRequirement] { required + optional }

    /// How many fields these declare, counting those of declared maps at every depth.
    package var count: Int {
        all.reduce(0) { $0 + 1 + ($1.mapFields?.count ?? 0) }
    }

    /// Every way `fields` breaks these declarations, as sentences naming the
    /// field by its path (`path` is the map's own, nil for a record's top level).
    /// - Parameter extraNames: Names allowed besides the declared ones (`id`).
    func problems(in fields: Fields, path: String?, strictness: SchemaStrictness, extraNames: Set<String> = []) -> [String] {
        func pathOf(_ name: String) -> String { path.map { "\($0).\(name)" } ?? name }
        var problems: [String] = []
        for requirement in required {
            guard let value = fields.exactly(requirement.name) else {
                problems.append("missing required field '\(pathOf(requirement.name))' (\(requirement.type.rawValue))")
                continue
            }
            problems += requirement.problems(with: value, path: pathOf(requirement.name))
        }
        for declaration in optional {
            // An optional field may be absent or null (a Swift optional written as null).
            guard let value = fields.exactly(declaration.name), value != .null else { continue }
            problems += declaration.problems(with: value, path: pathOf(declaration.name))
        }
        if strictness == .error { problems += undeclared(in: fields, path: path, strictness: strictness, extraNames: extraNames) }
        return problems
    }

    /// One sentence per field that is not declared, here and in declared
    /// maps below, in canonical key order.
    func undeclared(in fields: Fields, path: String?, strictness: SchemaStrictness, extraNames: Set<String> = []) -> [String] {
        func pathOf(_ name: String) -> String { path.map { "\($0).\(name)" } ?? name }
        var sentences: [String] = []
        let declared = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for key in fields.keys.sorted(by: CanonicalJSON.utf8Less) {
            // Byte for byte, as Firestore and JSON Schema compare names (`exactly`).
            if let declaration = declared[key], declaration.name.utf8.elementsEqual(key.utf8) {
                if let nested = declaration.mapFields, case .map(let inner)? = fields[key] {
                    sentences += nested.undeclared(in: inner, path: pathOf(key), strictness: strictness)
                }
            } else if !extraNames.contains(where: { $0.utf8.elementsEqual(key.utf8) }) {
                sentences.append("field '\(TerminalEscaping.abbreviate(pathOf(key)))' is not in the schema (config schema \"strict\": \"\(strictness.rawValue)\"); "
                    + "declare it in .booksync/config.json, or remove it")
            }
        }
        return sentences
    }
}

/// What a record's fields beyond the declared ones mean (config `"strict"`).
public enum SchemaStrictness: String, Sendable, CaseIterable, Equatable {
    /// Any other field is allowed (the default).
    case off
    /// Other fields are allowed, and `validate` warns about each.
    case warning
    /// Other fields make the record invalid, like a missing required field.
    case error
}

/// What every record of a collection must contain. `id` is always required, is a
/// string, and must equal the id from the file name; the other fields come
/// from config.json (the Book schema by default). One source of truth: the
/// checks below and the JSON Schema for editors (`JSONSchemaDocument`) are
/// both made from it.
public struct RecordSchema: Sendable, Equatable {
    /// Required fields besides `id`, in the order canonical files list them.
    public let requiredFields: [FieldRequirement]
    /// Fields a record may have, with the type (and values) they must hold when present.
    public let optionalFields: [FieldRequirement]
    /// Whether fields the schema does not declare are allowed, warned about, or refused.
    public let strictness: SchemaStrictness
    /// A name for the records (config `schema.title`), for editors and generated types.
    public let title: String?
    /// What the records are (config `schema.description`), for editors' hover docs.
    public let description: String?

    /// A schema requiring `requiredFields`; an `id` entry is dropped from
    /// either list, since `id` is always required as a string.
    public init(requiredFields: [FieldRequirement], optionalFields: [FieldRequirement] = [], strictness: SchemaStrictness = .off,
                title: String? = nil, description: String? = nil) {
        self.requiredFields = requiredFields.filter { $0.name != "id" }
        self.optionalFields = optionalFields.filter { $0.name != "id" }
        self.strictness = strictness
        self.title = title
        self.description = description
    }

    /// Nothing but `id`: the schema of a subcollection nobody described.
    public static let idOnly = RecordSchema(requiredFields: [])

    /// `title`, `author` and `genre`, all strings.
    public static let books = RecordSchema(requiredFields: [
        FieldRequirement(name: "title", type: .string),
        FieldRequirement(name: "author", type: .string),
        FieldRequirement(name: "genre", type: .string),
    ])

    /// Canonical files list these keys first, in this order.
    package var leadingKeys: [String] { ["id"] + requiredFields.map(\.name) }

    /// "a required field" or "an optional field", for sentences about `field`.
    package func kind(of field: FieldRequirement) -> String {
        requiredFields.contains(field) ? "a required field" : "an optional field"
    }

    /// Every declared field besides `id`: the required ones, then the optional ones.
    package var declaredFields: [FieldRequirement] { requiredFields + optionalFields }

    /// The declaration of the field at `path` (inside declared maps for a
    /// deeper path); nil when it is not declared.
    package func declaration(at path: FieldPath) -> FieldRequirement? {
        var fields = declared
        var found: FieldRequirement?
        for segment in path.segments {
            guard let field = fields.all.first(where: { $0.name.utf8.elementsEqual(segment.utf8) }) else { return nil }
            found = field
            fields = field.mapFields ?? DeclaredFields(required: [], optional: [])
        }
        return found
    }

    /// Names a record has besides its declared fields: `id`. One set for every
    /// record checked, not one made per record on the load path.
    static let recordOnlyNames: Set<String> = ["id"]

    /// The declared fields besides `id`, as one value.
    package var declared: DeclaredFields { DeclaredFields(required: requiredFields, optional: optionalFields) }

    /// Every way `fields` breaks the schema, as sentences naming the field.
    package func problems(in fields: Fields, id: RecordID) -> [String] {
        var problems: [String] = []
        switch fields["id"] {
        case nil:
            problems.append("missing required field 'id' (it must be \"\(id.documentID)\", the id from the file name)")
        case .string(let value)?:
            if value != id.documentID {
                problems.append("field 'id' is \"\(value)\" but the file name says \"\(id.documentID)\"; rename the file or fix the field")
            }
        case let other?:
            problems.append("field 'id' must be a string, found \(other.kindName)")
        }
        return problems + declared.problems(in: fields, path: nil, strictness: strictness, extraNames: Self.recordOnlyNames)
    }

    /// What `validate` warns about but accepts: fields the schema does not
    /// declare, when `strictness` is `.warning`.
    package func warnings(in fields: Fields) -> [String] {
        strictness == .warning ? declared.undeclared(in: fields, path: nil, strictness: strictness, extraNames: Self.recordOnlyNames) : []
    }
}


extension Dictionary where Key == String, Value == BooksyncCore.Value {
    /// The value under `name` byte for byte. The subscript also finds a key
    /// that is only canonically equivalent (`cafe\u{301}` for `café`), which
    /// Firestore and JSON Schema treat as another field.
    func exactly(_ name: String) -> BooksyncCore.Value? {
        guard let index = index(forKey: name), self[index].key.utf8.elementsEqual(name.utf8) else { return nil }
        return self[index].value
    }
}
