import BooksyncCore

/// Decodes any `Decodable` value from the fields of a record, the way
/// `JSONDecoder` decodes it from JSON; the inverse of `RecordEncoder` (see its
/// table of types).
///
/// Decoding is strict about kinds, so a type declared by the app is the type
/// in the file:
/// - an integer decodes into any integer type it fits (300 into `Int8` is
///   `DecodingError.dataCorrupted`); a double never decodes into an integer
///   type, not even `4.0` (`typeMismatch`);
/// - a `Double` or `Float` accepts a double, and an integer only when the
///   floating-point type holds it exactly (`4` → `4.0`, as a hand-edited file
///   may write it; 2⁵³+1 into `Double` is `dataCorrupted`); a finite double
///   beyond `Float`'s range is `dataCorrupted` for `Float`;
/// - `Date` and `Timestamp` need a timestamp, `Data` bytes, `GeoPoint` a geopoint,
///   `DocumentReference` a reference, `URL` a string that parses as a URL;
/// - absent and null both decode as nil into an optional; into anything else,
///   absent is `keyNotFound` and null `valueNotFound`;
/// - keys the type does not know are ignored, so a DTO may declare `id`
///   (every record file holds it: the record id) or leave it out.
public struct RecordDecoder: Sendable {
    /// Values for the types being decoded to read through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// A decoder with no user info.
    public init() {}

    /// Decodes `type` from a record's fields (its top-level map).
    /// - Throws: `DecodingError` with the coding path of the offending value.
    public func decode<T: Decodable>(_ type: T.Type, from fields: Fields) throws -> T {
        try RecordDecoding(value: .map(fields), codingPath: [], userInfo: userInfo).unbox(.map(fields), as: type, at: [])
    }

    /// Decodes `type` from a record; errors name the record and, if given, its file.
    /// - Parameters:
    ///   - type: The DTO type to decode.
    ///   - record: The record, as a store or a collection directory loaded it.
    ///   - file: The record's file as the user should see it, e.g.
    ///   `books/dune.json`; nil names the record by its id (quoted in ASCII).
    ///   It is shown as given, so pass a path built from `RecordID.fileName`
    ///   (which escapes every unsafe byte), not text from a file.
    /// - Throws: `RecordDecodingError`, whose description is the sentence for
    ///   the user and whose `underlying` is the `DecodingError`.
    public func decode<T: Decodable>(_ type: T.Type, from record: CanonicalRecord, file: String? = nil) throws(RecordDecodingError) -> T {
        do {
            return try decode(type, from: record.fields)
        } catch let error as DecodingError {
            throw RecordDecodingError(recordID: record.id, file: file, underlying: error)
        } catch {
            // A type's own init(from:) threw something else: keep it, say where.
            throw RecordDecodingError(recordID: record.id, file: file, underlying: .dataCorrupted(DecodingError.Context(
                codingPath: [], debugDescription: "\(error)", underlyingError: error)))
        }
    }
}
