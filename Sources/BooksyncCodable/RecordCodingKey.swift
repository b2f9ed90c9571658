/// The coding keys the encoder and decoder make up themselves: array indices,
/// `super`, and the keys of maps whose type has none of its own.
struct RecordCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }

    init(index: Int) { self.init(intValue: index) }

    /// The key `superEncoder()` and `superDecoder()` use, as JSONEncoder does.
    static let `super` = RecordCodingKey(stringValue: "super")
}

/// A coding path as users read it in messages: keys joined by `.`, array
/// indices as `[2]`, e.g. `chapters[2].title` (the form Firestore-limit
/// messages use for field paths too).
enum DottedPath {
    static func of(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if key is RecordCodingKey, let index = key.intValue {
                text += "[\(index)]"
            } else {
                if !text.isEmpty { text += "." }
                text += key.stringValue
            }
        }
        return text
    }
}
