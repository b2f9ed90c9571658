import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The change-field path with subcollections (<doc:Firestore>): one change query
/// and one count per scope (the collection, each subcollection group), so
/// a changed review is found without listing every name, and a deleted one
/// through the count, which then falls back to the full listing.
@Suite struct SubcollectionChangeFieldTests {
    @Test func changedReviewsAreFoundByTheGroupsChangeQuery() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("sub-changes"), host: try Emulator.requireHost())
        let longAgo = Value.timestamp(try Timestamp(rfc3339: "2020-01-01T00:00:00Z"))
        try await ws.rest.put(SubcollectionEndToEndTests.library(books: 30, reviews: 3).map { ($0.id, $0.fields.merging(["updatedAt": longAgo]) { _, new in new }) })
        try ws.initialize("--change-field", "updatedAt", "--subcollection", "reviews")
        let first = try ws.run("-v", "pull")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(ws.read("b00007/reviews/r2.json") == SubcollectionEndToEndTests.reviewFile("r2", rating: 2))

        let unchanged = try ws.run("-v", "status", "--short")
        #expect(unchanged.stdout == "")
        #expect(unchanged.stderr.contains("read the 0 documents whose 'updatedAt' is at or after"), "\(unchanged.stderr)")
        // Two change queries (books, reviews group) and two counts, whatever the
        // number of parents. Answered ones: on a loaded machine a request can go
        // unanswered for 30 s and be sent again (seen in a CI run: 6 requests, 4 answers).
        let answered = unchanged.stderr.split(separator: "\n").filter { $0.hasPrefix("booksync: POST ") && $0.contains(" → 200 in ") }
        #expect(answered.count == 4, "\(unchanged.stderr)")
        #expect(unchanged.stderr.contains("(estimated billed reads: 4)"), "\(unchanged.stderr)")

        // The app changes a review the conventional way: found, and only it is read.
        try await ws.rest.put([("b00007/reviews/r2", SubcollectionEndToEndTests.review("r2", rating: 5))], stamping: "updatedAt")
        let changed = try ws.run("-v", "status", "--short")
        #expect(changed.stdout == " M b00007/reviews/r2\n", "\(changed.stdout)\(changed.stderr)")
        #expect(changed.stderr.contains("read the 1 document"), "\(changed.stderr)")
        #expect(try ws.run("pull").status == 0)
        #expect(ws.read("b00007/reviews/r2.json") == SubcollectionEndToEndTests.reviewFile("r2", rating: 5))

        // A deleted review shows in the count only: every name is listed.
        try await ws.rest.delete("b00003/reviews/r1")
        let deleted = try ws.run("-v", "status", "--short")
        #expect(deleted.stdout == " D b00003/reviews/r1\n", "\(deleted.stdout)")
        #expect(deleted.stderr.contains("listed every name: the collection holds 119 documents, but the base and the changes account for 120"), "\(deleted.stderr)")
        #expect(try ws.run("pull").status == 0)

        // booksync's own push stamps reviews too, so it does not trip the count.
        try ws.write("b00004/reviews/r3.json", SubcollectionEndToEndTests.reviewFile("r3", rating: 1))
        #expect(try ws.run("push").status == 0)
        let afterPush = try ws.run("-v", "status", "--short")
        #expect(afterPush.stdout == "")
        #expect(afterPush.stderr.contains("listed every name") == false, "\(afterPush.stderr)")
    }
}
