import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Subcollections as folders against the emulator (<doc:CollectionFormat> and <doc:Firestore>): reviews
/// written by an app at `books/dune/reviews/r1` are pulled into
/// `dune/reviews/r1.json`, edited and pushed back by path id; listing costs
/// one query per subcollection group, not one per parent; a deleted parent
/// leaves its reviews, with a warning.
@Suite struct SubcollectionEndToEndTests {
    static func review(_ id: String, rating: Int64, extra: Fields = [:]) -> Fields {
        var fields: Fields = ["id": .string(id), "rating": .integer(rating)]
        fields.merge(extra) { _, new in new }
        return fields
    }

    static func reviewFile(_ id: String, rating: Int64, extra: Fields = [:]) -> String {
        String(decoding: CanonicalJSON.encode(review(id, rating: rating, extra: extra), leadingKeys: ["id", "rating"]), as: UTF8.self)
    }

    /// `count` books, each with `reviews` reviews (`b00001/reviews/r1` …).
    static func library(books count: Int, reviews: Int) -> [(id: String, fields: Fields)] {
        var documents: [(id: String, fields: Fields)] = []
        for i in 0..<count {
            let book = String(format: "b%05d", i)
            documents.append((book, bookFields(book)))
            for r in 1...max(reviews, 1) where reviews > 0 { documents.append(("\(book)/reviews/r\(r)", review("r\(r)", rating: Int64(r)))) }
        }
        return documents
    }

    /// The `N requests` of `-v`'s closing line.
    static func requests(_ stderr: String) -> Int? {
        guard let line = stderr.split(separator: "\n").last(where: { $0.contains(" request") && $0.contains("documents read") }),
              let number = line.split(separator: " ").dropFirst().first else { return nil }
        return Int(number.filter(\.isNumber))
    }

    func mkdir(_ ws: Workspace, _ relative: String) throws {
        try FileManager.default.createDirectory(atPath: ws.root + "/" + relative, withIntermediateDirectories: true)
    }

