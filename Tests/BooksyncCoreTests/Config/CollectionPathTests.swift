import Testing
@testable import BooksyncCore

/// A collection path from a clone's config.json or remotes.json, or a
/// subcollection path, is printed in status headers and written into the
/// comments of `schema --swift`: nothing in it may act instead of showing.
@Suite struct CollectionPathTests {
    /// Every scalar a terminal or an editor acts on instead of showing: C0
    /// controls, DEL, C1 controls, bidi marks, overrides and isolates, and
    /// the line and paragraph separators.
    static let invisible: [UInt32] = Array(0x00...0x1F) + [0x7F] + Array(0x80...0x9F)
        + [0x061C, 0x200E, 0x200F, 0x2028, 0x2029] + Array(0x202A...0x202E) + Array(0x2066...0x2069)

    static let head = #"{"version": 1, "remote": {"type": "firestore", "project": "p", "collection": "#

    @Test(arguments: invisible)
    func anInvisibleScalarInAnySegmentIsRefused(value: UInt32) throws {
        let scalar = try #require(Unicode.Scalar(value))
        let named = "contains U+" + Hex.string(value, minimumDigits: 4, .upper) + ", a "
        for path in ["books\(scalar)", "users/u\(scalar)1/books", "\(scalar)", "a/b/c\(scalar)let pwned = 1"] {
            let problem = FirestoreTarget.validateCollectionPath(path)
            #expect(problem?.contains(named) == true, "\(value): \(problem ?? "accepted")")
            #expect(problem.map { !$0.unicodeScalars.contains(where: { TerminalEscaping.isUnsafe($0) }) } == true, "the sentence shows it escaped")
        }
        #expect(Subcollections.problem(withPath: "reviews/l\(scalar)ikes")?.contains(named) == true)
        let quoted = Array(CanonicalJSON.encodeInline(.string("books\(scalar)")).utf8)
        let config = Array(Self.head.utf8) + quoted + Array("}}".utf8)
        #expect {
            try CollectionConfig.decode(config)
        } throws: { error in
            let message = (error as? StateFileError)?.message ?? ""
            return message.hasPrefix("remote.collection: collection path 'books") && message.contains(named)
                && message.hasSuffix("; a collection id must be visible text")
        }
        let remotes = Array(#"{"version": 1, "remotes": {"staging": {"project": "p", "collection": "#.utf8) + quoted + Array("}}}".utf8)
        #expect {
            try RemoteList.decode(remotes)
        } throws: { error in
            ((error as? StateFileError)?.message ?? "").hasPrefix("remote 'staging': collection path 'books")
        }
    }

    @Test(arguments: ["books", "my books", "users/u1/books", "livres/é/critiques", "書籍", "a-b_c.d"])
    func visibleTextIsAPath(path: String) {
        #expect(FirestoreTarget.validateCollectionPath(path) == nil)
    }
}
