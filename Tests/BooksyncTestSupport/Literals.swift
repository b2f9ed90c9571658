import BooksyncCore
@_spi(Remote) import BooksyncKit

/// Content hashes written as literals in tests (`BaseEntry(hash: "sha256:00", …)`).
/// Only tests get this: the library builds hashes from content or state files.
extension ContentHash: ExpressibleByStringLiteral {
    public init(stringLiteral text: String) { self.init(text: text) }
}

/// Stat-cache stamps written as literals in tests (`"1:2:3:4"`).
extension FileStamp: ExpressibleByStringLiteral {
    public init(stringLiteral text: String) { self.init(text: text) }
}
