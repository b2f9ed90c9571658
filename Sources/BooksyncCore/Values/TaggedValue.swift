/// The single-key `$tag` objects that carry Firestore types through JSON files.
///
/// An object with exactly one key that starts with `$` must be one of these;
/// anything else is an error, so a typo like `$timestmap` is caught instead of
/// being stored as a map.
package enum TaggedValue {
    /// Every tag a record file may use, as named in error messages.
    package static let tags = ["$timestamp", "$bytes", "$reference", "$geopoint", "$double"]

    /// Why a tagged object could not be decoded; the message names the tag.
    package struct DecodeError: Error, Sendable {
        /// The reason, as a sentence naming the tag.
        package let message: String
    }

    static func decode(tag: String, payload: Value) throws(DecodeError) -> Value {
        switch tag {
        case "$timestamp":
            guard case .string(let text) = payload else {
                throw DecodeError(message: "$timestamp needs a string like \"2024-05-01T12:00:00.000000Z\", found \(payload.kindName)")
            }
            do {
                return .timestamp(try Timestamp(rfc3339: text))
            } catch {
                throw DecodeError(message: "$timestamp: \(error.message)")
            }
        case "$bytes":
            guard case .string(let text) = payload, let bytes = Base64.decode(text) else {
                throw DecodeError(message: "$bytes needs a base64 string")
            }
            return .bytes(bytes)
        case "$reference":
            guard case .string(let text) = payload else {
                throw DecodeError(message: "$reference needs a document path string like \"authors/frank-herbert\"")
            }
            guard ReferencePath.isDocumentPath(text) else {
                throw DecodeError(message: "$reference '\(TerminalEscaping.abbreviate(text))' is not a document path (collection/document[/collection/document…])")
            }
            return .reference(text)
        case "$geopoint":
            guard case .map(let m) = payload, m.count == 2,
                  let lat = m["latitude"].flatMap(number), let lon = m["longitude"].flatMap(number)
            else {
                throw DecodeError(message: "$geopoint needs {\"latitude\": number, \"longitude\": number}")
            }
            guard (-90...90).contains(lat), (-180...180).contains(lon) else {
                throw DecodeError(message: "$geopoint latitude must be within ±90 and longitude within ±180")
            }
            return .geoPoint(latitude: lat, longitude: lon)
        case "$double":
            switch payload {
            case .string("NaN"): return .double(.nan)
            case .string("Infinity"): return .double(.infinity)
            case .string("-Infinity"): return .double(-.infinity)
            default: throw DecodeError(message: "$double must be \"NaN\", \"Infinity\" or \"-Infinity\"")
            }
        default:
            throw DecodeError(message: "unknown tag '\(tag)'; an object with a single '$' key must be one of \(tags.joined(separator: ", "))")
        }
    }

    private static func number(_ v: Value) -> Double? {
        switch v {
        case .double(let d): d
        case .integer(let i): Double(i)
        default: nil
        }
    }
}

/// Firestore document references as written in record files.
package enum ReferencePath {
    /// True if `text` names a document, either below the documents root
    /// (`authors/frank-herbert`: an even, non-zero number of non-empty segments)
    /// or as a full resource name (`projects/p/databases/d/documents/authors/x`).
    package static func isDocumentPath(_ text: String) -> Bool {
        var segments = text.split(separator: "/", omittingEmptySubsequences: false)
        if isFullName(text) { segments.removeFirst(5) }
        return !segments.isEmpty && segments.count % 2 == 0 && segments.allSatisfy { !$0.isEmpty }
    }

    /// `projects/P/databases/D/documents/…`
    package static func isFullName(_ text: String) -> Bool {
        let segments = text.split(separator: "/", maxSplits: 5, omittingEmptySubsequences: false)
        return segments.count > 5 && segments[0] == "projects" && segments[2] == "databases" && segments[4] == "documents"
    }

    /// Shortens a full resource name under `documentsRoot`
    /// (`projects/P/databases/D/documents`); other references are kept as they are,
    /// because shortening a reference to another database would change its meaning.
    package static func shorten(_ path: String, documentsRoot: String) -> String {
        let prefix = documentsRoot + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }
}
