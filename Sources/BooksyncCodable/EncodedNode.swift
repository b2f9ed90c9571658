import BooksyncCore

/// What one encoding step produced: a finished value, or a container that
/// containers handed out earlier may still add to (so they are classes), or an
/// encoder from `superEncoder()` whose value is read when encoding ends.
enum EncodedNode {
    case value(Value)
    case map(EncodedMap)
    case array(EncodedArray)
    case encoder(RecordEncoding)

    /// The finished value tree.
    /// - Throws: `EncodingError.invalidValue` for a map a record file could not
    ///   hold (one key starting with `$`).
    func resolved() throws -> Value {
        switch self {
        case .value(let value): return value
        case .map(let map): return try map.resolved()
        case .array(let array): return .array(try array.items.map { try $0.resolved() })
        case .encoder(let encoder): return try (encoder.node ?? .map(EncodedMap(codingPath: encoder.codingPath))).resolved()
        }
    }
}

/// A keyed container's storage.
final class EncodedMap {
    /// Where the map is, for the error about `$` keys.
    let codingPath: [any CodingKey]
    var entries: [String: EncodedNode] = [:]

    init(codingPath: [any CodingKey]) {
        self.codingPath = codingPath
    }

    /// The map as a nested value. A map whose only key starts with `$` is how
    /// record files spell tagged values (`{"$timestamp": …}`): written as a
    /// map, it would read back as another type or as an error, so it cannot be
    /// encoded. (A record's top level is never read as a tag.)
    func resolved() throws -> Value {
        if entries.count == 1, let key = entries.keys.first, key.hasPrefix("$") {
            throw EncodingError.invalidValue(key, EncodingError.Context(
                codingPath: codingPath,
                debugDescription: "a map whose only key is '\(key)' cannot be stored: record files use single '$' keys for "
                    + "tagged values like {\"$timestamp\": …}; rename the key or add another"))
        }
        return .map(try resolvedFields())
    }

    /// The map as the fields of a record.
    func resolvedFields() throws -> Fields {
        try entries.mapValues { try $0.resolved() }
    }
}

/// An unkeyed container's storage.
final class EncodedArray {
    var items: [EncodedNode] = []
}
