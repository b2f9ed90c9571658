import Foundation
import BooksyncStore

/// The usual Firebase `BookRepository`, on booksync. The Firebase version read
/// `db.collection("books").getDocuments()` into a local store on every sync and
/// wrote new books with `setData(from:)`: a full overwrite each way, no change
/// detection, no conflicts. Here the local store is a directory of JSON files
/// (one per book, editable by hand, committable to git) and a sync moves only
/// what changed, merging changes to different fields of the same book.
struct BookRepository: Sendable {
    let store: RecordStore<BookDTO>

    /// What a book file holds: the Book schema's title, author and genre,
    /// and the fields the app knows, each optional. `BookDTO.swift` is what
    /// `booksync schema --swift BookDTO` prints for it (`scripts/app-compat.py`
    /// checks that), and editors get the same fields from the JSON Schema.
    static let schema = RecordSchema(
        requiredFields: RecordSchema.books.requiredFields,
        optionalFields: [
            FieldRequirement(name: "published", type: .timestamp),
            FieldRequirement(name: "rating", type: .double),
            FieldRequirement(name: "pages", type: .integer),
            FieldRequirement(name: "tags", type: .array, itemType: .string),
            FieldRequirement(name: "authorRef", type: .reference, description: "The author's document: authors/ID."),
            FieldRequirement(name: "firstPrinting", type: .map, mapFields: DeclaredFields(
                required: [FieldRequirement(name: "copies", type: .integer)],
                optional: [FieldRequirement(name: "publisher", type: .reference)])),
            FieldRequirement(name: "cover", type: .bytes),
            FieldRequirement(name: "setting", type: .geopoint),
            FieldRequirement(name: "subtitle", type: .string),
        ],
        description: "A book on the shelf: one JSON file per book, one Firestore document.")

    /// The shelf in `directory`, synced with the `books` collection of `project`;
    /// a new directory is made a collection directory first (`booksync init`).
    init(directory: String, project: String) throws {
        if !FileManager.default.fileExists(atPath: directory + "/.booksync") {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let config = CollectionConfig(remote: FirestoreTarget(project: project, collectionPath: "books"), schema: Self.schema)
            _ = try CollectionDirectory.initialize(at: directory, config: config)
        }
        store = .firestore(directory: directory)
    }

    /// Pull, then push: remote changes come in (merged field by field with
    /// local ones), then local changes go out, each guarded by its revision.
    func syncBooks() async throws -> (pulled: SyncReport, pushed: SyncReport) {
        let pulled = try await store.pull()
        let pushed = try await store.push()
        return (pulled, pushed)
    }

    /// A new book: its file is written now, the document on the next sync.
    @discardableResult
    func addBook(_ book: Book) async throws -> String {
        try await store.save(BookDTO(book))
        return try await store.file(for: book.id)
    }

    /// Changes a book, keeping fields this app does not know (someone's `isbn`).
    func updateBook(_ book: Book) async throws {
        try await store.save(BookDTO(book), keepingUndeclaredFields: true)
    }

    /// Every book on the shelf, read from the files (no network).
    func fetchBooks() async throws -> [Book] {
        try await store.all().map(Book.init)
    }

    /// One book, or nil.
    func fetchBook(_ id: String) async throws -> Book? {
        try await store.get(id).map(Book.init)
    }
}
