import Testing
@testable import BooksyncCore

/// Keys booksync stores are compared byte by byte (<doc:Safety>): two ids that
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
            manifest.entries[try RecordID(raw)] = BaseEntry(hash: ContentHash(text: "sha256:\(i)"), revision: "2024-01-01T00:00:00.00000\(i)Z")
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

    /// Base copy lines name records by encoded id (ASCII: `caf%C3%A9`,
    /// `cafe%CC%81`), so twins' lines stay apart and each verifies as its own
    /// record (`BaseCopyStoreTests` looks them up through the store).
    @Test(arguments: idSets)
    func basePackLinesKeepEachIdApart(ids: [String]) throws {
        let rules = RecordRules()
        var names: Set<[UInt8]> = []
        for raw in ids {
            let id = try RecordID(raw)
            let record = CanonicalRecord(id: id, fields: ["id": .string(raw), "title": .string("T " + raw), "author": .string("A"), "genre": .string("g")],
                                leadingKeys: rules.schema.leadingKeys)
            var line = BasePack.line(for: record)
            #expect(line.removeLast() == BasePack.newline)
            try line.withUnsafeBufferPointer { line in
                let parts = try #require(BasePack.parts(of: line))
                #expect(Array(line[parts.name]) == Array(id.encodedName.utf8))
                #expect(line[parts.name].allSatisfy { $0 < 0x80 })
                names.insert(Array(line[parts.name]))
                #expect(BasePack.verifiedFields(json: UnsafeBufferPointer(rebasing: line[parts.json]), hash: record.hash, rules: rules) == record.fields)
            }
        }
        #expect(names.count == ids.count)
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

/// Numbers that cannot keep their value are refused, like overflow; -0.0 is a
/// spelling of 0.0 (Firestore keeps no negative zero).
@Suite struct DoubleEdgeTests {
    @Test(arguments: [
        ("1e-400", 1, 7, "number 1e-400 is too small for a double (it would become 0.0; the smallest is 5e-324)"),
        ("-1e-400", 1, 7, "number -1e-400 is too small for a double (it would become 0.0; the smallest is 5e-324)"),
        ("2e-324", 1, 7, "number 2e-324 is too small for a double (it would become 0.0; the smallest is 5e-324)"),
        ("0.00001e-320", 1, 7, "number 0.00001e-320 is too small for a double (it would become 0.0; the smallest is 5e-324)"),
        ("1e400", 1, 7, "number 1e400 is too large for a double"),
    ])
    func underflowIsRefusedLikeOverflow(literal: String, line: Int, column: Int, message: String) {
        #expect(throws: JSONSyntaxError(position: SourcePosition(line: line, column: column), message: message)) {
            try JSONParser.parseObject(Array(#"{"v": \#(literal)}"#.utf8))
        }
    }

    @Test(arguments: [
        ("0.0", 0.0, "0.0"), ("-0.0", 0.0, "0.0"), ("0e-400", 0.0, "0.0"), ("-0.000e5", 0.0, "0.0"),
        ("5e-324", .leastNonzeroMagnitude, "5e-324"), ("3e-324", .leastNonzeroMagnitude, "5e-324"),
        ("-1e-320", -Double("1e-320")!, "-1e-320"), ("1e-310", Double("1e-310")!, "1e-310"),
    ])
    func zeroAndSubnormalsParse(literal: String, expected: Double, canonical: String) throws {
        let fields = try JSONParser.parseObject(Array(#"{"v": \#(literal)}"#.utf8))
        guard case .double(let d)? = fields["v"] else { Issue.record("not a double"); return }
        #expect(d.bitPattern == expected.bitPattern, "sign and bits")
        #expect(CanonicalJSON.encodeInline(.double(d)) == canonical)
    }

    @Test func negativeZeroIsZero() {
        #expect(Value.double(-0.0) == .double(0.0))
        #expect(CanonicalJSON.encode(["v": .double(-0.0)]) == CanonicalJSON.encode(["v": .double(0.0)]))
        #expect(Value.double(.nan) == .double(.nan))
        #expect(Value.double(.leastNonzeroMagnitude) != .double(0.0))
    }
}
