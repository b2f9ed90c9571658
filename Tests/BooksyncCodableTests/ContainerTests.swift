import BooksyncCodable
import BooksyncCore
import Foundation
import Testing

/// The parts of `Encoder`/`Decoder` that synthesized structs do not use:
/// `superEncoder`/`superDecoder`, enums with associated values, nested and
/// hand-written containers, `userInfo`.
@Suite struct ContainerTests {
    class Item: Codable {
        var title: String
        init(title: String) { self.title = title }
    }

    /// A subclass that keeps its parent's fields under `super` (the default
    /// key) and, in `Signed`, under a key of its own.
    final class Edition: Item {
        var printing: Int
        init(title: String, printing: Int) {
            self.printing = printing
            super.init(title: title)
        }
        enum CodingKeys: String, CodingKey { case printing }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            printing = try container.decode(Int.self, forKey: .printing)
            try super.init(from: container.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(printing, forKey: .printing)
            try super.encode(to: container.superEncoder())
        }
    }

    final class Signed: Item {
        var signer: String
        init(title: String, signer: String) {
            self.signer = signer
            super.init(title: title)
        }
        enum CodingKeys: String, CodingKey { case signer, base }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            signer = try container.decode(String.self, forKey: .signer)
            try super.init(from: container.superDecoder(forKey: .base))
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(signer, forKey: .signer)
            try super.encode(to: container.superEncoder(forKey: .base))
        }
    }

    /// A subclass that shares its parent's container (no super encoder): both
    /// write into one map.
    final class Flat: Item {
        var shelf: String
        init(title: String, shelf: String) {
            self.shelf = shelf
            super.init(title: title)
        }
        enum CodingKeys: String, CodingKey { case shelf }
        required init(from decoder: any Decoder) throws {
            shelf = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .shelf)
            try super.init(from: decoder)
        }
        override func encode(to encoder: any Encoder) throws {
            try super.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(shelf, forKey: .shelf)
        }
    }

    @Test func superEncoderNestsTheParentUnderSuper() throws {
        let fields = try RecordEncoder().encode(Edition(title: "Dune", printing: 3))
        #expect(fields == ["printing": .integer(3), "super": .map(["title": .string("Dune")])])
        let (decoded, _) = try RecordFiles.roundTrip(Edition(title: "Dune", printing: 3))
        #expect(decoded.title == "Dune" && decoded.printing == 3)
    }

    @Test func superEncoderForKeyUsesThatKey() throws {
        let fields = try RecordEncoder().encode(Signed(title: "Dune", signer: "Frank"))
        #expect(fields == ["signer": .string("Frank"), "base": .map(["title": .string("Dune")])])
        let decoded = try RecordDecoder().decode(Signed.self, from: fields)
        #expect(decoded.title == "Dune" && decoded.signer == "Frank")
    }

    @Test func aSubclassCanShareItsParentsMap() throws {
        let fields = try RecordEncoder().encode(Flat(title: "Dune", shelf: "B2"))
        #expect(fields == ["title": .string("Dune"), "shelf": .string("B2")])
        let decoded = try RecordDecoder().decode(Flat.self, from: fields)
        #expect(decoded.title == "Dune" && decoded.shelf == "B2")
    }

    @Test func aMissingSuperIsNullAndItsErrorHasThePath() throws {
        #expect {
            try RecordDecoder().decode(Edition.self, from: ["printing": .integer(1)])
        } throws: { error in
            guard case DecodingError.valueNotFound(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["super"] && context.debugDescription == "expected a map, found null"
        }
    }

    enum Event: Codable, Equatable {
        case added
        case lent(to: String, until: Date?)
        case moved(String, shelf: Int)
        case tagged([String])
    }

    struct Log: Codable, Equatable {
        var events: [Event]
    }

    @Test func enumsWithAssociatedValuesAreMaps() throws {
        let until = Date(timeIntervalSince1970: 1_700_000_000.25)
        let log = Log(events: [.added, .lent(to: "Ann", until: until), .lent(to: "Bo", until: nil), .moved("attic", shelf: 2), .tagged(["a"])])
        let fields = try RecordEncoder().encode(log)
        #expect(fields["events"] == .array([
            .map(["added": .map([:])]),
            .map(["lent": .map(["to": .string("Ann"), "until": .timestamp(Timestamp(microsecondsSinceEpoch: 1_700_000_000_250_000))])]),
            .map(["lent": .map(["to": .string("Bo")])]),
            .map(["moved": .map(["_0": .string("attic"), "shelf": .integer(2)])]),
            .map(["tagged": .map(["_0": .array([.string("a")])])]),
        ]))
        #expect(try RecordFiles.roundTrip(log).decoded == log)
    }

    @Test func dictionariesWithStringAndIntKeys() throws {
        struct Counts: Codable, Equatable {
            var byGenre: [String: Int]
            var byYear: [Int: [String]]
        }
        let counts = Counts(byGenre: ["fantasy": 3, "science fiction": 5], byYear: [1965: ["dune"], -44: ["caesar"]])
        let fields = try RecordEncoder().encode(counts)
        #expect(fields["byYear"] == .map(["1965": .array([.string("dune")]), "-44": .array([.string("caesar")])]))
        #expect(try RecordFiles.roundTrip(counts).decoded == counts)
        #expect(throws: DecodingError.self) {
            try RecordDecoder().decode(Counts.self, from: ["byGenre": .map([:]), "byYear": .map(["MCMLXV": .array([])])])
        }
    }

    /// Hand-written nested containers: keyed in unkeyed in keyed, and arrays
    /// of arrays (which the encoder writes; Firestore's rule against them is
    /// the record loader's to report).
    struct Shelf: Codable, Equatable {
        var name: String
        var rows: [[String]]
        var spots: [(x: Int, y: Int)]

        static func == (a: Shelf, b: Shelf) -> Bool {
            a.name == b.name && a.rows == b.rows && a.spots.elementsEqual(b.spots) { $0 == $1 }
        }

        enum CodingKeys: String, CodingKey { case name, layout }
        enum LayoutKeys: String, CodingKey { case rows, spots }
        enum SpotKeys: String, CodingKey { case x, y }

        init(name: String, rows: [[String]], spots: [(x: Int, y: Int)]) {
            self.name = name
            self.rows = rows
            self.spots = spots
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            var layout = container.nestedContainer(keyedBy: LayoutKeys.self, forKey: .layout)
            var rowsContainer = layout.nestedUnkeyedContainer(forKey: .rows)
            for row in rows {
                var inner = rowsContainer.nestedUnkeyedContainer()
                for title in row { try inner.encode(title) }
            }
            var spotsContainer = layout.nestedUnkeyedContainer(forKey: .spots)
            for spot in spots {
                var pair = spotsContainer.nestedContainer(keyedBy: SpotKeys.self)
                try pair.encode(spot.x, forKey: .x)
                try pair.encode(spot.y, forKey: .y)
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            let layout = try container.nestedContainer(keyedBy: LayoutKeys.self, forKey: .layout)
            var rowsContainer = try layout.nestedUnkeyedContainer(forKey: .rows)
            rows = []
            while !rowsContainer.isAtEnd {
                var inner = try rowsContainer.nestedUnkeyedContainer()
                var row: [String] = []
                while !inner.isAtEnd { row.append(try inner.decode(String.self)) }
                rows.append(row)
            }
            var spotsContainer = try layout.nestedUnkeyedContainer(forKey: .spots)
            spots = []
            while !spotsContainer.isAtEnd {
                let pair = try spotsContainer.nestedContainer(keyedBy: SpotKeys.self)
                spots.append((try pair.decode(Int.self, forKey: .x), try pair.decode(Int.self, forKey: .y)))
            }
        }
    }

    @Test func nestedContainers() throws {
        let shelf = Shelf(name: "B", rows: [["dune", "emma"], []], spots: [(x: 1, y: 2)])
        let fields = try RecordEncoder().encode(shelf)
        #expect(fields == ["name": .string("B"), "layout": .map([
            "rows": .array([.array([.string("dune"), .string("emma")]), .array([])]),
            "spots": .array([.map(["x": .integer(1), "y": .integer(2)])]),
        ])])
        #expect(try RecordDecoder().decode(Shelf.self, from: fields) == shelf)
        let problems = RecordFiles.rules.problems(in: fields.merging(["id": .string("b")]) { $1 }, id: try RecordID("b"))
        #expect(problems.map(\.message) == [0, 1].map { "field 'layout.rows[\($0)]' is an array inside an array; Firestore does not allow that (wrap it in a map)" })
    }

    enum ValueKey: String, CodingKey { case value }

    @Test func unkeyedDecodeNilAdvancesOnlyOnNull() throws {
        struct Sparse: Decodable, Equatable {
            var items: [String?]
            init(from decoder: any Decoder) throws {
                var container = try decoder.container(keyedBy: ValueKey.self).nestedUnkeyedContainer(forKey: .value)
                items = []
                while !container.isAtEnd {
                    items.append(try container.decodeNil() ? nil : try container.decode(String.self))
                }
                #expect(container.currentIndex == container.count)
                #expect(throws: DecodingError.self) { try container.decode(String.self) }
            }
        }
        let decoded = try RecordDecoder().decode(Sparse.self, from: ["value": .array([.string("a"), .null, .string("c")])])
        #expect(decoded.items == ["a", nil, "c"])
    }

    @Test func userInfoReachesTheTypes() throws {
        let key = try #require(CodingUserInfoKey(rawValue: "shelf"))
        struct Tagged: Codable {
            var shelf: String
            init(shelf: String) { self.shelf = shelf }
            init(from decoder: any Decoder) throws { shelf = decoder.userInfo[CodingUserInfoKey(rawValue: "shelf")!] as? String ?? "?" }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: ValueKey.self)
                try container.encode(encoder.userInfo[CodingUserInfoKey(rawValue: "shelf")!] as? String ?? "?", forKey: .value)
            }
        }
        var encoder = RecordEncoder()
        encoder.userInfo[key] = "B2"
        #expect(try encoder.encode(["t": Tagged(shelf: "")]) == ["t": .map(["value": .string("B2")])])
        var decoder = RecordDecoder()
        decoder.userInfo[key] = "C3"
        #expect(try decoder.decode([String: Tagged].self, from: ["t": .map([:])])["t"]?.shelf == "C3")
    }
}
