/// The content hash of a record: `sha256:` and the SHA-256 of its canonical
/// bytes in lowercase hex, as the manifest, the stat cache and `sha256sum`
/// of a canonical file spell it (the manual's CollectionFormat article).
///
/// A named type, not a `String`, so a hash cannot be passed where a revision,
/// a stamp or an id is meant. It keeps the text as read: a manifest written
/// by hand may hold another spelling, which then simply matches no content.
public struct ContentHash: Hashable, Sendable, CustomStringConvertible {
    /// The hash as written.
    public let text: String

    /// A hash as written in a state file.
    package init(text: String) {
        self.text = text
    }

    /// `sha256:<hex>`.
    public var description: String { text }
}
