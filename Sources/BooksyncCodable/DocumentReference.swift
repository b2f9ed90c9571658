import BooksyncCore

/// A reference to a Firestore document: `{"$reference": "authors/frank-herbert"}`
/// in a record file.
///
/// The path is relative to the database's documents root (`collection/document`,
/// possibly deeper: `authors/x/letters/y`), or a full resource name
/// (`projects/P/databases/D/documents/…`), the two forms the record parser
/// accepts; collections under the collection's own database are written short.
/// `RecordEncoder` rejects any other path (`""`, `authors`, `a//b`), since a
/// record file could not hold it, and `RecordDecoder` maps only
/// `Value.reference` to it (a string is a type mismatch). Other encoders see
/// the path as a single string.
public struct DocumentReference: Codable, Hashable, Sendable {
    /// The document path, e.g. `authors/frank-herbert`.
    public var path: String

    /// A reference; not validated here (see `isValid`).
    public init(path: String) {
        self.path = path
    }

    /// True when the path names a document: an even, non-zero number of
    /// non-empty segments, below the documents root or after a full
    /// `projects/P/databases/D/documents/` prefix.
    public var isValid: Bool { ReferencePath.isDocumentPath(path) }

    /// Decodes the path from a single string (for decoders other than `RecordDecoder`).
    public init(from decoder: any Decoder) throws {
        self.path = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the path as a single string (for encoders other than `RecordEncoder`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(path)
    }
}
