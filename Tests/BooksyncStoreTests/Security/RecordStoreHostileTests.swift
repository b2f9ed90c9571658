import Foundation
import Testing
import BooksyncCore
@_spi(Remote) import BooksyncKit
@_spi(Remote) import BooksyncStore
import BooksyncTestSupport

/// A cloned collection attacks the store (<doc:Safety>): nothing from its file
/// names, ids, keys or values reaches a terminal raw through an error's
/// sentence, a half-done hand edit is never overwritten, and a link is never
/// removed in place of a record. Found by a hostile review of the store.
@Suite struct RecordStoreHostileTests {
    /// Escape sequences, a bell and a right-to-left override.
    static let hostile = "\u{1B}]0;pwned\u{07}\u{1B}[2J\u{202E}"

    static func isSafe(_ error: any Error) -> Bool {
        !TerminalEscaping.needsEscaping("\(error)")
    }

    /// A DTO whose genre is an enum: the standard library's own error quotes the raw value.
    struct Typed: Codable, Sendable {
        enum Genre: String, Codable { case fiction }
        var id: String
        var title: String
        var author: String
        var genre: Genre
        var counts: [String: Int]?
    }

    @Test func aHostileFileNameReachesNoTerminalThroughAll() async throws {
        let workspace = try StoreWorkspace()
        try workspace.write(Self.hostile + ".json", #"{"id": "x", "title": "T", "author": "A", "genre": "g"}"#)
        await #expect { _ = try await workspace.store().all() } throws: { Self.isSafe($0) && "\($0)".contains("\\x1b]0;pwned") }
    }

    @Test func hostileValuesKeysAndIdsReachNoTerminalThroughDecodingErrors() async throws {
        let workspace = try StoreWorkspace()
        let id = try RecordID(Self.hostile + "id")
        try workspace.write(id.fileName, #"{"id": "\#(Self.hostile.unicodeScalars.map { $0.value < 0x80 && $0.value >= 0x20 ? String($0) : String(format: "\\u%04x", $0.value) }.joined())id", "title": "T", "author": "A", "genre": "\u{202E}fiction"}"#)
        await #expect { _ = try await workspace.store(Typed.self).get(id.rawValue) } throws: { Self.isSafe($0) }
        try workspace.write("keys.json", #"{"id": "keys", "title": "T", "author": "A", "genre": "fiction", "counts": {"\u001b[2J\u202e": "x"}}"#)
        await #expect { _ = try await workspace.store(Typed.self).get("keys") } throws: { Self.isSafe($0) }
        await #expect { _ = try await workspace.store().get("a/" + Self.hostile) } throws: { Self.isSafe($0) }
        await #expect { try await workspace.store().save(ShelfBook.sample("a/" + Self.hostile)) } throws: { Self.isSafe($0) }
    }

    /// Keeping undeclared fields needs a file that says what they are: a file
    /// with a syntax error (a hand edit half done) is reported and left as it is.
    @Test func keepingFieldsOfAFileThatDoesNotParseWritesNothing() async throws {
        let workspace = try StoreWorkspace()
        let broken = #"{"id": "k", "title": "t", "author": "a", "genre": "g", "isbn": "123",,}"#
        try workspace.write("k.json", broken)
        await #expect { try await workspace.store().save(ShelfBook.sample("k"), keepingUndeclaredFields: true) } throws: { error in
            guard case RecordStoreError.invalidFile(let file, _) = error else { return false }
            return file.hasSuffix("/k.json")
        }
        #expect(workspace.bytes("k.json") == Array(broken.utf8), "the hand edit is untouched")
    }

    /// Two stores on one directory in one process (two view models) take
    /// turns instead of meeting the collection lock held by their own process:
    /// 40 saves split over them, started at once, all succeed.
    @Test func twoStoresOnOneDirectoryTakeTurns() async throws {
        let workspace = try StoreWorkspace()
        let first = workspace.store()
        // The same directory spelled another way: the turns follow the directory, not the string.
        let second = RecordStore<ShelfBook>(directory: workspace.root + "/./") { _ in ScriptedRemote() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for number in 0..<40 {
                let store = number % 2 == 0 ? first : second
                group.addTask { try await store.save(ShelfBook.sample("book-\(number)")) }
            }
            try await group.waitForAll()
        }
        #expect(try await first.all().count == 40)
    }

    /// `delete` of a record file that is a link reports it and removes nothing,
    /// as `get` and `save` refuse it.
    @Test func deleteOfALinkRemovesNothing() async throws {
        let workspace = try StoreWorkspace()
        let target = workspace.root + "/target.txt"
        try Data("kept".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: workspace.root + "/linked.json", withDestinationPath: target)
        await #expect { try await workspace.store().delete("linked") } throws: { "\($0)".contains("symbolic link") }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: workspace.root + "/linked.json") == target)
        #expect(try await workspace.store().delete("missing") == false)
    }
}
