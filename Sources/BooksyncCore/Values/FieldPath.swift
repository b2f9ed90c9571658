/// The path of a field inside a record: the top-level field name, then one map
/// key per level of nesting (`stats` → `rating`). Conflicts and diffs name
/// fields by path because maps merge key by key at any depth (the manual's ThreeWaySync article).
///
/// Shown in Firestore's field path notation (`description`), so users meet the
/// same spelling as in an update mask or a query: segments joined by `.`, a
/// segment that is not a simple name quoted with backticks. Quoting keeps
/// `stats.rating` (two levels) apart from a single field named `stats.rating`
/// (shown with backticks around it).
public struct FieldPath: Sendable, Hashable, CustomStringConvertible {
    /// The field name and the map keys below it, outermost first; never empty.
    public let segments: [String]

    /// The path of the given names, outermost first.
    /// - Parameter segments: At least one name (a record has no path to itself).
    public init(_ segments: [String]) {
        precondition(!segments.isEmpty, "a field path names at least one field")
        self.segments = segments
    }

    /// The path of a top-level field.
    public init(field name: String) {
        segments = [name]
    }

    /// This path with one more map key below it.
    package func appending(_ key: String) -> FieldPath {
        FieldPath(segments + [key])
    }

    /// The top-level field the path starts at.
    public var field: String { segments[0] }

    /// Firestore's notation: segments joined by `.`, each one that is not a
    /// simple name (`[A-Za-z_][A-Za-z0-9_]*`) written between backticks with
    /// `\` and the backtick escaped by a backslash, as Google's client libraries
    /// render field paths (`render_field_path` in google-cloud-firestore). So
    /// a name with a dot, a space, a backtick, non-ASCII letters or nothing at
    /// all can never be mistaken for a deeper path. The text may still hold
    /// any scalar of a name: show it through the terminal's escaping.
    public var description: String {
        segments.map(Self.quoted).joined(separator: ".")
    }

    /// One segment as Firestore writes it in a field path.
    static func quoted(_ segment: String) -> String {
        if isSimple(segment) { return segment }
        var text = "`"
        for scalar in segment.unicodeScalars {
            if scalar == "\\" || scalar == "`" { text.unicodeScalars.append("\\") }
            text.unicodeScalars.append(scalar)
        }
        return text + "`"
    }

    /// A simple field name: ASCII letters, digits and `_`, not starting with a digit.
    static func isSimple(_ segment: String) -> Bool {
        guard let first = segment.utf8.first, !(0x30...0x39).contains(first) else { return false }
        return segment.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F
        }
    }

    /// Orders paths segment by segment, each by its UTF-8 bytes (a path sorts
    /// before the paths below it): the order conflicts and diffs are listed in.
    package static func utf8Less(_ a: FieldPath, _ b: FieldPath) -> Bool {
        for (x, y) in zip(a.segments, b.segments) where !x.utf8.elementsEqual(y.utf8) {
            return CanonicalJSON.utf8Less(x, y)
        }
        return a.segments.count < b.segments.count
    }

    /// The value at this path in `fields`; nil when some level is absent or
    /// is not a map.
    package func value(in fields: Fields) -> Value? {
        var current: Value? = fields[segments[0]]
        for key in segments.dropFirst() {
            guard case .map(let map)? = current else { return nil }
            current = map[key]
        }
        return current
    }

    /// Sets (or with nil removes) the value at this path in `fields`. A level
    /// above it that is absent or not a map becomes a map.
    package func set(_ value: Value?, in fields: inout Fields) {
        Self.set(value, at: segments[...], in: &fields)
    }

    private static func set(_ value: Value?, at path: ArraySlice<String>, in fields: inout Fields) {
        let key = path[path.startIndex]
        if path.count == 1 {
            fields[key] = value
            return
        }
        var inner: Fields
        if case .map(let map)? = fields[key] { inner = map } else { inner = [:] }
        set(value, at: path.dropFirst(), in: &inner)
        fields[key] = .map(inner)
    }
}