    @Test func pullEditAndPushAReviewByItsPathID() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("sub-roundtrip"), host: try Emulator.requireHost())
        try await ws.rest.put([
            (id: "dune", fields: bookFields("dune", title: "Dune")),
            (id: "dune/reviews/r1", fields: Self.review("r1", rating: 4, extra: ["text": .string("good")])),
            (id: "dune/reviews/r 2", fields: Self.review("r 2", rating: 5)),
            (id: "ghost/reviews/r9", fields: Self.review("r9", rating: 1)),  // no ghost document: a folder without a file
            (id: "dune/notes/n1", fields: ["id": .string("n1")]),  // not configured: never pulled
            (id: "dune/notes/n1/reviews/deep", fields: Self.review("deep", rating: 1)),  // a 'reviews' below an unconfigured one
        ])
        try ws.initialize("--subcollection", "reviews", "--subcollection-require", "reviews:rating:integer")
        let pull = try ws.run("pull")
        #expect(pull.status == 0, "\(pull.stdout)\(pull.stderr)")
        #expect(ws.read("dune/reviews/r1.json") == Self.reviewFile("r1", rating: 4, extra: ["text": .string("good")]))
        #expect(ws.read("dune/reviews/r%202.json") == Self.reviewFile("r 2", rating: 5))
        #expect(ws.read("ghost/reviews/r9.json") == Self.reviewFile("r9", rating: 1))
        #expect(ws.read("ghost.json") == nil)
        #expect(!FileManager.default.fileExists(atPath: ws.root + "/dune/notes"))
        #expect(try ws.run("status", "--short").stdout == "")

        // The editor changes one review; the app changes another field of it.
        try ws.write("dune/reviews/r1.json", Self.reviewFile("r1", rating: 5, extra: ["text": .string("good")]))
        #expect(try ws.run("status", "--short").stdout == "M  dune/reviews/r1\n")
        let diff = try ws.run("diff", "dune/reviews/r1")
        #expect(diff.stdout.contains("dune/reviews/r1.json: modified locally"), "\(diff.stdout)")
        #expect(diff.stdout.contains("rating (changed locally)"), "\(diff.stdout)")
        let push = try ws.run("push")
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        #expect(push.stdout.contains("dune/reviews/r1"), "\(push.stdout)")
        let remote = try await ws.rest.document("dune/reviews/r1")
        #expect(remote?["rating"] == .integer(5))

        // A remote change to a review and a local one to a different field merge.
        try await ws.rest.put([(id: "dune/reviews/r1", fields: Self.review("r1", rating: 5, extra: ["text": .string("great")]))])
        try ws.write("dune/reviews/r1.json", Self.reviewFile("r1", rating: 3, extra: ["text": .string("good")]))
        let status = try ws.run("status", "--json")
        #expect(status.stdout.contains("\"id\": \"dune/reviews/r1\""), "\(status.stdout)")
        #expect(status.stdout.contains("\"class\": \"mergeable\""), "\(status.stdout)")
        #expect(try ws.run("pull").status == 0)
        #expect(ws.read("dune/reviews/r1.json") == Self.reviewFile("r1", rating: 3, extra: ["text": .string("great")]))

        // Both change the rating: a conflict, resolved by path id.
        try #expect(ws.run("push").status == 0)
        try await ws.rest.put([(id: "dune/reviews/r1", fields: Self.review("r1", rating: 1, extra: ["text": .string("great")]))])
        try ws.write("dune/reviews/r1.json", Self.reviewFile("r1", rating: 2, extra: ["text": .string("great")]))
        let conflicted = try ws.run("pull")
        #expect(conflicted.status == 1, "\(conflicted.stdout)")
        #expect(try ws.run("status", "--short").stdout == "UU dune/reviews/r1\n")
        let resolved = try ws.run("resolve", "dune/reviews/r1", "--theirs")
        #expect(resolved.status == 0, "\(resolved.stdout)\(resolved.stderr)")
        #expect(ws.read("dune/reviews/r1.json") == Self.reviewFile("r1", rating: 1, extra: ["text": .string("great")]))
        #expect(try ws.run("status", "--short").stdout == "")
    }

    @Test func listingCostsTheSameRequestsForFiveParentsAndForTwoHundred() async throws {
        var counts: [Int] = []
        for books in [5, 200] {
            let ws = try Workspace(project: Emulator.uniqueProject("sub-requests-\(books)"), host: try Emulator.requireHost())
            try await ws.rest.put(Self.library(books: books, reviews: 3))
            try ws.initialize("--subcollection", "reviews", "--subcollection-require", "reviews:rating:integer")
            let pull = try ws.run("-v", "pull")
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(try ws.recordFiles().count == books)
            #expect(ws.read(String(format: "b%05d/reviews/r3.json", books - 1)) == Self.reviewFile("r3", rating: 3))
            let status = try ws.run("-v", "status", "--short")
            #expect(status.stdout == "")
            #expect(status.stderr.contains("\(books * 4) documents read"), "\(status.stderr)")
            counts.append(try #require(Self.requests(status.stderr), "\(status.stderr)"))
        }
        // One names query for the books and one for the reviews group, whatever the number of parents.
        #expect(counts == [2, 2])
    }

    @Test func withoutTheOptInNothingChanges() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("sub-off"), host: try Emulator.requireHost())
        try await ws.rest.put([(id: "dune", fields: bookFields("dune")), (id: "dune/reviews/r1", fields: Self.review("r1", rating: 4))])
        try ws.initialize()
        #expect(try ws.run("pull").status == 0)
        #expect(!FileManager.default.fileExists(atPath: ws.root + "/dune"))
        try mkdir(ws, "dune/reviews")
        try ws.write("dune/reviews/r2.json", Self.reviewFile("r2", rating: 1))
        #expect(try ws.run("status", "--short").stdout == "")
        let diff = try ws.run("diff", "dune/reviews/r1")
        #expect(diff.status == 2)
        #expect(diff.stderr.contains("contains '/'"), "\(diff.stderr)")
    }

    @Test func pullNeverWritesThroughALinkedFolder() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("sub-link"), host: try Emulator.requireHost())
        try await ws.rest.put([(id: "dune/reviews/r1", fields: Self.review("r1", rating: 4)), (id: "emma/reviews/r1", fields: Self.review("r1", rating: 2))])
        try ws.initialize("--subcollection", "reviews")
        let outside = ws.scratch.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: ws.root + "/dune", withDestinationPath: outside)
        let pull = try ws.run("pull")
        #expect(pull.status == 1, "\(pull.stdout)\(pull.stderr)")
        #expect(pull.stdout.contains("dune: is a symbolic link where a folder belongs (subcollection records live below it)"), "\(pull.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        #expect(ws.read("emma/reviews/r1.json") == Self.reviewFile("r1", rating: 2))
    }

    @Test func deletingAParentLeavesItsReviewsAndSaysSo() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("sub-parent"), host: try Emulator.requireHost())
        try await ws.rest.put(Self.library(books: 4, reviews: 2))
        try ws.initialize("--subcollection", "reviews")
        #expect(try ws.run("pull").status == 0)

        // Remote delete of a parent: its file goes, its folder and reviews stay.
        try await ws.rest.delete("b00000")
        let pulled = try ws.run("pull")
        #expect(pulled.status == 0, "\(pulled.stdout)\(pulled.stderr)")
        #expect(ws.read("b00000.json") == nil)
        #expect(ws.read("b00000/reviews/r1.json") != nil && ws.read("b00000/reviews/r2.json") != nil)
        #expect(pulled.stderr.contains("warning: the remote deleted b00000 (pull removes its file), but 2 subcollection records remain below it (b00000/…)"),
                "\(pulled.stderr)")

        // Local delete of a parent: push deletes the document only.
        try ws.remove("b00001.json")
        let dry = try ws.run("push", "--dry-run")
        #expect(dry.stderr.contains("warning: push would delete b00001 in Firestore, but 2 subcollection records remain below it (b00001/…)"), "\(dry.stderr)")
        let pushed = try ws.run("push", "--json")
        #expect(pushed.status == 0, "\(pushed.stdout)\(pushed.stderr)")
        #expect(pushed.stdout.contains("\"deletedParents\": [\n"), "\(pushed.stdout)")
        #expect(pushed.stdout.contains("\"remainingChildren\": 2"), "\(pushed.stdout)")
        #expect(try await ws.rest.document("b00001") == nil)
        #expect(try await ws.rest.document("b00001/reviews/r1") != nil)
        #expect(try ws.run("status", "--short").stdout == "")
    }

    /// A file argument names the record at that path, never the record its last
    /// name would be at the top: `resolve r1.json` inside `dune/reviews/` settles
    /// the review, and the book `r1`'s local edit survives (it was once lost).
    @Test func fileArgumentsNameTheRecordAtTheirPath() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("sub-args"), host: try Emulator.requireHost())
        try await ws.rest.put([(id: "r1", fields: bookFields("r1", title: "Base")), (id: "dune/reviews/r1", fields: Self.review("r1", rating: 3))])
        try ws.initialize("--subcollection", "reviews")
        #expect(try ws.run("pull").status == 0)
        try ws.write("r1.json", #"{"id": "r1", "title": "Ours", "author": "Author", "genre": "fiction"}"# + "\n")
        try ws.write("dune/reviews/r1.json", Self.reviewFile("r1", rating: 4))
        try await ws.rest.put([(id: "r1", fields: bookFields("r1", title: "Theirs")), (id: "dune/reviews/r1", fields: Self.review("r1", rating: 5))])
        let pulled = try ws.run("pull")
        #expect(pulled.status == 1)
        // The conflict line names the state file that really holds the remote side.
        #expect(pulled.stdout.contains("remote side in .booksync/conflicts/dune%2Freviews%2Fr1.json"), "\(pulled.stdout)")
        #expect(ws.read(".booksync/conflicts/dune%2Freviews%2Fr1.json") != nil)
        #expect(try ws.run("status", "--short").stdout == "UU dune/reviews/r1\nUU r1\n")

        // A mistyped folder and a path outside the collection are refused, not read as 'r1'.
        for wrong in ["dune/review/r1.json", "../elsewhere/r1.json"] {
            let refused = try ws.run("resolve", wrong, "--theirs")
            #expect(refused.status == 2, "\(wrong): \(refused.stdout)\(refused.stderr)")
        }
        let inFolder = try BinaryTests.run(["resolve", "r1.json", "--theirs"], in: ws.root + "/dune/reviews", environment: ws.environment)
        #expect(inFolder.status == 0, "\(inFolder.stdout)\(inFolder.stderr)")
        #expect(ws.read("dune/reviews/r1.json") == Self.reviewFile("r1", rating: 5))
        #expect(ws.read("r1.json")?.contains("\"Ours\"") == true)
        #expect(try ws.run("status", "--short").stdout == "UU r1\n")
        let diff = try BinaryTests.run(["diff", "../../r1.json"], in: ws.root + "/dune/reviews", environment: ws.environment)
        #expect(diff.stdout.hasPrefix("../../r1.json: conflict, both modified"), "\(diff.stdout)")
        // From outside the collection (-C), a relative path is taken from the collection directory.
        let outside = try BinaryTests.run(["-C", "books", "diff", "r1.json", "dune/reviews/r1.json"], in: ws.scratch.path, environment: ws.environment)
        #expect(outside.stdout.contains("books/r1.json: conflict, both modified"), "\(outside.stdout)\(outside.stderr)")
        #expect(outside.stdout.contains("books/dune/reviews/r1.json: clean"), "\(outside.stdout)")
    }
}

extension RESTClient {
    /// One document's fields by its path below the collection, nil when absent.
    func document(_ path: String) async throws -> Fields? {
        let (status, answer) = try await request("GET", base + "/\(collection)/" + path.split(separator: "/").map {
            String($0).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        }.joined(separator: "/"))
        guard status == 200, case .map(let document) = answer else { return nil }
        return try FirestoreValueCodec.decodeFields(document["fields"], documentsRoot: root)
    }
}
