/// Swift's `EncodingError` as a clause for a sentence: where in the DTO
/// (`firstPrinting.publisher`) and what went wrong. Its own `description` is a
/// dump of enum cases and contexts, not text for a user. (Decoding errors come
/// as `RecordDecodingError`, which says the same for the decoder's side.)
enum CodingErrorText {
    /// `at setting: geopoint latitude must be within ±90…`, or the error's own description.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? EncodingError else { return String(describing: error) }
        switch error {
        case .invalidValue(_, let context):
            return context.codingPath.isEmpty ? context.debugDescription : "at \(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return String(describing: error)
        }
    }

    /// The path as dotted field names and `[index]`s.
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }
}
