/// Swift's `EncodingError` and `DecodingError` as a clause for a sentence:
/// where in the DTO (`firstPrinting.copies`) and what went wrong. Their own
/// `description` is a dump of enum cases and contexts, not text for a user.
enum CodingErrorText {
    /// `at firstPrinting.copies: expected Int, found a string` or the error's own description.
    static func reason(_ error: any Error) -> String {
        switch error {
        case let error as DecodingError:
            switch error {
            case .typeMismatch(let type, let context):
                return located(context, "expected \(type): \(context.debugDescription)")
            case .valueNotFound(let type, let context):
                return located(context, "no value of type \(type): \(context.debugDescription)")
            case .keyNotFound(let key, let context):
                return located(context, "missing field '\(key.stringValue)'")
            case .dataCorrupted(let context):
                return located(context, context.debugDescription)
            @unknown default:
                return String(describing: error)
            }
        case let error as EncodingError:
            switch error {
            case .invalidValue(_, let context):
                return located(context, context.debugDescription)
            @unknown default:
                return String(describing: error)
            }
        default:
            return String(describing: error)
        }
    }

    /// The path as dotted field names and `[index]`s, `id` when empty.
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue, key.stringValue == String(index) || key.stringValue.hasPrefix("Index ") {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }

    private static func located(_ context: DecodingError.Context, _ message: String) -> String {
        context.codingPath.isEmpty ? message : "at \(path(context.codingPath)): \(message)"
    }

    private static func located(_ context: EncodingError.Context, _ message: String) -> String {
        context.codingPath.isEmpty ? message : "at \(path(context.codingPath)): \(message)"
    }
}
