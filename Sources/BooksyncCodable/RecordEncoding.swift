import BooksyncCore
import Foundation

/// The `Encoder` handed to `encode(to:)`: holds what one value encoded, and
/// turns scalars and the special types (`Date`, `Timestamp`, `Data`, `GeoPoint`,
/// `DocumentReference`, `URL`) into record values.
final class RecordEncoding: Encoder {
    let codingPath: [any CodingKey]
    let sendableUserInfo: [CodingUserInfoKey: any Sendable]
    var userInfo: [CodingUserInfoKey: Any] { sendableUserInfo }
    /// What the value encoded so far; nil until it asks for a container.
    var node: EncodedNode?

    init(codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.codingPath = codingPath
        self.sendableUserInfo = userInfo
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let map: EncodedMap
        switch node {
        case nil:
            map = EncodedMap(codingPath: codingPath)
            node = .map(map)
        case .map(let existing)?:
            map = existing
        default:
            preconditionFailure("Attempt to push a keyed encoding container where a value of another kind was already encoded.")
        }
        return KeyedEncodingContainer(RecordKeyedEncodingContainer<Key>(encoding: self, map: map, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: EncodedArray
        switch node {
        case nil:
            array = EncodedArray()
            node = .array(array)
        case .array(let existing)?:
            array = existing
        default:
            preconditionFailure("Attempt to push an unkeyed encoding container where a value of another kind was already encoded.")
        }
        return RecordUnkeyedEncodingContainer(encoding: self, array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        RecordSingleValueEncodingContainer(encoding: self)
    }

    /// A child encoder for a value at `path`, with the same user info.
    func child(at path: [any CodingKey]) -> RecordEncoding {
        RecordEncoding(codingPath: path, userInfo: sendableUserInfo)
    }

    // MARK: - Boxing

    /// The node for any encodable value at `path`: the special types map to
    /// record values directly, anything else encodes itself into a child encoder.
    func box<T: Encodable>(_ value: T, at path: [any CodingKey]) throws -> EncodedNode {
        switch value {
        case let date as Date:
            guard let timestamp = DateConversion.timestamp(of: date) else {
                throw EncodingError.invalidValue(date, EncodingError.Context(
                    codingPath: path,
                    debugDescription: "the date \(date.timeIntervalSinceReferenceDate) s from 2001-01-01 is outside the timestamp range "
                        + "0001-01-01T00:00:00Z…9999-12-31T23:59:59.999999Z that Firestore can store"))
            }
            return .value(.timestamp(timestamp))
        case let timestamp as Timestamp:
            guard timestamp >= .minimum, timestamp <= .maximum else {
                throw EncodingError.invalidValue(timestamp, EncodingError.Context(
                    codingPath: path,
                    debugDescription: "the timestamp \(timestamp.microsecondsSinceEpoch) µs from 1970 is outside the range "
                        + "0001-01-01T00:00:00Z…9999-12-31T23:59:59.999999Z that Firestore can store"))
            }
            return .value(.timestamp(timestamp))
        case let data as Data:
            return .value(.bytes([UInt8](data)))
        case let point as GeoPoint:
            guard point.isValid else {
                throw EncodingError.invalidValue(point, EncodingError.Context(
                    codingPath: path,
                    debugDescription: "geopoint latitude must be within ±90 and longitude within ±180, found \(point.latitude), \(point.longitude)"))
            }
            return .value(point.value)
        case let reference as DocumentReference:
            guard reference.isValid else {
                throw EncodingError.invalidValue(reference, EncodingError.Context(
                    codingPath: path,
                    debugDescription: "reference '\(reference.path)' is not a document path (collection/document[/collection/document…])"))
            }
            return .value(.reference(reference.path))
        case let url as URL:
            return .value(.string(url.absoluteString))
        case let value as Value:
            return .value(value)  // as it is: null stays null, an integer an integer
        default:
            let encoding = child(at: path)
            try value.encode(to: encoding)
            return encoding.node ?? .map(EncodedMap(codingPath: path))
        }
    }

    /// An integer as a record integer (Int64).
    /// - Throws: `EncodingError.invalidValue` outside `Int64` (only `UInt`, `UInt64` and the 128-bit types get there).
    static func integer<T: BinaryInteger>(_ value: T, at path: [any CodingKey]) throws -> Value {
        guard let exact = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: path,
                debugDescription: "\(T.self) \(value) is outside \(Int64.min)...\(Int64.max), the integers a record (and Firestore) can store"))
        }
        return .integer(exact)
    }
}
