import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// `TargetComparison.compare` through in-memory remotes: what lands in which
/// list, what is read on each side (each read is billed), and how pathspecs narrow it.
@Suite struct TargetComparisonTests {
    static let rules = RecordRules()

    static func record(_ id: String, _ extra: String = "", revision: String = "r1") throws -> RemoteDocument {
        let json = #"{"id": "\#(id)", "title": "T", "author": "A", "genre": "g"\#(extra.isEmpty ? "" : ", " + extra)}"#
        let recordID = try RecordID(id)
        return RemoteDocument(id: recordID, revision: revision, content: .record(try rules.load(Array(json.utf8), id: recordID).get()))
    }

    static func invalid(_ id: String, _ problem: String) throws -> RemoteDocument {
        RemoteDocument(id: try RecordID(id), revision: "r1", content: .invalid([RecordDiagnostic(message: problem)]))
    }

    static func ids(_ names: String...) -> [RecordID] { names.map { try! RecordID($0) } }

    struct Case: Sendable, CustomStringConvertible {
        let description: String
        let a: [RemoteDocument]
        let b: [RemoteDocument]
        let expected: TargetComparison
    }

    static func cases() throws -> [Case] {
        func comparison(_ fill: (inout TargetComparison) throws -> Void) rethrows -> TargetComparison {
            var result = TargetComparison()
            try fill(&result)
            return result
        }
        return [
            Case(description: "only on A", a: [try record("x"), try record("y")], b: [try record("y")],
                 expected: comparison { $0.onlyA = ids("x"); $0.identical = 1 }),
            Case(description: "only on B", a: [try record("y")], b: [try record("x"), try record("y")],
                 expected: comparison { $0.onlyB = ids("x"); $0.identical = 1 }),
            Case(description: "a nested map field differs", a: [try record("x", #""stats": {"rating": 4, "pages": 10}"#)],
                 b: [try record("x", #""stats": {"rating": 5, "pages": 10}, "new": true"#, revision: "r9")],
                 expected: try comparison {
                     $0.different = [TargetComparison.Difference(id: try RecordID("x"), fields: [
                         TargetComparison.Field(path: FieldPath(field: "new"), a: nil, b: .bool(true)),
                         TargetComparison.Field(path: FieldPath(field: "stats").appending("rating"), a: .integer(4), b: .integer(5)),
                     ])]
                 }),
            Case(description: "the same content at other revisions", a: [try record("x", revision: "r1")], b: [try record("x", revision: "r2")],
                 expected: comparison { $0.identical = 1 }),
            Case(description: "both empty", a: [], b: [], expected: TargetComparison()),
            Case(description: "invalid on A", a: [try invalid("x", "title: expected a string")], b: [try record("x")],
                 expected: try comparison {
                     $0.invalid = [.init(id: try RecordID("x"), side: .a, problems: [RecordDiagnostic(message: "title: expected a string")])]
                 }),
            Case(description: "invalid on B", a: [try record("x")], b: [try invalid("x", "bad")],
                 expected: try comparison { $0.invalid = [.init(id: try RecordID("x"), side: .b, problems: [RecordDiagnostic(message: "bad")])] }),
            Case(description: "invalid on both", a: [try invalid("x", "one")], b: [try invalid("x", "two")],
                 expected: try comparison {
                     $0.invalid = [.init(id: try RecordID("x"), side: .a, problems: [RecordDiagnostic(message: "one")]),
                                   .init(id: try RecordID("x"), side: .b, problems: [RecordDiagnostic(message: "two")])]
                 }),
            Case(description: "invalid on A only", a: [try invalid("x", "one")], b: [],
                 expected: try comparison { $0.invalid = [.init(id: try RecordID("x"), side: .a, problems: [RecordDiagnostic(message: "one")])] }),
        ]
    }

    @Test(arguments: try cases())
    func eachKindOfDifference(_ example: Case) async throws {
        let a = ScriptedRemote(documents: example.a, listingBatch: 1), b = ScriptedRemote(documents: example.b, listingBatch: 1)
        var result = try await TargetComparison.compare(a, b)
        #expect(result.readsA.compared == example.a.count && result.readsB.compared == example.b.count)
        #expect(result.readsA.shown == example.expected.different.count && result.readsB.shown == 0)
        result.readsA = TargetComparison.Reads()
        result.readsB = TargetComparison.Reads()
        #expect(result == example.expected)
        #expect(result.isSame == (example.expected.onlyA.isEmpty && example.expected.onlyB.isEmpty
            && example.expected.different.isEmpty && example.expected.invalid.isEmpty))
        #expect(b.fetches.withLock { $0 }.isEmpty, "the second target's differing bodies come from its listing")
    }

    /// Only the differing records' bodies are read again, on the first target,
    /// in one fetch; the identical ones are counted, never fetched.
    @Test func onlyDifferingBodiesAreReadAgain() async throws {
        let common = try (0..<50).map { try Self.record(String(format: "b%03d", $0)) }
        let a = ScriptedRemote(documents: common + [try Self.record("only-a")], listingBatch: 7)
        let b = ScriptedRemote(documents: Array(common.dropLast(2)) + [try Self.record("b048", #""x": 1"#), try Self.record("b049", #""x": 2"#)],
                               listingBatch: 9)
        let result = try await TargetComparison.compare(a, b)
        #expect(result.identical == 48)
        #expect(result.onlyA == (Self.ids("only-a")))
        #expect(result.different.map(\.id) == (Self.ids("b048", "b049")))
        #expect(a.fetches.withLock { $0 } == [Self.ids("b048", "b049")])
        #expect(result.readsA == TargetComparison.Reads(compared: 51, shown: 2))
        #expect(result.readsB == TargetComparison.Reads(compared: 50, shown: 0))
        #expect(!result.isSame)
    }

    /// A differing record deleted on A between its listing and the fetch of its
    /// body is only on B; the fetch is still counted (a missing id is billed).
    @Test func aRecordGoneBeforeItsFetchIsOnlyOnB() async throws {
        let x = try RecordID("x")
        let a = ScriptedRemote(documents: [try Self.record("x")], vanishing: [x])
        let b = ScriptedRemote(documents: [try Self.record("x", #""n": 1"#)])
        let result = try await TargetComparison.compare(a, b)
        #expect(result.onlyB == [x] && result.different.isEmpty && result.onlyA.isEmpty)
        #expect(result.readsA.shown == 1)
    }

    /// Pathspecs narrow what is compared; a folder or glob lists its id
    /// ranges (this remote lists everything, which is counted as read).
    @Test func pathspecsNarrowTheComparison() async throws {
        let a = PrefixRecordingRemote(documents: [try Self.record("b10"), try Self.record("b11", #""n": 1"#), try Self.record("c1"),
                                                  try Self.record("b12")])
        let b = PrefixRecordingRemote(documents: [try Self.record("b10"), try Self.record("b11", #""n": 2"#), try Self.record("c2"),
                                                  try Self.record("b13")])
        let glob = RecordScope([.init(.glob("b1*"), text: "b1*")])
        let result = try await TargetComparison.compare(a, b, scope: glob)
        #expect(result.onlyA == (Self.ids("b12")) && result.onlyB == (Self.ids("b13")))
        #expect(result.different.map(\.id) == (Self.ids("b11")) && result.identical == 1)
        #expect(a.prefixes.withLock { $0 } == [["b1"]] && b.prefixes.withLock { $0 } == [["b1"]])
        #expect(result.readsA.compared == 4, "every document the listing carried is a read, in scope or not")

        // Ids named one by one: fetched by name on both sides, nothing listed.
        let named = RecordScope([.init(.record(try RecordID("b11")), text: "b11"), .init(.record(try RecordID("c2")), text: "c2"),
                                 .init(.record(try RecordID("c2")), text: "c2.json")])
        let byName = try await TargetComparison.compare(a, b, scope: named)
        #expect(byName.onlyB == (Self.ids("c2")) && byName.different.map(\.id) == (Self.ids("b11")) && byName.onlyA.isEmpty)
        #expect(byName.different.first?.fields == [TargetComparison.Field(path: FieldPath(field: "n"), a: .integer(1), b: .integer(2))])
        #expect(byName.readsA == TargetComparison.Reads(compared: 2, shown: 0) && byName.readsB == byName.readsA)
        #expect(a.prefixes.withLock { $0 }.count == 1, "no second listing")
        #expect(a.scripted.fetches.withLock { $0 } == [Self.ids("b11"), Self.ids("b11", "c2")], "b11 shown by the glob's comparison, then both named")
    }

    /// Unusable names are reported with their side when the whole collection is compared.
    @Test func unusableNamesAreReported() async throws {
        let odd = UnusableRemoteDocument(name: "..", message: "is not a record id")
        let a = PrefixRecordingRemote(documents: [try Self.record("x")], unusable: [odd])
        let b = PrefixRecordingRemote(documents: [try Self.record("x")])
        let result = try await TargetComparison.compare(a, b)
        #expect(result.unusable == [.init(side: .a, document: odd)] && result.identical == 1 && !result.isSame)
        #expect(result.readsA.compared == 2)
    }

    /// A failing remote is a remote error, not a partial comparison.
    @Test func aFailingListingThrows() async throws {
        let a = ScriptedRemote(documents: [try Self.record("x"), try Self.record("y")], listingBatch: 1, failListingAfter: 1)
        await #expect(throws: BooksyncError.remote(ScriptedRemote.listingFailure)) {
            _ = try await TargetComparison.compare(a, ScriptedRemote())
        }
    }
}

/// A scripted remote that records the prefixes of each prefix listing and
/// can list unusable names.
private final class PrefixRecordingRemote: RemoteCollection {
    let scripted: ScriptedRemote
    let prefixes = Mutex<[[String]]>([])
    let unusable: [UnusableRemoteDocument]
    var displayName: String { "prefix-recording" }

    init(documents: [RemoteDocument], unusable: [UnusableRemoteDocument] = []) {
        scripted = ScriptedRemote(documents: documents)
        self.unusable = unusable
    }

    func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
        try await scripted.listRevisions(progress: progress)
    }

    func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                       progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
        let unusable = unusable
        try await scripted.listDocuments(batch: { listing, documents in
            var listing = listing
            listing.unusable = unusable
            batch(listing, documents)
        }, progress: progress)
    }

    func listDocuments(prefixes: [String], batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                       progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
        self.prefixes.withLock { $0.append(prefixes) }
        try await listDocuments(batch: batch, progress: progress)
    }

    func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument] {
        try await scripted.fetch(ids, progress: progress)
    }

    func write(_ writes: [RemoteWrite], atomic: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        [:]
    }
}
