/// A field value of a record: everything JSON can say, plus the Firestore types
/// that JSON cannot express (written on disk as single-key tagged objects).
///
/// Integers and doubles are distinct kinds, so `42` and `42.0` never merge into
/// one another, and every value survives a round trip through Firestore.
public enum Value: Sendable {
    /// JSON `null`; Firestore's `nullValue`.
    case null
    /// `true` or `false` (`boolean` in schemas and messages).
    case bool(Bool)
    /// A JSON number without fraction or exponent; Firestore's 64-bit `integerValue`.
    case integer(Int64)
    /// Any IEEE double, including NaN and the infinities. -0.0 is the same
    /// value as 0.0 (equal, written `0.0`, hashed alike): Firestore's REST
    /// API reads `-0` as `0` (the proto3 JSON mapping), so booksync could
    /// never write a negative zero back, and does not keep one.
    case double(Double)
    /// Text, compared by its UTF-8 bytes.
    case string(String)
    /// `{"$timestamp": "2024-05-01T12:00:00.000000Z"}` on disk.
    case timestamp(Timestamp)
    /// `{"$bytes": "<base64>"}` on disk.
    case bytes([UInt8])
    /// A document path relative to the database's documents root, e.g. `authors/frank-herbert`.
    case reference(String)
    /// `{"$geopoint": {"latitude": …, "longitude": …}}` on disk, in degrees.
    case geoPoint(latitude: Double, longitude: Double)
    /// A JSON array; its order matters for equality.
    case array([Value])
    /// A nested JSON object (a Firestore map).
    case map([String: Value])
}

extension Value: Equatable {
    /// Structural equality where doubles compare by bit pattern (so NaN equals
    /// NaN; -0.0 and 0.0, both written `0.0`, are equal) and strings by their
    /// UTF-8 bytes (not by Unicode canonical equivalence): two values are equal
    /// exactly when their canonical forms are equal.
    ///
    /// Map keys are Swift strings, which compare by canonical equivalence, so
    /// two field names that differ only by Unicode normalization (`café` as
    /// U+00E9 and as `e` U+0301) are one key: a record cannot hold both. That
    /// is a known limit, never a silent merge: a record file with both is a
    /// syntax error naming the two keys, and a Firestore document with both is
    /// an invalid document (see `EquivalentKeys`). Record ids and every other
    /// key booksync stores (manifest, base pack, conflicts, stat cache) are
    /// compared byte by byte (`RecordID`, `JSONTree`).
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.double(a), .double(b)): return sameDouble(a, b)
        case let (.string(a), .string(b)): return a.utf8.elementsEqual(b.utf8)
        case let (.timestamp(a), .timestamp(b)): return a == b
        case let (.bytes(a), .bytes(b)): return a == b
        case let (.reference(a), .reference(b)): return a.utf8.elementsEqual(b.utf8)
        case let (.geoPoint(la, lo), .geoPoint(lb, mb)): return sameDouble(la, lb) && sameDouble(lo, mb)
        case let (.array(a), .array(b)): return a == b
        case let (.map(a), .map(b)): return a == b
        default: return false
        }
    }

    private static func sameDouble(_ a: Double, _ b: Double) -> Bool {
        (a.isNaN && b.isNaN) || a.bitPattern == b.bitPattern || (a == 0 && b == 0)
    }
}

extension Value {
    /// The name of the value's kind as users see it in messages and in config.json.
    package var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .double: "double"
        case .string: "string"
        case .timestamp: "timestamp"
        case .bytes: "bytes"
        case .reference: "reference"
        case .geoPoint: "geopoint"
        case .array: "array"
        case .map: "map"
        }
    }
}

/// A record: the top-level map of one record file.
public typealias Fields = [String: Value]
