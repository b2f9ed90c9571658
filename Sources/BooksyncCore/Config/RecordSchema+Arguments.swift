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
            return .idOnly
        }
        var required: [FieldRequirement] = []
        for text in requirements {
            let requirement = try FieldRequirement.parse(text)
            guard !required.contains(where: { $0.name == requirement.name }) else {
                throw RequirementSyntaxError("the field '\(requirement.name)' is given twice")
            }
            required.append(requirement)
        }
        return RecordSchema(requiredFields: required)
    }

    /// This schema with the fields `init --optional FIELD:TYPE` declares and
    /// what `init --strict` says of the others.
    /// - Throws: `RequirementSyntaxError` for the first argument that is not
    ///   a usable declaration, or a field already declared.
    package func adding(optional: [String], strictness: SchemaStrictness) throws(RequirementSyntaxError) -> RecordSchema {
        var optionalFields = optionalFields
        for text in optional {
            let declaration = try FieldRequirement.parse(text, option: "--optional")
            guard !declaredFields.contains(where: { $0.name == declaration.name }),
                  !optionalFields.contains(where: { $0.name == declaration.name }) else {
                throw RequirementSyntaxError("the field '\(declaration.name)' is given twice (a field is either required or optional)")
            }
            optionalFields.append(declaration)
        }
        return RecordSchema(requiredFields: requiredFields, optionalFields: optionalFields, strictness: strictness, title: title, description: description)
    }
}

extension FieldRequirement {
    /// `title:string` as a requirement; types are matched without regard to case.
    /// - Throws: `RequirementSyntaxError` for a missing name or type, an
    ///   unknown type, `id`, or a name Firestore or a nested path would not take.
    /// - Parameters:
    ///   - text: The option's value as typed: `NAME:TYPE`.
    ///   - option: The option the text came with (`--require`, whose
    ///     `none` stands alone; `--optional`), for the sentences.
    package static func parse(_ text: String, option: String = "--require") throws(RequirementSyntaxError) -> FieldRequirement {
        let known = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
        guard let colon = text.lastIndex(of: ":") else {
            let none = option == "--require" ? ", or none alone" : ""
            throw RequirementSyntaxError("'\(text)' needs a type: FIELD:TYPE such as title:string (types: \(known))\(none)")
        }
        let name = String(text[..<colon])
        let typeName = String(text[text.index(after: colon)...])
        if name.isEmpty { throw RequirementSyntaxError("'\(text)' has no field name before ':'") }
        if typeName.isEmpty { throw RequirementSyntaxError("'\(text)' has no type after ':' (types: \(known))") }
        guard let type = FieldType(rawValue: typeName.lowercased()) else {
            throw RequirementSyntaxError("unknown type '\(typeName)' in '\(text)' (types: \(known))")
        }
        if name == "id" {
            throw RequirementSyntaxError("'id' is always required (a string equal to the file name); leave it out of \(option)")
        }
        if let problem = nameProblem(name) { throw RequirementSyntaxError(problem) }
        return FieldRequirement(name: name, type: type)
    }

    /// Why `name` cannot be declared in a schema, or nil: it must be a
    /// top-level field Firestore takes, and not the editor's `$schema` hint.
    package static func nameProblem(_ name: String) -> String? {
        if name.isEmpty { return "a field name cannot be empty" }
        if name == EditorSchemaHint.key {
            return "'\(name)' is the editor's schema hint in record files, never a field; it cannot be declared"
        }
        if name.contains(".") {
            return "'\(TerminalEscaping.abbreviate(name))': only top-level fields can be declared, and a field name with '.' would read as a nested path"
        }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "the field name contains a control character"
        }
        if name.utf8.count > FirestoreLimits.maximumFieldNameBytes {
            return "the field name is \(name.utf8.count) bytes; Firestore allows at most \(FirestoreLimits.maximumFieldNameBytes)"
        }
        if name.utf8.count >= 4, name.hasPrefix("__"), name.hasSuffix("__") {
            return "'\(name)' is reserved by Firestore (names of the form __name__)"
        }
        return nil
    }
}
