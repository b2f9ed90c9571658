import Foundation
import Testing
@testable import BooksyncCore

/// The change mark (<doc:Firestore> ("What a command costs")): where it is put, how it is
/// kept in the manifest, how a git merge treats it, and the config that turns it on.
@Suite struct ChangeMarkTests {
    static func time(_ text: String) -> Timestamp { try! Timestamp(rfc3339: text) }

    /// (read time, unrecorded documents' change times, expected mark; nil: none).
    static let marks: [(String?, [String?], String?)] = [
        // A minute before the read: writes processed before then were committed by the read.
        ("2026-12-01T10:00:00.123456Z", [], "2026-12-01T09:59:00.123456Z"),
        // Nanosecond read times are truncated (earlier, so still safe).
        ("2026-12-01T10:00:00.123456789Z", [], "2026-12-01T09:59:00.123456Z"),
        // An unrecorded document (a conflict) stays after the mark, at its own time.
        ("2026-12-01T10:00:00Z", ["2026-12-01T08:00:00.5Z"], "2026-12-01T08:00:00.500000Z"),
        ("2026-12-01T10:00:00Z", ["2026-12-01T09:59:30Z", "2026-12-01T07:00:00Z"], "2026-12-01T07:00:00.000000Z"),
        // One that is newer than the mark changes nothing.
        ("2026-12-01T10:00:00Z", ["2026-12-01T09:59:59Z"], "2026-12-01T09:59:00.000000Z"),
        // No change time (written without the field, or never read): no query finds it, so no mark.
        ("2026-12-01T10:00:00Z", [nil], nil),
        ("2026-12-01T10:00:00Z", ["not a time"], nil),
        // No read time (a server that pages with documents.list): no mark.
        (nil, [], nil),
        ("yesterday", [], nil),
        // Near the start of time the mark does not underflow.
        ("0001-01-01T00:00:30Z", [], "0001-01-01T00:00:00.000000Z"),
    ]

