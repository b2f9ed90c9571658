import BooksyncCore

/// A record that does not decode into the requested type, as a sentence
/// naming the record (or its file), the field and what is wrong:
///
///     books/dune.json: published: expected a timestamp, found string "1965"
///     record "dune": firstPrinting: missing required field 'copies'
///
/// The field is the dotted coding path (`chapters[2].title`); the reason is
/// the `DecodingError`'s own description, which `RecordDecoder` writes as a
/// sentence. The error keeps the `DecodingError` for code that inspects it.
public struct RecordDecodingError: Error, Sendable, CustomStringConvertible {
    /// The record that failed to decode.
    public let recordID: RecordID
    /// The record's file as given to `RecordDecoder.decode(_:from:file:)`, if any.
    public let file: String?
    /// What the decoder reported, with its coding path.
    public let underlying: DecodingError

    /// Wraps a decoding error of the record `recordID` (read from `file`).
    public init(recordID: RecordID, file: String?, underlying: DecodingError) {
        self.recordID = recordID
        self.file = file
        self.underlying = underlying
    }

    /// The field the error is about, dotted (`firstPrinting.copies`,
    /// `tags[1]`); empty for the record as a whole. For a missing key this is
    /// the map that lacks it: the key itself is named in the reason.
    public var fieldPath: String {
        DottedPath.of(context.codingPath)
    }

    /// The reason without record or field, e.g. `expected a timestamp, found string "1965"`.
    public var reason: String {
        context.debugDescription
    }

    /// `books/dune.json: published: expected a timestamp, found string "1965"`;
    /// every scalar a terminal would act on (in the file name, a map key, a
    /// value quoted by the DTO's own code) written visibly.
    public var description: String {
        let place = file ?? "record \(CanonicalJSON.asciiQuoted(recordID.rawValue))"
        let path = fieldPath
        return TerminalEscaping.escapeMessage(path.isEmpty ? "\(place): \(reason)" : "\(place): \(path): \(reason)")
    }

    private var context: DecodingError.Context {
        switch underlying {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context), .dataCorrupted(let context):
            return context
        @unknown default:
            return DecodingError.Context(codingPath: [], debugDescription: "\(underlying)")
        }
    }
}
