import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The `__name__` ranges of folder and glob pathspecs (`FirestoreRemote+Ranges.swift`):
/// their bounds, and the queries a scoped listing sends.
@Suite struct NameRangeTests {
    static let books = SubcollectionQueryTests.root + "/users/u1/books"

    @Test(arguments: [
        // raw prefix, lower, upper (exclusive)
        ("dune", "/dune", "/dunf"),
        ("b1", "/b1", "/b2"),
        ("caf\u{E9}", "/caf\u{E9}", "/caf\u{EA}"),
        ("a\u{10FFFF}", "/a\u{10FFFF}", "/b"),    // nothing follows U+10FFFF: the a before it moves on
        ("x\u{D7FF}", "/x\u{D7FF}", "/x\u{E000}"), // no surrogates
        ("dune/", "/dune", "/dune\u{0}"),         // below a document: its folder
        ("dune/rev", "/dune/rev/\u{0}", "/dune/rew/\u{0}"),   // a collection id is padded to a document name
        ("dune/reviews/", "/dune/reviews/\u{0}", "/dune/reviews\u{0}/\u{0}"),
        ("dune/reviews/r", "/dune/reviews/r", "/dune/reviews/s"),
        // Firestore refuses `.`, `..` and `__…__` as ids, even in a bound.
        ("-", "/-", "/.\u{0}"),
        ("-.", "/-.", "/-0"),                      // never a `/` inside a segment
        ("__x__", "/__x__\u{0}", "/__x_`"),
        ("__x_", "/__x_", "/__x`"),
    ])
    func boundsAreDocumentNames(prefix: String, lower: String, upper: String) throws {
        let range = try #require(FirestoreRemote.nameRange(below: Self.books, prefix: prefix))
        #expect(range == FirestoreRemote.NameRange(lower: Self.books + lower, upper: Self.books + upper, upperIncluded: false), "\(prefix)")
    }

    @Test func aPrefixOfOnlyTheLastCharacterHasNoRange() {
        #expect(FirestoreRemote.nameRange(below: Self.books, prefix: "\u{10FFFF}\u{10FFFF}") == nil)
        #expect(FirestoreRemote.successor("") == nil)
    }

    /// A top-level prefix asks the collection and each group; a prefix with a
    /// slash can only be a subcollection document, so only the groups.
    @Test func eachPrefixAsksOnlyTheScopesItCanMatch() async throws {
        let script = ScriptedTransport([
            SubcollectionQueryTests.answer(["users/u1/books/dune", "users/u1/books/dunes"]),
            SubcollectionQueryTests.answer(["users/u1/books/dune/reviews/r1"]),
            SubcollectionQueryTests.answer(["users/u1/books/emma/reviews/r2"]),
        ])
        let remote = try SubcollectionQueryTests.remote(script, subcollections: ["reviews"])
        let listing = try await remote.listRevisions(prefixes: ["dune", "emma/reviews/"], progress: { _ in })
        #expect(listing.revisions.keys.map(\.rawValue).sorted() == ["dune", "dune/reviews/r1", "dunes", "emma/reviews/r2"])
        let bodies = script.requests.withLock { $0 }.map { String(decoding: $0.body ?? [], as: UTF8.self) }
        #expect(bodies.count == 3)
        #expect(bodies[0].contains(#""collectionId": "books""#) && bodies[0].contains(#""op": "LESS_THAN", "value": {"referenceValue": "\#(Self.books)/dunf"}"#), "\(bodies[0])")
        #expect(bodies[1].contains(#""allDescendants": true"#) && bodies[1].contains(#"{"referenceValue": "\#(Self.books)/dune"}"#), "\(bodies[1])")
        #expect(bodies[2].contains(#""allDescendants": true"#) && bodies[2].contains(#"{"referenceValue": "\#(Self.books)/emma/reviews/\u0000"}"#), "\(bodies[2])")
    }

    /// Emptiness is one document's read: it stops at the first scope with one.
    @Test func emptinessReadsOneDocumentPerScopeUntilOneIsFound() async throws {
        let found = ScriptedTransport([SubcollectionQueryTests.answer(["users/u1/books/dune"])])
        #expect(try await SubcollectionQueryTests.remote(found, subcollections: ["reviews"]).isEmpty() == false)
        let requests = found.requests.withLock { $0 }
        #expect(requests.count == 1 && String(decoding: requests[0].body ?? [], as: UTF8.self).contains(#""limit": 1"#))
        let empty = ScriptedTransport([SubcollectionQueryTests.answer([]), SubcollectionQueryTests.answer([])])
        #expect(try await SubcollectionQueryTests.remote(empty, subcollections: ["reviews"]).isEmpty() == true)
        #expect(empty.requests.withLock { $0.count } == 2)
    }
}
