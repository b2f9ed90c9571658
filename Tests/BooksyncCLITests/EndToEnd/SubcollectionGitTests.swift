import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// git merges subcollection record files field by field too: `init --git`
/// selects them in `.gitattributes` at their depth, and the merge driver finds
/// the collection above `dune/reviews/` and uses the subcollection's rules.
@Suite struct SubcollectionGitTests {
    @Test func reviewsEditedOnTwoBranchesMergeByField() throws {
        let driver = GitMergeDriverTests()
        let scratch = try ScratchDirectory()
        let repo = scratch.path
        #expect(try driver.git("init", "-q", "-b", "main", in: repo).0 == 0)
        let books = repo + "/books"
        try FileManager.default.createDirectory(atPath: books + "/dune/reviews", withIntermediateDirectories: true)
        let initialize = try BinaryTests.run(["init", "--firestore", "p", "--collection", "books", "--subcollection", "reviews",
                                              "--subcollection", "reviews/likes", "--subcollection-require", "reviews:rating:integer", "--git"], in: books)
        #expect(initialize.status == 0, "\(initialize.stderr)")
        #expect(try String(contentsOfFile: books + "/.gitattributes", encoding: .utf8)
            == "/*.json merge=booksync\n/*/reviews/*.json merge=booksync\n/*/reviews/*/likes/*.json merge=booksync\n/.booksync/manifest.json merge=booksync-manifest\n")

        func review(rating: Int64, text: String) -> String { SubcollectionEndToEndTests.reviewFile("r1", rating: rating, extra: ["text": .string(text)]) }
        try review(rating: 3, text: "ok").write(toFile: books + "/dune/reviews/r1.json", atomically: true, encoding: .utf8)
        _ = try driver.git("add", "-A", in: repo)
        #expect(try driver.git("commit", "-qm", "base", in: repo).0 == 0)
        _ = try driver.git("checkout", "-qb", "rating", in: repo)
        try review(rating: 5, text: "ok").write(toFile: books + "/dune/reviews/r1.json", atomically: true, encoding: .utf8)
        #expect(try driver.git("commit", "-qam", "rating", in: repo).0 == 0)
        _ = try driver.git("checkout", "-q", "main", in: repo)
        try review(rating: 3, text: "a classic").write(toFile: books + "/dune/reviews/r1.json", atomically: true, encoding: .utf8)
        #expect(try driver.git("commit", "-qam", "text", in: repo).0 == 0)

        let merge = try driver.git("merge", "--no-edit", "rating", in: repo)
        #expect(merge.0 == 0, "git merge failed: \(merge.1)")
        #expect(try String(contentsOfFile: books + "/dune/reviews/r1.json", encoding: .utf8) == review(rating: 5, text: "a classic"))
    }

    /// Two branches that synced different reviews merge their manifests
    /// cleanly: the driver reads path ids with the subcollections of the
    /// config.json beside the manifest (it once fell back to a line merge).
    @Test func manifestsWithPathIDsMergeByRecord() throws {
        let scratch = try ScratchDirectory()
        let books = scratch.path + "/books"
        try FileManager.default.createDirectory(atPath: books, withIntermediateDirectories: true)
        #expect(try BinaryTests.run(["init", "--firestore", "p", "--collection", "books", "--subcollection", "reviews"], in: books).status == 0)
        let rules = try CollectionDirectory.open(searchingFrom: books).rules
        func manifest(_ ids: [String]) throws -> String {
            let entries = try ids.map { (try rules.recordID($0), BaseEntry(hash: ContentHash(text: "sha256:" + String(repeating: "a", count: 64)), revision: "2026-01-01T00:00:00Z")) }
            return String(decoding: Manifest(entries: Dictionary(uniqueKeysWithValues: entries)).encoded(), as: UTF8.self)
        }
        for (name, ids) in [("base", ["dune", "dune/reviews/r1"]), ("ours", ["dune", "dune/reviews/r1", "dune/reviews/r2"]),
                            ("theirs", ["dune", "dune/reviews/r1", "ghost/reviews/g1"])] {
            try scratch.write(name + ".json", try manifest(ids))
        }
        let merged = try BinaryTests.run(["merge-manifest", "base.json", "ours.json", "theirs.json", "books/.booksync/manifest.json"], in: scratch.path)
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(try scratch.read("ours.json") == manifest(["dune", "dune/reviews/r1", "dune/reviews/r2", "ghost/reviews/g1"]))
        // Whatever the config beside it says: during a merge it may be ours, and
        // theirs may be the branch that added the subcollection (or no PATH at all).
        try scratch.write("ours.json", try manifest(["dune"]))
        try scratch.write("theirs.json", try manifest(["dune", "dune/reviews/r1", "dune/reviews/r2"]))
        let unconfigured = try BinaryTests.run(["merge-manifest", "base.json", "ours.json", "theirs.json"], in: scratch.path)
        // r1 removed on ours and untouched on theirs: removed; r2 added on theirs: added.
        #expect(unconfigured.status == 0, "\(unconfigured.stderr)")
        #expect(try scratch.read("ours.json") == manifest(["dune", "dune/reviews/r2"]))
    }

    @Test func initSaysWhatItConfiguredAndRefusesBadSubcollections() throws {
        let scratch = try ScratchDirectory()
        let result = try BinaryTests.run(["init", "--firestore", "p", "--collection", "books", "--subcollection", "reviews",
                                          "--subcollection-require", "reviews:rating:integer"], in: scratch.path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("  subcollection: reviews, required: id, rating (integer)\n"), "\(result.stdout)")
        #expect(result.stdout.contains("echo '/*/reviews/*.json merge=booksync' >> ./.gitattributes"), "\(result.stdout)")
        for (arguments, message) in [
            (["--subcollection", "../x"], "--subcollection: subcollection path '../x' has a segment that is not a valid collection id"),
            (["--subcollection-require", "reviews:rating:integer"], "--subcollection: 'reviews:rating:integer' names the subcollection 'reviews', which no --subcollection gives"),
            (["--subcollection", "reviews", "--subcollection-require", "reviews:id:string"], "--subcollection: 'id' is always required"),
        ] {
            let other = try ScratchDirectory()
            let refused = try BinaryTests.run(["init", "--firestore", "p", "--collection", "books"] + arguments, in: other.path)
            #expect(refused.status == 2)
            #expect(refused.stderr.contains(message), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: other.path + "/.booksync"))
        }
    }
}
