import BooksyncCore

/// How decoding errors name the value they found: its kind and, for scalars,
/// the value itself (`string "1965"`, `integer 300`). Strings are quoted in
/// plain ASCII and cut short, since a record file is untrusted input and the
/// message may reach a terminal.
enum FoundValue {
    static let maximumStringCharacters = 40

    static func describe(_ value: Value) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return "boolean \(flag)"
        case .integer(let number): return "integer \(number)"
        case .double(let number): return "double \(number.isFinite ? CanonicalJSON.formatDouble(number) : "\(number)")"
        case .string(let text):
            let shown = text.count > maximumStringCharacters ? String(text.prefix(maximumStringCharacters)) : text
            return "string \(CanonicalJSON.asciiQuoted(shown))\(shown.count < text.count ? "…" : "")"
        case .timestamp(let timestamp): return "timestamp \(timestamp.rfc3339)"
        case .bytes(let bytes): return "bytes (\(bytes.count))"
        case .reference(let path): return "reference \(CanonicalJSON.asciiQuoted(path))"
        case .geoPoint(let latitude, let longitude): return "geopoint (\(latitude), \(longitude))"
        case .array(let items): return "array of \(items.count)"
        case .map(let fields): return "map of \(fields.count)"
        }
    }
}
