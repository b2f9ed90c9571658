import Testing
@testable import BooksyncCore

@Suite struct RecordIDTests {
    static let encodings: [(String, String)] = [
        ("dune", "dune.json"),
        ("Dune_2-part.1", "Dune_2-part.1.json"),
        (".hidden", "%2Ehidden.json"),
        ("a.b.", "a.b..json"),
        ("a b", "a%20b.json"),
        ("100%", "100%25.json"),
        (#"a\b"#, "a%5Cb.json"),
        ("CON", "CON.json"),
        ("über", "%C3%BCber.json"),
        ("🚀", "%F0%9F%9A%80.json"),
        ("a:b*c?d\"e<f>g|h", "a%3Ab%2Ac%3Fd%22e%3Cf%3Eg%7Ch.json"),
        ("tab\there", "tab%09here.json"),
        ("...", "%2E...json"),
        ("__x", "__x.json"),
    ]

    @Test(arguments: encodings)
    func encodesAndDecodesExactly(id: String, fileName: String) throws {
        let recordID = try RecordID(id)
        #expect(recordID.fileName == fileName)
        #expect(try RecordID.fromFileName(fileName) == recordID)
    }

    @Test(arguments: ["", ".", "..", "a/b", "/", "__x__", "____", String(repeating: "a", count: 1501)])
    func rejectsInvalidIDs(id: String) {
        #expect(throws: RecordIDError.self) { try RecordID(id) }
    }

    @Test func rejectsIDsTooLongForAFileName() {
        #expect(throws: RecordIDError.fileNameTooLong(String(repeating: "é", count: 100), 600)) {
            try RecordID(String(repeating: "é", count: 100))
        }
        #expect((try? RecordID(String(repeating: "a", count: 250))) != nil)
    }

    @Test(arguments: [
        ("a%41.json", RecordIDError.nonCanonicalFileName("a%41.json", "aA.json")),
        ("%c3%bc.json", RecordIDError.nonCanonicalFileName("%c3%bc.json", "%C3%BC.json")),  // lowercase hex: named the way to spell it
        ("%zz.json", RecordIDError.badFileName("%zz.json")),
        ("a%2.json", RecordIDError.badFileName("a%2.json")),
        ("%FF.json", RecordIDError.badFileName("%FF.json")),
        ("%2E%2E.json", RecordIDError.dots("..")),
        ("a%2Fb.json", RecordIDError.slash("a/b")),
        ("a b.json", RecordIDError.nonCanonicalFileName("a b.json", "a%20b.json")),
        ("__x__.json", RecordIDError.reserved("__x__")),
    ])
    func rejectsBadFileNames(name: String, error: RecordIDError) {
        #expect(throws: error) { try RecordID.fromFileName(name) }
    }

    @Test(arguments: ["README.md", ".dune.json", "notes.txt", ".booksync", "x.json.bak"])
    func ignoresFilesThatAreNotRecords(name: String) throws {
        #expect(try RecordID.fromFileName(name) == nil)
    }

    @Test func everyByteRoundTrips() throws {
        for scalar in (1..<0x300).compactMap(Unicode.Scalar.init) where scalar != "/" {
            let raw = "x" + String(scalar) + "y"
            let id = try RecordID(raw)
            #expect(!id.fileName.contains("/"))
            #expect(try RecordID.fromFileName(id.fileName)?.rawValue == raw)
        }
    }
}
