import BooksyncCodable
import BooksyncCore
import Foundation
import Testing

/// Which record numbers decode into which Swift number types: integers into
/// any integer type they fit and into floating point when exact; doubles
/// into floating point only.
@Suite struct NumberRulesTests {
    struct Box<V: Decodable>: Decodable {
        var value: V
    }

    /// The outcome as text: the decoded value, or the error's kind.
    static func decode<V: Decodable>(_ type: V.Type, _ value: Value) -> String {
        do {
            return "\(try RecordDecoder().decode(Box<V>.self, from: ["value": value]).value)"
        } catch DecodingError.typeMismatch { return "typeMismatch" } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.first?.stringValue == "value")
            return "dataCorrupted"
        } catch {
            return "\(error)"
        }
    }

    static let cases: [(String, @Sendable () -> String, String)] = [
        ("127 into Int8", { decode(Int8.self, .integer(127)) }, "127"),
        ("128 into Int8", { decode(Int8.self, .integer(128)) }, "dataCorrupted"),
        ("-129 into Int8", { decode(Int8.self, .integer(-129)) }, "dataCorrupted"),
        ("300 into UInt8", { decode(UInt8.self, .integer(300)) }, "dataCorrupted"),
        ("-1 into UInt", { decode(UInt.self, .integer(-1)) }, "dataCorrupted"),
        ("-1 into UInt64", { decode(UInt64.self, .integer(-1)) }, "dataCorrupted"),
        ("Int64.max into UInt64", { decode(UInt64.self, .integer(.max)) }, "9223372036854775807"),
        ("Int32.max + 1 into Int32", { decode(Int32.self, .integer(Int64(Int32.max) + 1)) }, "dataCorrupted"),
        ("Int64.min into Int128", { decode(Int128.self, .integer(.min)) }, "-9223372036854775808"),
        ("-1 into UInt128", { decode(UInt128.self, .integer(-1)) }, "dataCorrupted"),
        ("65535 into UInt16", { decode(UInt16.self, .integer(65535)) }, "65535"),
        ("4.0 into Int", { decode(Int.self, .double(4)) }, "typeMismatch"),
        ("a string into Int", { decode(Int.self, .string("4")) }, "typeMismatch"),
        ("4 into Double", { decode(Double.self, .integer(4)) }, "4.0"),
        ("2^53 into Double", { decode(Double.self, .integer(1 << 53)) }, "9007199254740992.0"),
        ("2^53 + 1 into Double", { decode(Double.self, .integer((1 << 53) + 1)) }, "dataCorrupted"),
        ("2^24 + 1 into Float", { decode(Float.self, .integer((1 << 24) + 1)) }, "dataCorrupted"),
        ("2^24 into Float", { decode(Float.self, .integer(1 << 24)) }, "16777216.0"),
        ("0.1 into Float (rounds like Float(0.1))", { decode(Float.self, .double(0.1)) }, "\(Float(0.1))"),
        ("1e39 into Float", { decode(Float.self, .double(1e39)) }, "dataCorrupted"),
        ("infinity into Float", { decode(Float.self, .double(.infinity)) }, "inf"),
        ("NaN into Double", { decode(Double.self, .double(.nan)) }, "nan"),
        ("a boolean into Double", { decode(Double.self, .bool(true)) }, "typeMismatch"),
        ("true into Bool", { decode(Bool.self, .bool(true)) }, "true"),
        ("1 into Bool", { decode(Bool.self, .integer(1)) }, "typeMismatch"),
    ]

    @Test func numberConversions() {
        for (name, decode, expected) in Self.cases {
            #expect(decode() == expected, "\(name)")
        }
    }

    /// Integers in every position a container offers: keyed, unkeyed, single value.
    @Test func overflowInEveryContainer() throws {
        #expect(Self.decode([Int8].self, .array([.integer(1), .integer(300)])) == "dataCorrupted")
        #expect {
            try RecordDecoder().decode(Box<[Int8]>.self, from: ["value": .array([.integer(1), .integer(300)])])
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["value", "Index 1"] && context.codingPath.last?.intValue == 1
        }
        #expect(Self.decode(Wrapped.self, .integer(300)) == "dataCorrupted")
        #expect(throws: EncodingError.self) { try RecordEncoder().encode(["a": [UInt64.max]]) }
        #expect(throws: EncodingError.self) { try RecordEncoder().encode(Box2(value: .max)) }
    }

    struct Wrapped: Decodable {
        var raw: Int8
        init(from decoder: any Decoder) throws { raw = try decoder.singleValueContainer().decode(Int8.self) }
    }

    struct Box2: Encodable {
        var value: UInt
    }
}
