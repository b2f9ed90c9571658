import BooksyncCore

/// How a document in an answer becomes a `RemoteDocument`: its record, or
/// why it cannot be one (an unreadable entry, a missing revision, values a
/// record file cannot hold).
extension FirestoreRemote {
    /// The revision of a document the server sent without `updateTime`
    /// (real Firestore never does; a proxy or a future API might): not a
    /// timestamp, so no base ever records it, and the document is invalid.
    static let missingRevision = "(no updateTime)"
    static let missingRevisionProblem = RecordDiagnostic(message: "Firestore sent this document without an updateTime, so booksync cannot sync it")

    /// The problem of a document whose JSON the parser refused (`reason`).
    static func unreadableProblem(_ reason: String) -> RecordDiagnostic {
        RecordDiagnostic(message: "Firestore sent this document as JSON booksync cannot read (\(reason))")
    }

    /// What can be read of a document in an entry the parser refused (at
    /// `path` in it): its name, update time and change time, by a scan that
    /// reads nothing else. Without a name it cannot be reported by name, and
    /// the answer is malformed.
    func refusedDocument(_ refused: RefusedEntry, at path: [String], during: String) throws(RemoteError) -> Fields {
        guard let name = JSONParser.string(at: path + ["name"], in: refused.bytes) else {
            throw .malformedResponse(during: during, detail: "an entry without a name that cannot be read: \(refused.reason)")
        }
        var document: Fields = ["name": .string(name)]
        if let time = JSONParser.string(at: path + ["updateTime"], in: refused.bytes) { document["updateTime"] = .string(time) }
        if let field = rules.changeField, let time = JSONParser.string(at: path + ["fields", field, "timestampValue"], in: refused.bytes) {
            document["fields"] = .map([field: .map(["timestampValue": .string(time)])])
        }
        return document
    }

    /// A document body as a record, or the reasons it cannot be one.
    /// `unreadable`: why the parser refused its JSON, when it did; the
    /// document (read by `refusedDocument`) is then invalid for that reason.
    func decodeDocument(_ document: Fields, during: String, unreadable: String? = nil) throws(RemoteError) -> RemoteDocument {
        guard case .string(let name)? = document["name"] else {
            throw .malformedResponse(during: during, detail: "a document without a name")
        }
        let id: RecordID
        switch recordID(fromName: name) {
        case .success(let decoded)?: id = decoded
        case .failure(let problem)?: throw .malformedResponse(during: during, detail: "\(problem.name): \(problem.message)")
        case nil: throw .malformedResponse(during: during, detail: "\(name) is not a document of \(target.collectionPath) or its subcollections")
        }
        let changeTime = rules.changeField.flatMap { Self.changeTime(of: document, field: $0) }
        guard case .string(let revision)? = document["updateTime"] else {
            return RemoteDocument(id: id, revision: Self.missingRevision, content: .invalid([Self.missingRevisionProblem]), changeTime: changeTime)
        }
        if let unreadable {
            return RemoteDocument(id: id, revision: revision, content: .invalid([Self.unreadableProblem(unreadable)]), changeTime: changeTime)
        }
        var rawFields = document["fields"]
        if let changeField = rules.changeField, case .map(var all)? = rawFields {
            all[changeField] = nil  // metadata, not content: whatever it holds cannot make the record invalid
            rawFields = .map(all)
        }
        var fields: Fields
        do {
            fields = try FirestoreValueCodec.decodeFields(rawFields, documentsRoot: documentsRoot)
        } catch {
            return RemoteDocument(id: id, revision: revision, content: .invalid([RecordDiagnostic(message: error.message)]), changeTime: changeTime)
        }
        return RemoteDocument(id: id, revision: revision, content: Self.recordContent(&fields, id: id, rules: rules), changeTime: changeTime)
    }

    /// The record file view of a document: its fields with the record id
    /// mapped by `rules.idField` (see `IDField.record(from:id:)`); `fields`
    /// becomes the record's fields when the mapping succeeds.
    static func recordContent(_ fields: inout Fields, id: RecordID, rules: RecordRules) -> RemoteDocument.Content {
        let untaggable = FirestoreValueCodec.untaggableMaps(in: fields).map {
            RecordDiagnostic(message: "field '\($0)' is a map with a single '$' key, which a record file would read as a tagged value")
        }
        switch rules.record(fromDocument: fields, id: id) {
        case .success(let record):
            fields = record.fields
            return untaggable.isEmpty ? .record(record) : .invalid(untaggable)
        case .failure(let problems):
            return .invalid(untaggable + problems.diagnostics)
        }
    }
}

/// What a listing found so far: revisions, bodies when asked for, and the
/// documents that cannot be records.
struct ListedDocuments {
    let withBodies: Bool
    var listing = RemoteListing()
    var documents: [RecordID: RemoteDocument] = [:]

    /// Adds one listed document; returns its name. `unreadable`: see `FirestoreRemote.decodeDocument`.
    mutating func add(_ document: [String: Value], remote: FirestoreRemote, during: String, unreadable: String? = nil) throws(RemoteError) -> String {
        guard case .string(let name)? = document["name"] else {
            throw .malformedResponse(during: during, detail: "a document without a name")
        }
        switch remote.recordID(fromName: name) {
        case .success(let id)?:
            // Without an updateTime it is listed all the same (never taken for
            // deleted), under a revision no base holds: its body is then read,
            // and is an invalid document, named, like any other.
            if case .string(let revision)? = document["updateTime"] {
                listing.revisions[id] = revision
            } else {
                listing.revisions[id] = FirestoreRemote.missingRevision
            }
            if withBodies { documents[id] = try remote.decodeDocument(document, during: during, unreadable: unreadable) }
        case .failure(let problem)?:
            listing.unusable.append(problem)
        case nil:
            break  // another subcollection that happens to share a configured one's name
        }
        return name
    }
}
