import Foundation
import BooksyncStore

/// The app's model: what the screens show and edit.
struct Book: Hashable, Sendable {
    var id: String
    var title: String
    var author: String
    var genre: String
    var published: Date?
    var rating: Double?
    var pages: Int?
    var tags: [String] = []
    var authorID: String?
    var publisher: String?
    var firstPrintingCopies: Int?
    var cover: Data?
    var setting: GeoPoint?
    var subtitle: String?
}

/// What is stored: one record file per book locally, one Firestore document
/// remotely. The Firebase version of this app had the same struct and used
/// `document.data(as: BookDTO.self)` and `setData(from:)`.
struct BookDTO: Codable, Sendable {
    /// The record id, also the file name (`dune` ↔ dune.json) and the document id.
    var id: String
    var title: String
    var author: String
    var genre: String
    var published: Date?                // {"$timestamp": "1965-08-01T00:00:00.000000Z"}
    var rating: Double?
    var pages: Int?
    var tags: [String]?
    var authorRef: DocumentReference?   // {"$reference": "authors/frank-herbert"}
    var firstPrinting: Printing?        // a nested map
    var cover: Data?                    // {"$bytes": "iVBORw0KGgo="}
    var setting: GeoPoint?              // {"$geopoint": {"latitude": …, "longitude": …}}
    /// Written as `null` when there is none (the other optionals are left out).
    var subtitle: String?

    struct Printing: Codable, Sendable {
        var copies: Int
        var publisher: DocumentReference?
    }

    enum CodingKeys: String, CodingKey {
        case id, title, author, genre, published, rating, pages, tags, authorRef, firstPrinting, cover, setting, subtitle
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(author, forKey: .author)
        try container.encode(genre, forKey: .genre)
        try container.encodeIfPresent(published, forKey: .published)
        try container.encodeIfPresent(rating, forKey: .rating)
        try container.encodeIfPresent(pages, forKey: .pages)
        try container.encodeIfPresent(tags, forKey: .tags)
        try container.encodeIfPresent(authorRef, forKey: .authorRef)
        try container.encodeIfPresent(firstPrinting, forKey: .firstPrinting)
        try container.encodeIfPresent(cover, forKey: .cover)
        try container.encodeIfPresent(setting, forKey: .setting)
        try container.encode(subtitle, forKey: .subtitle)  // nil → null
    }
}

extension BookDTO {
    init(_ book: Book) {
        self.init(id: book.id, title: book.title, author: book.author, genre: book.genre, published: book.published,
                  rating: book.rating, pages: book.pages, tags: book.tags.isEmpty ? nil : book.tags,
                  authorRef: book.authorID.map { DocumentReference(path: "authors/" + $0) },
                  firstPrinting: book.firstPrintingCopies.map { Printing(copies: $0, publisher: book.publisher.map { DocumentReference(path: "publishers/" + $0) }) },
                  cover: book.cover, setting: book.setting, subtitle: book.subtitle)
    }
}

extension Book {
    init(_ dto: BookDTO) {
        self.init(id: dto.id, title: dto.title, author: dto.author, genre: dto.genre, published: dto.published,
                  rating: dto.rating, pages: dto.pages, tags: dto.tags ?? [],
                  authorID: dto.authorRef.map { String($0.path.split(separator: "/").last ?? "") },
                  publisher: dto.firstPrinting?.publisher.map { String($0.path.split(separator: "/").last ?? "") },
                  firstPrintingCopies: dto.firstPrinting?.copies, cover: dto.cover, setting: dto.setting, subtitle: dto.subtitle)
    }
}
