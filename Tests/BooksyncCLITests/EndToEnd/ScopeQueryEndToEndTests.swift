import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Scopes by query against the emulator's own answers: for a table of
/// scopes (every operator, `and`/`or`, tagged values, a dotted path, a
/// quoted name), the documents the emulator's query returns for the scope's
/// REST filter are exactly those the local matcher (`validate`, `status`)
/// accepts.
@Suite struct ScopeQueryEndToEndTests {
    static let documents: [(id: String, fields: Fields)] = [
        ("a", ["rating": .double(4.5), "count": .integer(3), "genre": .string("sf"), "tags": .array([.string("classic"), .integer(1)]),
               "stats": .map(["votes": .integer(10)]), "published": .timestamp(Timestamp(microsecondsSinceEpoch: 1_600_000_000_000_000)),
               "first name": .string("Ann"), "flag": .bool(true)]),
        ("b", ["rating": .integer(4), "count": .double(3.0), "genre": .string("fantasy"), "tags": .array([.string("new")]),
               "stats": .map(["votes": .double(2.5)]), "published": .timestamp(Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)),
               "flag": .bool(false)]),
        ("c", ["rating": .string("high"), "genre": .null, "tags": .string("classic"), "empty": .null, "nan": .double(.nan)]),
        ("d", ["rating": .double(2), "genre": .string("romance"), "count": .integer(10), "nan": .double(1)]),
        ("e", ["other": .bool(true)]),
        // Matching one branch of an `or` but without the other's inequality
        // field: Firestore leaves it out (the query is ordered by that field).
        ("f", ["genre": .string("sf"), "rating": .integer(5)]),
        ("g", ["genre": .string("sf"), "rating": .integer(5), "count": .integer(12)]),
    ]

    static let scopes: [String] = [
        "rating >= 4", "rating > 4", "rating < 4.5", "rating <= \"z\"", "rating != 4", "count == 3", "count != 3",
        "genre == \"sf\"", "genre != \"sf\"", "genre == null", "genre != null", "empty == null",
        "nan == {\"$double\": \"NaN\"}", "nan != {\"$double\": \"NaN\"}",
        "genre in [\"sf\", \"romance\"]", "genre not-in [\"sf\"]", "genre not-in [\"sf\", \"fantasy\", \"romance\"]",
        "tags array-contains \"classic\"", "tags array-contains 1.0", "tags array-contains-any [\"new\", 1]",
        "stats.votes >= 5", "stats.votes < 5", "stats.votes >= 1 and stats != {\"votes\": 99}", "`first name` == \"Ann\"", "flag == true", "flag != true",
        "published >= {\"$timestamp\": \"2021-01-01T00:00:00Z\"}", "published < {\"$timestamp\": \"2021-01-01T00:00:00Z\"}",
        "rating >= 4 and genre == \"sf\"", "genre == \"sf\" or count >= 10", "genre == \"sf\" or count == 10", "(rating >= 4 or count == 10) and genre != \"fantasy\"",
        "missing == 1", "missing != 1",
    ]

    @Test func theLocalMatcherAgreesWithTheEmulator() async throws {
        let host = try Emulator.requireHost()
        let rest = RESTClient(host: host, project: Emulator.uniqueProject("scopes"), collection: "books")
        try await rest.put(Self.documents)
        for text in Self.scopes {
            let scope = try ScopeExpression.parse(text)
            let body: Value = .map(["structuredQuery": .map([
                "from": .array([.map(["collectionId": .string("books")])]),
                "where": scope.restFilter(documentsRoot: rest.root),
            ])])
            let (status, answer) = try await rest.request("POST", "http://\(host)/v1/\(rest.root):runQuery", body: CanonicalJSON.encodeInline(body))
            #expect(status == 200, "\(text): \(CanonicalJSON.encodeInline(answer))")
            var remote: Set<String> = []
            if case .array(let entries) = answer {
                for case .map(let entry) in entries {
                    if case .map(let document)? = entry["document"], case .string(let name)? = document["name"] {
                        remote.insert(String(name.split(separator: "/").last ?? ""))
                    }
                }
            }
            let local = Set(Self.documents.filter { scope.matches($0.fields) }.map(\.id))
            #expect(local == remote, "\(text): booksync matches \(local.sorted()), the emulator \(remote.sorted())")
        }
    }
}