    @Test(arguments: marks)
    func markAfterARead(readTime: String?, unrecorded: [String?], expected: String?) {
        let mark = ChangeMark.after(field: "updatedAt", readTime: readTime, unrecorded: unrecorded)
        #expect(mark?.time.rfc3339 == expected)
        if let mark { #expect(mark.field == "updatedAt") }
    }

    @Test func theManifestKeepsTheMarkAndBothParsersReadIt() throws {
        let entries = [try RecordID("dune"): BaseEntry(hash: ContentHash(text: "sha256:" + String(repeating: "a", count: 64)), revision: "2026-01-01T00:00:00.1Z")]
        for field in ["updatedAt", "updated at", "quote\"d", "ünïcode"] {
            let manifest = Manifest(entries: entries, configFingerprint: "sha256:c", changesSince: ChangeMark(field: field, time: Self.time("2026-12-01T09:59:00.123456Z")))
            let bytes = manifest.encoded()
            #expect(String(decoding: bytes, as: UTF8.self).contains("  \"changesSince\": {\"field\": "))
            #expect(try Manifest.decode(bytes) == manifest, "\(field)")
            // The full parser (a reformatted manifest) reads the same.
            let reformatted = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\n", with: "\n  ")
            #expect(try Manifest.decode(Array(reformatted.utf8)) == manifest, "\(field), reformatted")
            if field == "updatedAt" { #expect(Manifest.decodeCanonical(bytes) == manifest, "the fast path reads it") }
        }
        let empty = Manifest(changesSince: ChangeMark(field: "updatedAt", time: Self.time("2026-12-01T00:00:00Z")))
        #expect(try Manifest.decode(empty.encoded()) == empty)
        #expect(!String(decoding: Manifest(entries: entries).encoded(), as: UTF8.self).contains("changesSince"))
    }

    @Test(arguments: [
        #"{"version": 1, "changesSince": "2026-12-01T00:00:00Z", "records": {}}"#,
        #"{"version": 1, "changesSince": {"field": "updatedAt"}, "records": {}}"#,
        #"{"version": 1, "changesSince": {"field": "updatedAt", "time": "last tuesday"}, "records": {}}"#,
        #"{"version": 1, "changesSince": {"field": 7, "time": "2026-12-01T00:00:00Z"}, "records": {}}"#,
    ])
    func aDamagedMarkIsAnErrorNamingIt(text: String) {
        #expect {
            try Manifest.decode(Array(text.utf8))
        } throws: { error in
            (error as? StateFileError)?.message.contains("\"changesSince\" must be") == true
        }
    }

    /// (base, ours, theirs marks; whether each side changed entries; merged mark).
    @Test(arguments: [
        ("m1", "m1", "m1", false, false, "m1"),
        ("m1", "m2", "m2", true, true, "m2"),
        // One side pulled (new mark), the other did nothing: its mark holds.
        ("m1", "m2", "m1", true, false, "m2"),
        ("m1", "m1", "m2", false, true, "m2"),
        // One side pulled, the other pushed (entries changed, old mark): no mark.
        ("m1", "m2", "m1", true, true, nil),
        ("m1", "m2", "m3", true, true, nil),
        (nil, "m2", nil, true, false, "m2"),
    ] as [(String?, String?, String?, Bool, Bool, String?)])
    func mergeKeepsAMarkOnlyWhereItHolds(base: String?, ours: String?, theirs: String?, oursChanged: Bool, theirsChanged: Bool, merged: String?) throws {
        let times = ["m1": "2026-12-01T01:00:00Z", "m2": "2026-12-01T02:00:00Z", "m3": "2026-12-01T03:00:00Z"]
        func mark(_ name: String?) -> ChangeMark? { name.map { ChangeMark(field: "updatedAt", time: Self.time(times[$0]!)) } }
        let entry = BaseEntry(hash: ContentHash(text: "sha256:" + String(repeating: "b", count: 64)), revision: "r1")
        let changedEntry = BaseEntry(hash: entry.hash, revision: "r2")
        let baseManifest = Manifest(entries: [try RecordID("a"): entry, try RecordID("b"): entry], changesSince: mark(base))
        let oursManifest = Manifest(entries: [try RecordID("a"): oursChanged ? changedEntry : entry, try RecordID("b"): entry], changesSince: mark(ours))
        let theirsManifest = Manifest(entries: [try RecordID("a"): entry, try RecordID("b"): theirsChanged ? changedEntry : entry], changesSince: mark(theirs))
        let result = ManifestMerge.merge(base: baseManifest, ours: oursManifest, theirs: theirsManifest)
        #expect(result.manifest.changesSince == mark(merged))
    }

    @Test func theConfigKeepsTheChangeFieldAndRefusesOnesThatCannotBe() throws {
        let config = CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books"), changeField: "updatedAt")
        #expect(try CollectionConfig.decode(config.encoded()) == config)
        #expect(try CollectionConfig.decode(CollectionConfig(remote: config.remote).encoded()).changeField == nil)
        let problems: [(String, String)] = [
            ("id", "holds the record id"),
            ("title", "cannot be both the change field and a required field"),
            ("", "the change field name is empty"),
            ("__name__", "reserved by Firestore"),
            ("a\u{1B}b", "the change field name contains a control character"),
        ]
        for (name, problem) in problems {
            let found = CollectionConfig.problem(changeField: name, idField: .standard, schema: .books)
            #expect(found?.contains(problem) == true, "\(name): \(String(describing: found))")
            var text = String(decoding: config.encoded(), as: UTF8.self)
            text = text.replacingOccurrences(of: "\"changeField\": \"updatedAt\"", with: "\"changeField\": \(String(decoding: CanonicalJSON.encodeInline(.string(name)).utf8, as: UTF8.self))")
            #expect(throws: StateFileError.self) { try CollectionConfig.decode(Array(text.utf8)) }
        }
        #expect(CollectionConfig.problem(changeField: "docId", idField: .field("docId"), schema: .books)?.contains("holds the record id") == true)
        #expect(CollectionConfig.problem(changeField: "updatedAt", idField: .standard, schema: .books) == nil)
    }

    @Test func recordsLeaveTheChangeFieldOutAndFilesMayNotHaveIt() throws {
        let rules = RecordRules(changeField: "updatedAt")
        let id = try RecordID("dune")
        let stamp = Value.timestamp(Self.time("2026-12-01T00:00:00Z"))
        let document: Fields = ["id": .string("dune"), "title": .string("Dune"), "author": .string("Herbert"), "genre": .string("sf"), "updatedAt": stamp]
        guard case .success(let record) = rules.record(fromDocument: document, id: id) else {
            Issue.record("a stamped document is a valid record")
            return
        }
        #expect(record.fields["updatedAt"] == nil)
        let file = Array(#"{"id": "dune", "title": "Dune", "author": "Herbert", "genre": "sf", "updatedAt": {"$timestamp": "2026-12-01T00:00:00Z"}}"#.utf8)
        guard case .failure(let problems) = rules.load(file, id: id) else {
            Issue.record("a file with the change field is invalid")
            return
        }
        #expect(problems.diagnostics.map(\.message) == [
            "field 'updatedAt' cannot be in a record file: it is this collection's change field (config \"changeField\"), which the server sets on every write; remove it from the file",
        ])
        // Without a change field, the same file is an ordinary record.
        guard case .success = RecordRules().load(file, id: id) else {
            Issue.record("updatedAt is an ordinary field without a change field")
            return
        }
    }
}
