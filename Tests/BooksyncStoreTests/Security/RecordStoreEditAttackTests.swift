import Foundation
import Testing
import BooksyncCodable
import BooksyncCore
@_spi(Remote) import BooksyncKit
@_spi(Remote) import BooksyncStore
import BooksyncTestSupport

/// A hostile review of the merge of edits made since the app's read: each
/// test tries to make a save or delete lose an edit, blame the wrong party, or
/// put raw text on a terminal. Those that found a fault are marked as such.
@Suite struct RecordStoreEditAttackTests {
    static let dune = #"{"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "science fiction", "pages": 412}"#

    /// A pull that brings a remote change between the app's `get` and its
    /// `save` is merged like a hand edit: the remote's `pages` and the app's
    /// `rating` both stay, and the next push sends the app's change on top.
    @Test func aPullBetweenGetAndSaveIsMergedNotOverwritten() async throws {
        let workspace = try StoreWorkspace()
        let first = try workspace.document("dune", Self.dune, revision: "r1")
        workspace.remote.documents.withLock { $0 = [first.id: first] }
        let store = workspace.store()
        _ = try await store.pull()
        var book = try #require(try await store.get("dune"))
        let changed = Self.dune.replacingOccurrences(of: "412", with: "896")
        let update = try workspace.document("dune", changed, revision: "r2")
        workspace.remote.documents.withLock { $0 = [update.id: update] }
        _ = try await store.pull()
        book.rating = 4.5
        try await store.save(book)
        let written = try workspace.collection.rules.parse(try #require(workspace.bytes("dune.json"))).get()
        #expect(written["pages"] == .integer(896) && written["rating"] == .double(4.5))
        #expect(try await store.get("dune") == book.with { $0.pages = 896 })
    }

    /// Found by the review: `delete` compared bytes, so an editor that only
    /// reformatted the file (`booksync fmt` of a hand-written file, another
    /// indentation) made it refuse with "edited since the store read", though
    /// no field changed. An edit is a change of fields, as for the engine.
    @Test func aReformatSinceTheReadIsNoEditForDelete() async throws {
        let workspace = try StoreWorkspace()
        try workspace.write("dune.json", Self.dune)  // hand-written, not canonical
        let store = workspace.store()
        _ = try #require(try await store.get("dune"))
        let canonical = workspace.collection.rules.canonicalBytes(try workspace.collection.rules.parse(Array(Self.dune.utf8)).get())
        try Data(canonical).write(to: URL(fileURLWithPath: workspace.root + "/dune.json"))
        #expect(try await store.delete("dune"))
        #expect(workspace.bytes("dune.json") == nil)
    }

    /// A reformat that also changes a field is still an edit the delete keeps.
    @Test func aReformatThatChangesAFieldStillStopsDelete() async throws {
        let workspace = try StoreWorkspace()
        try workspace.write("dune.json", Self.dune)
        let store = workspace.store()
        _ = try #require(try await store.get("dune"))
        let edited = Self.dune.replacingOccurrences(of: ", ", with: ",\n  ").replacingOccurrences(of: "412", with: "413")
        try workspace.write("dune.json", edited)
        await #expect { try await store.delete("dune") } throws: { error in
            guard case RecordStoreError.editedSinceRead("dune", _, []) = error else { return false }
            return true
        }
        #expect(workspace.bytes("dune.json") == Array(edited.utf8))
    }

