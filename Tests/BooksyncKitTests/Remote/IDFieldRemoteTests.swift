import Testing
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The Firestore remote sends and reads documents through the collection's
/// `idField` setting: what goes on the wire, and what a wire document becomes.
@Suite struct IDFieldRemoteTests {
    static let target = FirestoreTarget(project: "p", collectionPath: "users")
    static let root = "projects/p/databases/(default)/documents"

    static func remote(_ idField: IDField) -> FirestoreRemote {
        let config = CollectionConfig(remote: target, schema: RecordSchema(requiredFields: [FieldRequirement(name: "name", type: .string)]), idField: idField)
        let endpoint = FirestoreEndpoint(baseURL: "http://127.0.0.1:9/v1/", isEmulator: true, tokens: AccessTokens(source: .fixed("t")))
        return FirestoreRemote(target: target, endpoint: endpoint, rules: config.rules, transport: ScriptedTransport([]).transport)
    }

    static let ada = try! RecordID("ada")

    static func record(_ remote: FirestoreRemote) throws -> CanonicalRecord {
        try remote.rules.load(Array("{\"id\": \"ada\", \"name\": \"Ada\"}".utf8), id: ada).get()
    }

    /// (setting, the `fields` of every create and update on the wire)
    static let wire: [(IDField, String)] = [
        (.standard, #"{"id": {"stringValue": "ada"}, "name": {"stringValue": "Ada"}}"#),
        (.none, #"{"name": {"stringValue": "Ada"}}"#),
        (.field("docId"), #"{"docId": {"stringValue": "ada"}, "name": {"stringValue": "Ada"}}"#),
    ]

    @Test(arguments: wire)
    func writesCarryTheIDWhereTheSettingSays(setting: IDField, fields: String) throws {
        let remote = Self.remote(setting)
        let record = try Self.record(remote)
        for write in [RemoteWrite.create(record), .update(record, baseRevision: "2024-01-01T00:00:00Z")] {
            guard case .map(let body) = remote.encode(write), case .map(let update)? = body["update"], let wireFields = update["fields"] else {
                Issue.record("no update in \(write)")
                continue
            }
            #expect(CanonicalJSON.encodeInline(wireFields) == fields)
            #expect(update["name"] == .string(Self.root + "/users/ada"))
        }
    }

    /// A document as the server returns it, through `decodeDocument`.
    static func document(_ fields: String) throws -> Fields {
        let text = #"{"name": "\#(root)/users/ada", "updateTime": "2024-01-01T00:00:00.000001Z", "fields": \#(fields)}"#
        guard case .map(let document) = try JSONParser.parse(Array(text.utf8), decodeTags: false) else { throw RecordFileProblems(diagnostics: []) }
        return document
    }

    /// What the server sends back for each setting pulls as the same record;
    /// an `id` field where the setting keeps none makes the document invalid.
    @Test(arguments: wire)
    func readsMapTheIDBack(setting: IDField, fields: String) throws {
        let remote = Self.remote(setting)
        let decoded = try remote.decodeDocument(try Self.document(fields), during: "test")
        #expect(decoded.content == .record(try Self.record(remote)))
        #expect(decoded.record?.hash == (try Self.record(Self.remote(.standard))).hash)
    }

    @Test(arguments: [IDField.none, .field("docId")])
    func anIDFieldWhereNoneBelongsIsInvalid(setting: IDField) throws {
        let decoded = try Self.remote(setting).decodeDocument(try Self.document(#"{"id": {"stringValue": "ada"}, "name": {"stringValue": "Ada"}}"#), during: "test")
        guard case .invalid(let problems) = decoded.content else {
            Issue.record("expected invalid, got \(decoded.content)")
            return
        }
        #expect(problems.count == 1)
        #expect(problems[0].message.hasPrefix("the document has a field 'id', but this collection "))
    }
}
