// One import for an app: `import BooksyncStore` brings the whole public library —
// the store, the Codable coders, record values, the collection facade, its
// reports and errors, and the transport seam. Everything else in these modules
// is `package`, visible to booksync's own targets only.
//
// The remote seam (`RemoteCollection`, the values it trades in, and the
// facade's methods that take one) is SPI: `@_spi(Remote) import BooksyncStore`
// brings it, for an app that plugs in a remote of its own or drives a
// `CollectionDirectory` directly. It may change in any release.
@_exported import BooksyncCodable
@_exported import BooksyncCore
@_spi(Remote) @_exported import BooksyncKit
@_exported import BooksyncURLSession
