// One import for an app: `import BooksyncStore` brings the whole public library —
// the store, the Codable coders, record values, the collection facade, its
// reports and errors, and the remote and transport seams. Everything else in
// these modules is `package`, visible to booksync's own targets only.
@_exported import BooksyncCodable
@_exported import BooksyncCore
@_exported import BooksyncKit
@_exported import BooksyncURLSession
