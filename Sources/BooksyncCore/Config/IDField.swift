/// Where a Firestore document keeps its record id besides its name
/// (the manual's Firestore article, "The `id` field"; config.json `"idField"`).
///
/// A record file always has `"id"`: it is how a hand-edited file says which
/// record it is, and the schema checks it against the file name. Documents
/// differ by app: one whose DTO has `var id: String` wants the id in the
/// document too (the default, `id`); one with `@DocumentID var id: String?`
/// throws when the document has an `id` field (`none`); some store it under
/// another name (`docId`). `IDField` is that choice, and `document(from:id:)` /
/// `record(from:id:)` are the only place the two shapes are translated.
public enum IDField: Sendable, Equatable, CustomStringConvertible {
    /// The record id is also stored in the document field with this name.
    case field(String)
    /// The record id is only the document's name; documents have no id field.
    case none

    /// `id`: the record id is stored in the document's `id` field, as the record file has it.
    public static let standard = IDField.field("id")

    /// The document field that holds the id, if any.
    public var fieldName: String? {
        if case .field(let name) = self { return name }
        return nil
    }

    /// `id`, `docId`, or `none`, as `init --id-field` takes it.
    public var description: String { fieldName ?? "none" }

    /// Why `name` cannot hold the id in documents, or nil when it can. It must
    /// be a top-level field Firestore accepts, and not `none` (which means no field).
    package static func problem(withFieldName name: String) -> String? {
        if name.isEmpty { return "the id field name is empty; give a field name such as docId, or none" }
        return topLevelFieldProblem(name, what: "the id field name")
    }

    /// Why `name` cannot be a top-level field booksync sets in every document
    /// (the id field, the change field), or nil; `what` names it in the sentence.
    static func topLevelFieldProblem(_ name: String, what: String) -> String? {
        if name.isEmpty { return "\(what) is empty" }
        if name == EditorSchemaHint.key {
            return "'\(name)' is the editor's schema hint in record files, which never syncs; \(what) must be another field"
        }
        if name.utf8.count > FirestoreLimits.maximumFieldNameBytes {
            return "\(what) is \(name.utf8.count) bytes; Firestore allows at most \(FirestoreLimits.maximumFieldNameBytes)"
        }
        if name.utf8.count >= 4, name.hasPrefix("__"), name.hasSuffix("__") {
            return "'\(name)' is reserved by Firestore (names of the form __name__)"
        }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "\(what) contains a control character"
        }
        return nil
    }

    // MARK: record ↔ document

    /// The fields of the document that stores a record: the record's fields
    /// with `id` moved to the id field (`docId`), or left out (`none`).
    /// The inverse of `record(from:id:)` for every valid record.
    package func document(from recordFields: Fields, id: RecordID) -> Fields {
        var document = recordFields
        switch self {
        case .field("id"):
            break
        case .none:
            document["id"] = nil
        case .field(let name):
            document["id"] = nil
            document[name] = .string(id.documentID)
        }
        return document
    }

    /// The record fields of a document named `id`, or why it cannot be a record.
    ///
    /// - `id` (default): the document's fields as they are; a document without
    ///   `id` gets it from its name (the schema then checks a present one).
    /// - `docId`: the value of `docId` becomes the record's `id`; it must be the
    ///   document's name when present, and the name is used when it is absent.
    /// - `none`: `id` comes from the name.
    ///
    /// Under `none` or `docId`, a document with a field `id` of its own is
    /// refused (invalid, named in the report), never mapped: the record file's
    /// `id` is the record id, so that field could not be kept. Dropping it
    /// would make the next push delete it from the document silently, and
    /// keeping it would put a value that is not the record id where the file
    /// names its record. The document stays untouched until someone removes
    /// or renames the field, or switches the collection to `"idField": "id"`.
    package func record(from documentFields: Fields, id: RecordID) -> Result<Fields, RecordFileProblems> {
        var fields = documentFields
        let name = fieldName
        if name == "id" {
            if fields["id"] == nil { fields["id"] = .string(id.documentID) }
            return .success(fields)
        }
        var problems: [String] = []
        if fields["id"] != nil {
            let setting = name.map { "stores the record id in the field '\($0)' (config \"idField\": \"\($0)\")" }
                ?? "keeps the record id out of documents (config \"idField\": null)"
            problems.append("the document has a field 'id', but this collection \(setting); a record file uses 'id' for the record id, "
                + "so that field cannot be kept: remove or rename it in the document, or set \"idField\": \"id\" in .booksync/config.json")
        }
        if let name {
            switch fields[name] {
            case nil, .string(id.documentID)?:
                break
            case .string(let other)?:
                problems.append("field '\(name)' holds the record id (config \"idField\") and must be \"\(id.documentID)\", the document's name; found \"\(other)\"")
            case let other?:
                problems.append("field '\(name)' holds the record id (config \"idField\") and must be the string \"\(id.documentID)\"; found \(other.kindName)")
            }
            fields[name] = nil
        }
        if !problems.isEmpty { return .failure(RecordFileProblems(diagnostics: problems.map { RecordDiagnostic(message: $0) })) }
        fields["id"] = .string(id.documentID)
        return .success(fields)
    }

    /// What a record file may not contain under this setting: a field with the
    /// id field's name (`docId`), which the record id takes in the document.
    package func problems(inRecord fields: Fields) -> [String] {
        guard let name = fieldName, name != "id", fields[name] != nil else { return [] }
        return ["field '\(name)' cannot be in a record file: this collection stores the record id in the documents' field '\(name)' "
            + "(config \"idField\"), where push writes the file's 'id'; rename the field"]
    }
}
