/// A `Timestamp` in a `Codable` DTO holds every microsecond of 0001–9999, where
/// a `Date` (a `Double`) cannot: its step is about 30 µs in year 9999.
/// `RecordEncoder` and `RecordDecoder` (BooksyncCodable) map it straight to a
/// record's timestamp; other coders see its canonical RFC 3339 text.
extension Timestamp: Codable {
    /// Decodes the RFC 3339 text (see `init(rfc3339:)`).
    /// - Throws: `DecodingError.dataCorrupted` for text that is no timestamp
    ///   Firestore can store.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try Timestamp(rfc3339: text)
        } catch {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    /// Encodes the canonical RFC 3339 text, `2024-05-01T12:00:00.000000Z`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rfc3339)
    }
}
