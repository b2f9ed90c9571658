import Foundation
import BooksyncStore

// The bookshelf app on two devices, scripted: a laptop whose shelf directory an
// editor also edits by hand, and a phone. Run against the Firestore emulator:
//   FIRESTORE_EMULATOR_HOST=127.0.0.1:8080 bookshelf-example PROJECT LAPTOP-DIR PHONE-DIR
// The books collection of PROJECT should hold the demo catalogue (scripts/demo
// pushes fixtures/demo/books); each directory is made a collection if it is not one.

let arguments = CommandLine.arguments
guard arguments.count == 4, ProcessInfo.processInfo.environment["FIRESTORE_EMULATOR_HOST"]?.isEmpty == false else {
    print("usage: FIRESTORE_EMULATOR_HOST=host:port bookshelf-example PROJECT LAPTOP-DIR PHONE-DIR")
    exit(2)
}
let (project, laptopDirectory, phoneDirectory) = (arguments[1], arguments[2], arguments[3])

/// One line of output; ids and titles come from the server and the files, so
/// anything a terminal would act on (C0 and C1 controls, DEL, bidi overrides
/// and isolates) is written visibly, as `\u{1b}`. An app with a UI has no
/// terminal to protect; one that prints does this itself.
func say(_ line: String) {
    var shown = ""
    for scalar in line.unicodeScalars {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
            shown += "\\u{\(String(scalar.value, radix: 16))}"
        default:
            shown.unicodeScalars.append(scalar)
        }
    }
    print(shown)
}

func day(_ date: Date?) -> String {
    guard let date else { return "unknown" }
    return String(ISO8601DateFormatter().string(from: date).prefix(10))
}

func summary(_ sync: (pulled: SyncReport, pushed: SyncReport)) -> String {
    func ids(_ report: SyncReport) -> String {
        report.events.isEmpty ? "nothing" : report.events.map { "\($0.id)" + note($0.kind) }.joined(separator: ", ")
    }
    func note(_ kind: SyncEventKind) -> String {
        switch kind {
        case .pulled(.merge): " (merged)"
        case .pulled, .pushed: ""
        case .conflict: " (conflict, left alone)"
        default: " (\(kind))"
        }
    }
    let pulled = sync.pulled.events.count > 5 ? "\(sync.pulled.events.count) books" : ids(sync.pulled)
    return "pulled \(pulled); pushed \(ids(sync.pushed))"
}

do {
    let laptop = try BookRepository(directory: laptopDirectory, project: project)
    let phone = try BookRepository(directory: phoneDirectory, project: project)

    say("laptop: syncBooks() → \(summary(try await laptop.syncBooks()))")
    say("phone: syncBooks() → \(summary(try await phone.syncBooks()))")
    let shelf = try await laptop.fetchBooks()
    if let dune = shelf.first(where: { $0.id == "dune" }) {
        say("laptop: fetchBooks() → \(shelf.count) books; \(dune.title) by \(dune.author), published \(day(dune.published)), "
            + "rated \(dune.rating.map { "\($0)" } ?? "-"), \(dune.pages.map { "\($0)" } ?? "?") pages")
    }

    // The app adds a book: a file now, a document on the next sync.
    var empire = Book(id: "a-memory-called-empire", title: "A Memory Called Empire", author: "Arkady Martine", genre: "science fiction")
    empire.published = Date(timeIntervalSince1970: 1_553_558_400.123456)  // 2019-03-26, with microseconds
    empire.rating = 4.1
    empire.pages = 462
    empire.tags = ["empire", "memory", "poetry"]
    empire.authorID = "arkady-martine"
    empire.publisher = "tor"
    empire.firstPrintingCopies = 15_000
    empire.cover = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF])
    empire.setting = GeoPoint(latitude: 41.0082, longitude: 28.9784)
    let file = try await laptop.addBook(empire)
    say("laptop: addBook(\"\(empire.title)\") → wrote \(URL(fileURLWithPath: file).lastPathComponent)")

    // Meanwhile an editor opens dune.json on the laptop and changes the rating by hand.
    let dunePath = laptopDirectory + "/dune.json"
    let original = try String(contentsOfFile: dunePath, encoding: .utf8)
    let edited = original.split(separator: "\n", omittingEmptySubsequences: false)
        .map { $0.hasPrefix("  \"rating\": ") ? "  \"rating\": 4.75," : String($0) }.joined(separator: "\n")
    try edited.write(toFile: dunePath, atomically: true, encoding: .utf8)
    say("editor: set \"rating\": 4.75 in dune.json by hand")

    // The laptop app still holds the Dune it fetched before that edit; it adds a tag and
    // saves. The store merges: the editor's rating stays, as a pull would keep it.
    if var dune = shelf.first(where: { $0.id == "dune" }) {
        dune.tags.append("classic")
        try await laptop.updateBook(dune)
        if let saved = try await laptop.fetchBook("dune") {
            say("laptop: updateBook(dune, tags + \"classic\") from the copy fetched before the edit → rated "
                + "\(saved.rating.map { "\($0)" } ?? "-") (the editor's, kept), tags \(saved.tags.joined(separator: ", "))")
        }
    }

    // …and on the phone, the app changes the page count of the same book and syncs.
    if var dune = try await phone.fetchBook("dune") {
        dune.pages = 900
        try await phone.updateBook(dune)
        say("phone: updateBook(dune, pages: 900), syncBooks() → \(summary(try await phone.syncBooks()))")
    }

    // The laptop syncs: the phone's change merges with the editor's, the new book goes out.
    say("laptop: syncBooks() → \(summary(try await laptop.syncBooks()))")
    if let dune = try await laptop.fetchBook("dune") {
        say("laptop: dune now rated \(dune.rating.map { "\($0)" } ?? "-") (the editor's) with \(dune.pages.map { "\($0)" } ?? "?") pages (the phone's)"
            + " and the tag \(dune.tags.last ?? "-") (the app's)")
    }
    say("phone: syncBooks() → \(summary(try await phone.syncBooks()))")
    if let added = try await phone.fetchBook(empire.id) {
        say("phone: sees \"\(added.title)\" by \(added.author), published \(day(added.published)), set at \(added.setting.map { "\($0.latitude), \($0.longitude)" } ?? "?")")
    }
    let laptopClean = try await laptop.store.status().isClean
    let phoneClean = try await phone.store.status().isClean
    let clean = laptopClean && phoneClean
    say("status on both devices: \(clean ? "clean, in sync" : "NOT CLEAN")")
    exit(clean ? 0 : 1)
} catch {
    say("bookshelf: \(error)")
    exit(1)
}
