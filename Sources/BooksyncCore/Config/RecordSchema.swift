/// The kinds a required field can be declared with in config.json.
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

/// One required top-level field.
public struct FieldRequirement: Sendable, Equatable {
    /// The top-level field name, byte for byte.
    public let name: String
    /// The kind of value the field must hold.
    public let type: FieldType
    /// A requirement as given; `parse(_:)` checks user text first.
    public init(name: String, type: FieldType) {
        self.name = name
        self.type = type
    }
}

/// What every record of a collection must contain. `id` is always required, is a
/// string, and must equal the id from the file name; the other required fields
/// come from config.json (the Book schema by default).
public struct RecordSchema: Sendable, Equatable {
    /// Required fields besides `id`, in the order canonical files list them.
    public let requiredFields: [FieldRequirement]

    /// A schema requiring `requiredFields`; an `id` entry is dropped, since `id`
    /// is always required as a string.
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
    package var leadingKeys: [String] { ["id"] + requiredFields.map(\.name) }

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

/// A `FIELD:TYPE` argument of `init --require` that cannot be used, with the reason.
package struct RequirementSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reason, as a sentence naming the argument.
    package let message: String
    /// An error with `message` as its whole text.
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

extension RecordSchema {
    /// The schema `init --require` arguments describe: each `FIELD:TYPE` in
    /// order (the order canonical files list them in), or `none` alone for
    /// nothing but `id`. The field name is everything before the last `:`, so
    /// a name with a colon works; types never contain one.
    /// - Throws: `RequirementSyntaxError` for the first argument that is not
    ///   a usable requirement, a field given twice, or `none` with others.
    package static func parse(requirements: [String]) throws(RequirementSyntaxError) -> RecordSchema {
        if requirements.contains("none") {
            guard requirements.count == 1 else {
                throw RequirementSyntaxError("none requires nothing but id, so it cannot be combined with FIELD:TYPE")
            }
            return RecordSchema(requiredFields: [])
        }
        var fields: [FieldRequirement] = []
        for text in requirements {
            let requirement = try FieldRequirement.parse(text)
            guard !fields.contains(where: { $0.name == requirement.name }) else {
                throw RequirementSyntaxError("the field '\(requirement.name)' is given twice")
            }
            fields.append(requirement)
        }
        return RecordSchema(requiredFields: fields)
    }
}

extension FieldRequirement {
    /// `title:string` as a requirement; types are matched without regard to case.
    /// - Throws: `RequirementSyntaxError` for a missing name or type, an
    ///   unknown type, `id`, or a name Firestore or a nested path would not take.
    package static func parse(_ text: String) throws(RequirementSyntaxError) -> FieldRequirement {
        let known = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
        guard let colon = text.lastIndex(of: ":") else {
            throw RequirementSyntaxError("'\(text)' needs a type: FIELD:TYPE such as title:string (types: \(known)), or none alone")
        }
        let name = String(text[..<colon])
        let typeName = String(text[text.index(after: colon)...])
        if name.isEmpty { throw RequirementSyntaxError("'\(text)' has no field name before ':'") }
        if typeName.isEmpty { throw RequirementSyntaxError("'\(text)' has no type after ':' (types: \(known))") }
        guard let type = FieldType(rawValue: typeName.lowercased()) else {
            throw RequirementSyntaxError("unknown type '\(typeName)' in '\(text)' (types: \(known))")
        }
        if name == "id" {
            throw RequirementSyntaxError("'id' is always required (a string equal to the file name); leave it out of --require")
        }
        if name.contains(".") {
            throw RequirementSyntaxError("'\(name)': only top-level fields can be required, and a field name with '.' would read as a nested path")
        }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw RequirementSyntaxError("the field name contains a control character")
        }
        if name.utf8.count > FirestoreLimits.maximumFieldNameBytes {
            throw RequirementSyntaxError("the field name is \(name.utf8.count) bytes; Firestore allows at most \(FirestoreLimits.maximumFieldNameBytes)")
        }
        if name.utf8.count >= 4, name.hasPrefix("__"), name.hasSuffix("__") {
            throw RequirementSyntaxError("'\(name)' is reserved by Firestore (names of the form __name__)")
        }
        return FieldRequirement(name: name, type: type)
    }
}