    /// An editor's change since the read that leaves the file an invalid
    /// record: the sentence names the file and its problem, never blames the save.
    struct BrokenEdit: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        /// Words the file's own problem is named with.
        let problem: String
        var testDescription: String { name }
    }

    static let brokenEdits: [BrokenEdit] = [
        BrokenEdit(name: "a required field removed",
                   text: #"{"id": "dune", "author": "Frank Herbert", "genre": "science fiction", "pages": 412}"#, problem: "title"),
        BrokenEdit(name: "the id changed",
                   text: #"{"id": "other", "title": "Dune", "author": "Frank Herbert", "genre": "science fiction"}"#, problem: "id"),
        BrokenEdit(name: "a syntax error", text: #"{"id": "dune", "title": "Dune",,}"#, problem: "1:"),
    ]

    /// Found by the review (the first two rows): the merged record inherited
    /// the editor's mistake and the save was `refused` as if the app's DTO
    /// lacked a title. Now the file is named as the invalid one, as `get` names it.
    @Test(arguments: brokenEdits)
    func aFileTheEditorLeftInvalidIsNamedNotBlamedOnTheSave(edit: BrokenEdit) async throws {
        let workspace = try StoreWorkspace()
        try workspace.write("dune.json", Self.dune)
        let store = workspace.store()
        var book = try #require(try await store.get("dune"))
        try workspace.write("dune.json", edit.text)
        book.rating = 4.5
        await #expect { try await store.save(book) } throws: { error in
            guard case RecordStoreError.invalidFile(let file, let problems) = error else { return false }
            return file.hasSuffix("/dune.json") && problems.contains { $0.description.contains(edit.problem) }
                && "\(error)".contains("is not a valid record")
        }
        #expect(workspace.bytes("dune.json") == Array(edit.text.utf8), "the editor's file is left as it was")
    }

    /// Found by the review: after `get` found no record, an editor created it
    /// with a field the DTO does not declare; a save keeping undeclared fields
    /// threw `editedSinceRead` naming `isbn` "as this save does", though the
    /// save asked to keep it. It keeps the creator's undeclared fields; the
    /// declared ones still conflict where they differ.
    @Test func keepingUndeclaredFieldsOfARecordCreatedSinceTheAppFoundNone() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store(Untagged.self)
        #expect(try await store.get("dune") == nil)
        try workspace.write("dune.json", #"{"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "sf", "isbn": "978"}"#)
        try await store.save(Untagged(title: "Dune", author: "Frank Herbert", genre: "sf"), id: "dune", keepingUndeclaredFields: true)
        let onDisk = try workspace.collection.rules.parse(try #require(workspace.bytes("dune.json"))).get()
        #expect(onDisk["isbn"] == .string("978") && onDisk["genre"] == .string("sf"))

        try FileManager.default.removeItem(atPath: workspace.root + "/dune.json")
        #expect(try await store.get("dune") == nil)
        try workspace.write("dune.json", #"{"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "sf", "isbn": "978"}"#)
        await #expect { try await store.save(Untagged(title: "Dune", author: "F. Herbert", genre: "sf"), id: "dune", keepingUndeclaredFields: true) } throws: { error in
            guard case RecordStoreError.editedSinceRead("dune", _, let paths) = error else { return false }
            return paths == ["author"]
        }
    }

    /// A DTO without an id (`save(_:id:)`) merges the same way: the editor's
    /// undeclared field added since the read stays through a whole-record save.
    @Test func aDTOWithoutIDMergesTheEditSinceTheRead() async throws {
        let workspace = try StoreWorkspace()
        try workspace.write("dune.json", #"{"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "sf"}"#)
        let store = workspace.store(Untagged.self)
        var book = try #require(try await store.get("dune"))
        try workspace.write("dune.json", #"{"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "sf", "isbn": "978"}"#)
        book.genre = "science fiction"
        try await store.save(book, id: "dune")
        let written = try workspace.collection.rules.parse(try #require(workspace.bytes("dune.json"))).get()
        #expect(written["isbn"] == .string("978") && written["genre"] == .string("science fiction"))
    }

    /// Two stores on one directory each merge against their own read: the
    /// second store's save keeps the first one's change of another field and
    /// names the field both changed.
    @Test func twoStoresEachMergeAgainstTheirOwnRead() async throws {
        let workspace = try StoreWorkspace()
        try workspace.write("dune.json", Self.dune)
        let (first, second) = (workspace.store(), workspace.store())
        var a = try #require(try await first.get("dune")), b = try #require(try await second.get("dune"))
        a.pages = 900
        try await first.save(a)
        b.rating = 4.5
        try await second.save(b)
        let both = try #require(try await first.get("dune"))
        #expect(both.pages == 900 && both.rating == 4.5)
        b.pages = 100
        await #expect { try await second.save(b) } throws: { error in
            guard case RecordStoreError.editedSinceRead("dune", _, let paths) = error else { return false }
            return paths == ["pages"]
        }
    }

    /// `all()` remembers each record it read, as `get` does; a save after it
    /// merges, and save → hand edit → delete keeps the edit.
    @Test func allThenSaveMergesAndSaveEditDeleteKeepsTheEdit() async throws {
        let workspace = try StoreWorkspace()
        try workspace.write("dune.json", Self.dune)
        let store = workspace.store()
        var book = try #require(try await store.all().first)
        try workspace.write("dune.json", Self.dune.replacingOccurrences(of: "412", with: "896"))
        book.rating = 4.5
        try await store.save(book)
        let merged = try #require(try await store.get("dune"))
        #expect(merged.pages == 896 && merged.rating == 4.5)
        try await store.save(book.with { $0.rating = 5 })
        try workspace.write("dune.json", Self.dune)
        await #expect { try await store.delete("dune") } throws: { error in
            guard case RecordStoreError.editedSinceRead("dune", _, []) = error else { return false }
            return true
        }
        #expect(workspace.bytes("dune.json") == Array(Self.dune.utf8))
    }

    /// A nested map on one side and a scalar (or nothing) on the other is one
    /// change of the whole field: it conflicts at the map's path, and the
    /// editor's file stays as it is.
    @Test(arguments: [
        ("the editor replaced the map by a scalar", Value.string("out of print"), 7000 as Int?),
        ("the editor removed the map", nil, 7000),
        ("the app removed the map the editor changed", Value.map(["copies": .integer(5000)]), nil),
    ] as [(String, Value?, Int?)])
    func aMapAgainstAScalarConflictsAtTheMap(name: String, edit: Value?, copies: Int?) async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        try await store.save(ShelfBook.sample())
        var book = try #require(try await store.get("dune"))
        var fields = try workspace.collection.rules.parse(try #require(workspace.bytes("dune.json"))).get()
        fields["printing"] = edit
        let edited = workspace.collection.rules.canonicalBytes(fields)
        try Data(edited).write(to: URL(fileURLWithPath: workspace.root + "/dune.json"))
        book.printing = copies.map { ShelfBook.Printing(copies: $0, publisher: book.printing?.publisher) }
        await #expect { try await store.save(book) } throws: { error in
            guard case RecordStoreError.editedSinceRead("dune", _, let paths) = error else { return false }
            return paths == ["printing"]
        }
        #expect(workspace.bytes("dune.json") == edited, "\(name): the editor's file is left as it was")
    }

    /// Keys of a cloned collection named in a conflict reach no terminal raw:
    /// the path is in the case's `paths` as it is, and written visibly in the sentence.
    @Test func hostileKeysInConflictPathsAreEscaped() async throws {
        let workspace = try StoreWorkspace()
        let key = RecordStoreHostileTests.hostile
        let json = { (count: Int) in
            #"{"id": "k", "title": "T", "author": "A", "genre": "fiction", "counts": {"\u001b]0;pwned\u0007\u001b[2J\u202e": \#(count)}}"#
        }
        try workspace.write("k.json", json(1))
        let store = workspace.store(RecordStoreHostileTests.Typed.self)
        var typed = try #require(try await store.get("k"))
        try workspace.write("k.json", json(2))
        typed.counts = [key: 3]
        await #expect { try await store.save(typed) } throws: { error in
            guard case RecordStoreError.editedSinceRead("k", _, let paths) = error, paths.count == 1 else { return false }
            return paths[0].contains(key) && RecordStoreHostileTests.isSafe(error) && "\(error)".contains("\\x1b]0;pwned\\x07")
        }
    }
}

extension ShelfBook {
    /// A copy with `change` applied.
    func with(_ change: (inout ShelfBook) -> Void) -> ShelfBook {
        var copy = self
        change(&copy)
        return copy
    }
}
