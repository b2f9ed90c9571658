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

extension BookDTO {
    init(_ book: Book) {
        self.init(id: book.id, title: book.title, author: book.author, genre: book.genre, published: book.published,
                  rating: book.rating, pages: book.pages, tags: book.tags.isEmpty ? nil : book.tags,
                  authorRef: book.authorID.map { DocumentReference(path: "authors/" + $0) },
                  firstPrinting: book.firstPrintingCopies.map { BookDTO.FirstPrinting(copies: $0, publisher: book.publisher.map { DocumentReference(path: "publishers/" + $0) }) },
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
