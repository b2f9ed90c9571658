import Testing
@testable import BooksyncCore

/// Keys booksync stores are compared byte by byte (DESIGN.md §6): two ids that
/// differ only by Unicode normalization are two records, and ids that need
/// escapes survive every path of the manifest.
@Suite struct ByteExactKeysTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    /// Sets of ids that once made booksync write a manifest it could not read.
    static let idSets: [[String]] = [
        [nfc, nfd],
        ["a\"b", "a\\b"],
        [nfc, nfd, "q\"uote", "back\\slash"],
        ["tab\there", "bell\u{07}", "del\u{7F}", "nl\nx"],
        ["\u{212B}ngstrom", "\u{C5}ngstrom", "A\u{30A}ngstrom"],  // three spellings of Å
    ]

    static func manifest(_ ids: [String]) throws -> Manifest {
        var manifest = Manifest(configFingerprint: "sha256:cf")
        for (i, raw) in ids.enumerated() {
            manifest.entries[try RecordID(raw)] = BaseEntry(hash: "sha256:\(i)", revision: "2024-01-01T00:00:00.00000\(i)Z")
        }
        return manifest
    }

    @Test(arguments: idSets)
    func manifestReadsBackWhatItWrites(ids: [String]) throws {
        let manifest = try Self.manifest(ids)
        #expect(manifest.entries.count == ids.count, "RecordID keeps them apart")
        let bytes = manifest.encoded()
        #expect(Manifest.decodeCanonical(bytes) == manifest, "the fast path reads escaped ids")
        #expect(try Manifest.decode(bytes) == manifest)
    }

    /// The general parser (hand-edited or reformatted manifests) is byte-exact too.
    @Test(arguments: idSets)
    func reformattedManifestReadsBack(ids: [String]) throws {
        let manifest = try Self.manifest(ids)
        var text: [UInt8] = Array(#"{"version": 1, "config": "sha256:cf", "records": {"#.utf8)
        for (i, id) in manifest.entries.keys.sorted().reversed().enumerated() {
            if i > 0 { text += Array(", ".utf8) }
            CanonicalJSON.writeString(id.rawValue, into: &text)
            let entry = manifest.entries[id]!
            text += Array(#": {"revision": "\#(entry.revision)", "hash": "\#(entry.hash)"}"#.utf8)
        }
        text += Array("}}".utf8)
        #expect(Manifest.decodeCanonical(text) == nil)
        #expect(try Manifest.decode(text) == manifest)
    }

    @Test func aByteIdenticalDuplicateIsStillRefused() {
        let text = #"{"version": 1, "records": {"a\u0022": {"hash": "sha256:1", "revision": "r"}, "a\"": {"hash": "sha256:2", "revision": "r"}}}"#
        #expect(throws: StateFileError(position: SourcePosition(line: 1, column: 78), message: "duplicate key 'a\"'")) {
            try Manifest.decode(Array(text.utf8))
        }
    }

    @Test func treeKeepsMembersInOrderByBytes() throws {
        let tree = try JSONParser.parseTree(Array("{\"\(Self.nfd)\": 1, \"\(Self.nfc)\": [2, {\"$x\": 3}]}".utf8))
        guard case .object(let members) = tree else { Issue.record("not an object"); return }
        #expect(members.map { Array($0.key.utf8) } == [Array(Self.nfd.utf8), Array(Self.nfc.utf8)])
        #expect(tree[Self.nfc] == .array([.scalar(.integer(2)), .object([JSONTree.Member(key: "$x", value: .scalar(.integer(3)))])]))
        #expect(tree[Self.nfd] == .scalar(.integer(1)))
    }

    struct KeyCase: Sendable, CustomTestStringConvertible {
        let text: String
        let line: Int
        let column: Int
        let message: String
        var testDescription: String { text }
    }

    /// A record file whose keys differ only by normalization is an error that
    /// shows both keys' characters, at any depth.
    @Test(arguments: [
        KeyCase(text: "{\"\(nfc)\": 1, \"\(nfd)\": 2}", line: 1, column: 13,
                message: #"keys "caf\u00E9" (at 1:2) and "cafe\u0301" differ only by Unicode normalization; a record cannot hold both: rename one"#),
        KeyCase(text: "{\"id\": \"x\",\n \"stats\": {\"\(nfd)\": {}, \"\(nfc)\": []}}", line: 2, column: 25,
                message: #"keys "cafe\u0301" (at 2:12) and "caf\u00E9" differ only by Unicode normalization; a record cannot hold both: rename one"#),
        KeyCase(text: "{\"a\": [{\"\u{212B}\": 1, \"\u{C5}\": 2}]}", line: 1, column: 17,
                message: #"keys "\u212B" (at 1:9) and "\u00C5" differ only by Unicode normalization; a record cannot hold both: rename one"#),
    ])
    func equivalentKeysInAFileAreExplained(_ c: KeyCase) {
        #expect(throws: JSONSyntaxError(position: SourcePosition(line: c.line, column: c.column), message: c.message)) {
            try JSONParser.parseObject(Array(c.text.utf8))
        }
    }

    /// In a wire answer the object becomes a marker instead, so the rest of the answer is read.
    @Test func equivalentKeysOnTheWireBecomeAMarker() throws {
        let text = "[{\"fields\": {\"n\": {\"mapValue\": {\"fields\": {\"\(Self.nfc)\": 1, \"\(Self.nfd)\": {\"x\": 2}}}}}}, {\"fields\": {\"ok\": 3}}]"
        let value = try JSONParser.parse(Array(text.utf8), decodeTags: false)
        guard case .array(let items) = value, items.count == 2, case .map(let first) = items[0], case .map(let fields)? = first["fields"],
              case .map(let n)? = fields["n"], case .map(let mapValue)? = n["mapValue"], let marker = mapValue["fields"]
        else { Issue.record("unexpected shape \(value)"); return }
        let keys = try #require(EquivalentKeys(marker: marker))
        #expect(Array(keys.first.utf8) == Array(Self.nfc.utf8))
        #expect(Array(keys.second.utf8) == Array(Self.nfd.utf8))
        #expect(keys.description == #""caf\u00E9" and "cafe\u0301""#)
        #expect(items[1] == .map(["fields": .map(["ok": .integer(3)])]))
        // A real `$bytes` value only exists with tags decoded, never on the wire.
        #expect(EquivalentKeys(marker: .string("x")) == nil)
    }

    @Test(arguments: [
        ("plain", #""plain""#),
        ("q\"b\\", #""q\"b\\""#),
        ("\u{1B}[31m\n", #""\u001B[31m\u000A""#),
        ("🚀", #""\uD83D\uDE80""#),
    ])
    func asciiQuotedShowsEveryCharacter(text: String, quoted: String) {
        #expect(CanonicalJSON.asciiQuoted(text) == quoted)
    }
}
