/// A JSON value whose objects keep every member in document order, with keys
/// compared by their UTF-8 bytes, never by Unicode canonical equivalence.
/// Scalars are `Value`s; objects of one key starting with `$` stay objects.
package indirect enum JSONTree: Sendable, Equatable {
    case object([Member])
    case array([JSONTree])
    case scalar(Value)

    /// One member of an object. The keys of one object differ byte for byte
    /// (a repeated key is a syntax error), yet two may be equal as Swift strings.
    package struct Member: Sendable, Equatable {
        /// The member's name, compared byte for byte.
        package let key: String
        /// The member's value.
        package let value: JSONTree

        package static func == (lhs: Member, rhs: Member) -> Bool { lhs.key.utf8.elementsEqual(rhs.key.utf8) && lhs.value == rhs.value }
    }

    /// A string that is equal to another only when their UTF-8 bytes are.
    struct ByteKey: Hashable {
        let text: String
        init(_ text: String) { self.text = text }
        static func == (a: ByteKey, b: ByteKey) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }
        func hash(into hasher: inout Hasher) {
            var text = self.text
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// The value of the first member named exactly `key` (byte for byte).
    package subscript(key: String) -> JSONTree? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key.utf8.elementsEqual(key.utf8) }?.value
    }
}

/// Two keys of one object that are different bytes but equal Swift strings
/// (equal under Unicode canonical equivalence: `"caf\u00E9"` and
/// `"cafe\u0301"`), found in a wire answer.
///
/// `Fields` is `[String: Value]`, so such an object cannot be a map: a record
/// cannot hold two field names equal under canonical equivalence (a known
/// limit). The wire parser (`decodeTags: false`) puts a marker where the
/// object was, so the Firestore codec makes that one document invalid and
/// the rest of the answer is still read. The marker is a `.bytes` value,
/// which a wire parse cannot otherwise produce (only tags make bytes), so
/// no server text can forge it.
package struct EquivalentKeys: Sendable, Equatable {
    /// The key that came first in the object.
    package let first: String
    /// The later key, equal to `first` as a Swift string but not in bytes.
    package let second: String

    /// The pair as found, in object order.
    package init(first: String, second: String) {
        self.first = first
        self.second = second
    }

    /// 0xFF never occurs in UTF-8, so it separates the two keys unambiguously.
    var marker: Value { .bytes(Array(first.utf8) + [0xFF] + Array(second.utf8)) }

    /// The keys a wire parse's marker stands for; nil for any other value.
    package init?(marker: Value) {
        guard case .bytes(let bytes) = marker, let separator = bytes.firstIndex(of: 0xFF) else { return nil }
        self.first = String(decoding: bytes[..<separator], as: UTF8.self)
        self.second = String(decoding: bytes[(separator + 1)...], as: UTF8.self)
    }

    /// `"caf\u00E9" and "cafe\u0301"`: both names, ASCII-escaped, so the
    /// difference shows and no control character reaches a terminal.
    package var description: String { CanonicalJSON.asciiQuoted(first) + " and " + CanonicalJSON.asciiQuoted(second) }
}
