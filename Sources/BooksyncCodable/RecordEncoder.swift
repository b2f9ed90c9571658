import BooksyncCore

/// Encodes any `Encodable` value as the fields of a record, the way
/// `JSONEncoder` encodes it as JSON.
///
/// Swift types become record values as follows (`RecordDecoder` reads them back):
///
/// | Swift | record value |
/// |---|---|
/// | `String`, `Bool` | string, boolean |
/// | `Int`, `Int8`…`Int128`, `UInt`…`UInt128` | integer (64-bit signed; a value outside `Int64` is an error) |
/// | `Double`, `Float` | double (NaN and ±infinity included, written `{"$double": "NaN"}`) |
/// | `Date` | timestamp, rounded to the nearest microsecond, ties to even (exact within 1729–2273; see `DateConversion`) |
/// | `Timestamp` (BooksyncCore) | timestamp, every microsecond of 0001–9999 exact |
/// | `Data` | bytes |
/// | `GeoPoint`, `DocumentReference` | geopoint, reference |
/// | `URL` | string (its absolute string, as `JSONEncoder` writes it) |
/// | `Value` | the value as it is (`null` included): a field of any type, a map of undeclared keys |
/// | arrays, sets | array |
/// | structs, classes, dictionaries with `String` or `Int` keys | map |
/// | enums with associated values | map (Swift's synthesized form, `{"case": {"label": …}}`) |
///
/// An optional property that is nil is left out (the synthesized
/// `encodeIfPresent`); an explicit `encodeNil` writes null. The encoder does
/// not add the record's `id`: a DTO that declares `id` writes it like any
/// property, and one that does not gets fields without it (the caller, e.g. a
/// record store, adds it). Nor does it check the collection's schema or
/// Firestore's limits (20 levels, no array directly inside an array): those
/// are checked where the record is saved (`RecordRules.problems(in:id:)`).
public struct RecordEncoder: Sendable {
    /// Values for the types being encoded to read through `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// An encoder with no user info.
    public init() {}

    /// The fields of a record holding `value`.
    ///
    /// The top-level value must encode as a keyed container (a struct, a class
    /// or a dictionary with `String` keys), because a record is a map.
    /// - Throws: `EncodingError.invalidValue`, with the coding path of the
    ///   offending value, for a top level that is not keyed, an integer outside
    ///   `Int64`, a `Date` outside 0001–9999, a `GeoPoint` outside
    ///   ±90/±180, a `DocumentReference` that is not a document path, or a map
    ///   with a single `$` key; and whatever the value's own `encode(to:)` throws.
    public func encode<T: Encodable>(_ value: T) throws -> Fields {
        let encoding = RecordEncoding(codingPath: [], userInfo: userInfo)
        let node = try encoding.box(value, at: [])
        guard case .map(let map) = node else {
            let found = (try? node.resolved()).map { "found \($0.kindName)" } ?? "found no keyed container"
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: [],
                debugDescription: "a record is a map, so \(T.self) must encode as a keyed container (a struct, class or [String: …]); \(found)"))
        }
        return try map.resolvedFields()
    }
}
