import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// Hostile input for the record parser: bounded, deterministic fuzzing. Every
/// input must either parse (and then canonicalise stably) or fail with an error
/// whose position lies inside the input — never crash or hang.
@Suite struct ParserFuzzTests {
    static let seeds: [[UInt8]] = [
        Array(#"{"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "sf", "year": 1965, "rating": 4.25}"#.utf8),
        Array("""
            {
              "id": "x",
              "tags": ["a", "b\\n\\u00e9\\ud83d\\ude80"],
              "nested": {"m": {"n": [1, 2.5e-3, -0.0, null, true, false]}},
              "when": {"$timestamp": "2024-05-01T12:00:00.123456Z"},
              "blob": {"$bytes": "AAEC"},
              "ref": {"$reference": "authors/a"},
              "geo": {"$geopoint": {"latitude": 1.5, "longitude": -2}},
              "nan": {"$double": "NaN"}
            }
            """.utf8),
    ]

    static let interesting: [UInt8] = Array(#"{}[]",:\/-+.eE0123456789 tfn$"#.utf8) + [0x00, 0x0A, 0x09, 0x7F, 0x80, 0xBF, 0xC0, 0xE2, 0xED, 0xF0, 0xF4, 0xFF]

    func check(_ input: [UInt8]) {
        do {
            let fields = try JSONParser.parseObject(input)
            let once = CanonicalJSON.encode(fields)
            let again = try JSONParser.parseObject(once)
            #expect(again == fields, "canonical bytes do not parse back to the same value")
            #expect(CanonicalJSON.encode(again) == once)
        } catch {
            let lines = input.split(separator: 0x0A, omittingEmptySubsequences: false).count
            #expect(error.position.line >= 1 && error.position.line <= lines, "\(error)")
            #expect(error.position.column >= 1, "\(error)")
            #expect(!error.message.isEmpty)
        }
    }

    @Test func truncationAtEveryByte() {
        for seed in Self.seeds {
            for end in 0..<seed.count { check(Array(seed[..<end])) }
        }
    }

    @Test func randomMutations() {
        var random = SplitMix64(seed: 20_261_129)
        for _ in 0..<20_000 { check(Self.mutation(&random)) }
    }

    /// A seed with one to four bytes replaced, removed or inserted.
    static func mutation(_ random: inout SplitMix64) -> [UInt8] {
        var input = seeds[random.below(seeds.count)]
        for _ in 0..<(1 + random.below(4)) {
            let position = random.below(input.count)
            switch random.below(4) {
            case 0: input[position] = interesting[random.below(interesting.count)]
            case 1: input.remove(at: position)
            case 2: input.insert(interesting[random.below(interesting.count)], at: position)
            default: input[position] = UInt8(truncatingIfNeeded: random.next())
            }
            if input.isEmpty { break }
        }
        return input
    }

    @Test func pathologicalShapes() {
        check(Array(repeating: UInt8(ascii: "["), count: 100_000))
        check(Array("{\"a\":".utf8) + Array(repeating: UInt8(ascii: "{"), count: 50_000))
        check(Array("{\"a\": \"".utf8) + Array(repeating: UInt8(ascii: "\\"), count: 10_001))
        check(Array("{\"a\": 1".utf8) + Array(repeating: UInt8(ascii: "0"), count: 100_000) + Array("}".utf8))
        check(Array("{\"a\": 0.".utf8) + Array(repeating: UInt8(ascii: "1"), count: 100_000) + Array("}".utf8))
        check(Array("{\"a\": 1e99999999999999999999}".utf8))
        check([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + Array("{}".utf8))
    }
}
