import BooksyncCore
import Foundation

/// The `Decoder` handed to `init(from:)`: one value of the record and its
/// coding path; turns record values into scalars and the special types
/// (`Date`, `Timestamp`, `Data`, `GeoPoint`, `DocumentReference`, `URL`).
final class RecordDecoding: Decoder {
    let value: Value
    let codingPath: [any CodingKey]
    let sendableUserInfo: [CodingUserInfoKey: any Sendable]
    var userInfo: [CodingUserInfoKey: Any] { sendableUserInfo }

    init(value: Value, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.value = value
        self.codingPath = codingPath
        self.sendableUserInfo = userInfo
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .map(let fields) = value else {
            throw Self.mismatch([String: Any].self, expected: "a map", found: value, at: codingPath)
        }
        return KeyedDecodingContainer(RecordKeyedDecodingContainer<Key>(decoding: self, fields: fields, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else {
            throw Self.mismatch([Any].self, expected: "an array", found: value, at: codingPath)
        }
        return RecordUnkeyedDecodingContainer(decoding: self, items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        RecordSingleValueDecodingContainer(decoding: self)
    }

    // MARK: - Unboxing

    /// Decodes any type from `value` at `path`: the special types straight
    /// from their record values, anything else through its `init(from:)`.
    func unbox<T: Decodable>(_ value: Value, as type: T.Type, at path: [any CodingKey]) throws -> T {
        if T.self == Value.self { return value as! T }  // as it is, null included
        if T.self == Date.self {
            guard case .timestamp(let timestamp) = value else { throw Self.mismatch(T.self, expected: "a timestamp", found: value, at: path) }
            return DateConversion.date(of: timestamp) as! T
        }
        if T.self == Timestamp.self {
            guard case .timestamp(let timestamp) = value else { throw Self.mismatch(T.self, expected: "a timestamp", found: value, at: path) }
            return timestamp as! T
        }
        if T.self == Data.self {
            guard case .bytes(let bytes) = value else { throw Self.mismatch(T.self, expected: "bytes", found: value, at: path) }
            return Data(bytes) as! T
        }
        if T.self == GeoPoint.self {
            guard case .geoPoint(let latitude, let longitude) = value else {
                throw Self.mismatch(T.self, expected: "a geopoint", found: value, at: path)
            }
            return GeoPoint(latitude: latitude, longitude: longitude) as! T
        }
        if T.self == DocumentReference.self {
            guard case .reference(let documentPath) = value else {
                throw Self.mismatch(T.self, expected: "a reference", found: value, at: path)
            }
            let reference = DocumentReference(path: documentPath)
            guard reference.isValid else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: path, debugDescription: "reference \(CanonicalJSON.asciiQuoted(documentPath)) is not a document path"))
            }
            return reference as! T
        }
        if T.self == URL.self {
            guard case .string(let text) = value else { throw Self.mismatch(T.self, expected: "a URL string", found: value, at: path) }
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: path, debugDescription: "\(FoundValue.describe(value)) is not a URL"))
            }
            return url as! T
        }
        return try T(from: RecordDecoding(value: value, codingPath: path, userInfo: sendableUserInfo))
    }

    /// `typeMismatch`, or `valueNotFound` when the value is null (as
    /// `JSONDecoder` reports a null where a value is required).
    static func mismatch(_ type: Any.Type, expected: String, found value: Value, at path: [any CodingKey]) -> DecodingError {
        let context = DecodingError.Context(codingPath: path, debugDescription: "expected \(expected), found \(FoundValue.describe(value))")
        if case .null = value { return .valueNotFound(type, context) }
        return .typeMismatch(type, context)
    }

    // MARK: - Scalars

    static func bool(_ value: Value, at path: [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, expected: "a boolean", found: value, at: path) }
        return flag
    }

    static func string(_ value: Value, at path: [any CodingKey]) throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, expected: "a string", found: value, at: path) }
        return text
    }

    /// An integer that `T` holds exactly; a double is a type mismatch, however round.
    static func integer<T: FixedWidthInteger>(_ value: Value, as type: T.Type, at path: [any CodingKey]) throws -> T {
        guard case .integer(let number) = value else { throw mismatch(T.self, expected: "an integer", found: value, at: path) }
        guard let exact = T(exactly: number) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: path, debugDescription: "integer \(number) does not fit in \(T.self) (\(T.min)...\(T.max))"))
        }
        return exact
    }

    /// A double, or an integer that `T` holds exactly; a finite double beyond
    /// `T`'s range (only `Float` has one) is corrupt data, not infinity.
    static func floatingPoint<T: BinaryFloatingPoint>(_ value: Value, as type: T.Type, at path: [any CodingKey]) throws -> T {
        switch value {
        case .double(let number):
            let converted = T(number)
            guard converted.isFinite || !number.isFinite else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: path, debugDescription: "double \(number) is beyond the range of \(T.self)"))
            }
            return converted
        case .integer(let number):
            guard let exact = T(exactly: number) else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: path, debugDescription: "integer \(number) has no exact \(T.self) value; write it as a double"))
            }
            return exact
        default:
            throw mismatch(T.self, expected: "a double", found: value, at: path)
        }
    }
}
