/// The kinds a required field can be declared with in config.json.
public enum FieldType: String, Sendable, CaseIterable, Equatable {
    case string, integer, double, number, boolean, timestamp, bytes, reference, geopoint, array, map, any

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

/// One required top-level field.
public struct FieldRequirement: Sendable, Equatable {
    public let name: String
    public let type: FieldType
    public init(name: String, type: FieldType) {
        self.name = name
        self.type = type
    }
}

/// What every record of a collection must contain. `id` is always required, is a
/// string, and must equal the id from the file name; the other required fields
/// come from config.json (the Book schema by default).
public struct RecordSchema: Sendable, Equatable {
    public let requiredFields: [FieldRequirement]

    public init(requiredFields: [FieldRequirement]) {
        self.requiredFields = requiredFields.filter { $0.name != "id" }
    }

    /// `title`, `author` and `genre`, all strings.
    public static let books = RecordSchema(requiredFields: [
        FieldRequirement(name: "title", type: .string),
        FieldRequirement(name: "author", type: .string),
        FieldRequirement(name: "genre", type: .string),
    ])

    /// Canonical files list these keys first, in this order.
    public var leadingKeys: [String] { ["id"] + requiredFields.map(\.name) }

    /// Every way `fields` breaks the schema, as sentences naming the field.
    public func problems(in fields: Fields, id: RecordID) -> [String] {
        var problems: [String] = []
        switch fields["id"] {
        case nil:
            problems.append("missing required field 'id' (it must be \"\(id.rawValue)\", the id from the file name)")
        case .string(let value)?:
            if value != id.rawValue {
                problems.append("field 'id' is \"\(value)\" but the file name says \"\(id.rawValue)\"; rename the file or fix the field")
            }
        case let other?:
            problems.append("field 'id' must be a string, found \(other.kindName)")
        }
        for requirement in requiredFields {
            guard let value = fields[requirement.name] else {
                problems.append("missing required field '\(requirement.name)' (\(requirement.type.rawValue))")
                continue
            }
            if !requirement.type.accepts(value) {
                problems.append("field '\(requirement.name)' must be \(requirement.type.rawValue), found \(value.kindName)")
            }
        }
        return problems
    }
}
