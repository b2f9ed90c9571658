import Foundation
import Testing
import BooksyncCodable
import BooksyncCore
@_spi(Remote) import BooksyncKit
@_spi(Remote) import BooksyncStore
import BooksyncTestSupport

/// A file an editor changes between the app's read and its save (or delete) of
/// the same record: the save merges three-way against the version the store
/// read, as a pull merges a remote change; nothing of the edit is lost.
@Suite struct RecordStoreEditMergeTests {
    /// One race: what the editor does to the file after the app's `get`, what
    /// the app changes in the DTO it got, and what the save must come to.
    struct Race: Sendable, CustomTestStringConvertible {
        let name: String
        let edit: @Sendable (inout Fields) -> Void
        let change: @Sendable (inout ShelfBook) -> Void
        /// The file's fields after the save must hold these (path → value).
        let expected: [String: Value]
        /// Conflicting paths the save must name instead (the file keeps the edit).
        let conflicts: [String]
        var testDescription: String { name }
    }

    static let races: [Race] = [
        Race(name: "different fields merge", edit: { $0["rating"] = .double(4.75) }, change: { $0.pages = 900 },
             expected: ["rating": .double(4.75), "pages": .integer(900)], conflicts: []),
        Race(name: "different keys of a nested map merge",
             edit: { $0["printing"] = .map(["copies": .integer(5000), "publisher": .reference("publishers/chilton")]) },
             change: { $0.printing?.publisher = DocumentReference(path: "publishers/tor") },
             expected: ["printing": .map(["copies": .integer(5000), "publisher": .reference("publishers/tor")])], conflicts: []),
        Race(name: "the same change on both sides is no conflict", edit: { $0["pages"] = .integer(900) }, change: { $0.pages = 900 },
             expected: ["pages": .integer(900)], conflicts: []),
        Race(name: "a field the editor added stays through a whole-record save", edit: { $0["isbn"] = .string("978-0441013593") },
             change: { $0.pages = 900 }, expected: ["isbn": .string("978-0441013593"), "pages": .integer(900)], conflicts: []),
        Race(name: "one field changed differently conflicts", edit: { $0["rating"] = .double(4.75) }, change: { $0.rating = 1 },
             expected: [:], conflicts: ["rating"]),
        Race(name: "a nested key changed differently conflicts at its path",
             edit: { $0["printing"] = .map(["copies": .integer(5000), "publisher": .reference("publishers/chilton")]) },
             change: { $0.printing?.copies = 7000 }, expected: [:], conflicts: ["printing.copies"]),
        Race(name: "the app dropping a field the editor changed conflicts", edit: { $0["tags"] = .array([.string("spice")]) },
             change: { $0.tags = nil }, expected: [:], conflicts: ["tags"]),
    ]

    @Test(arguments: races)
    func anEditBetweenGetAndSaveIsMergedOrNamed(race: Race) async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        try await store.save(ShelfBook.sample())
        var book = try #require(try await store.get("dune"))
        let edited = try handEdit(workspace, race.edit)
        race.change(&book)

        if race.conflicts.isEmpty {
            try await store.save(book)
            let onDisk = try fields(workspace)
            for (key, value) in race.expected {
                #expect(onDisk[key] == value, "\(key)")
            }
        } else {
            await #expect { try await store.save(book) } throws: { error in
                guard case RecordStoreError.editedSinceRead("dune", let file, let paths) = error else { return false }
                let sentence = (error as? RecordStoreError)?.description ?? ""
                return file.hasSuffix("/dune.json") && paths == race.conflicts
                    && race.conflicts.allSatisfy(sentence.contains) && sentence.contains("nothing was written")
            }
            #expect(workspace.bytes("dune.json") == edited, "the editor's file is left as it was")
        }
    }

    /// After a merged save the store's base is what it wrote: the next save of
    /// the same DTO changes nothing, and the editor's change is still there.
    @Test func theWrittenRecordIsTheNextBase() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        try await store.save(ShelfBook.sample())
        var book = try #require(try await store.get("dune"))
        _ = try handEdit(workspace) { $0["rating"] = .double(4.75) }
        book.pages = 900
        try await store.save(book)
        let merged = workspace.bytes("dune.json")
        try await store.save(book)  // the app's stale rating is not a change against what the store wrote
        #expect(workspace.bytes("dune.json") == merged)
        #expect(try fields(workspace)["rating"] == .double(4.75))
    }

    @Test func aFileRemovedSinceTheReadIsNotBroughtBack() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        try await store.save(ShelfBook.sample())
        let book = try #require(try await store.get("dune"))
        try FileManager.default.removeItem(atPath: workspace.root + "/dune.json")
        await #expect { try await store.save(book) } throws: { error in
            guard case RecordStoreError.deletedSinceRead("dune", _) = error else { return false }
            return (error as? RecordStoreError)?.description.contains("was deleted since the store read record 'dune'") == true
        }
        #expect(workspace.bytes("dune.json") == nil)
        // Read again (it is gone), then saving creates it anew.
        #expect(try await store.get("dune") == nil)
        try await store.save(book)
        #expect(try await store.get("dune") == book)
    }

    @Test func aRecordCreatedByTheEditorAfterTheAppFoundNoneConflictsWhereItDiffers() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        #expect(try await store.get("dune") == nil)
        try workspace.write("dune.json", #"{"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "sf"}"#)
        var book = ShelfBook.sample()
        book.published = nil; book.cover = nil; book.setting = nil; book.authorRef = nil
        book.printing = nil; book.tags = nil; book.pages = nil; book.rating = nil
        await #expect { try await store.save(book) } throws: { error in
            guard case RecordStoreError.editedSinceRead("dune", _, let paths) = error else { return false }
            return paths == ["genre"]  // added on both sides: every difference conflicts
        }
        book.genre = "sf"
        try await store.save(book)
        #expect(try fields(workspace)["genre"] == .string("sf"))
    }

    @Test func deleteOfAFileEditedSinceTheReadKeepsTheEdit() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        try await store.save(ShelfBook.sample())
        _ = try #require(try await store.get("dune"))
        let edited = try handEdit(workspace) { $0["rating"] = .double(4.75) }
        await #expect { try await store.delete("dune") } throws: { error in
            guard case RecordStoreError.editedSinceRead("dune", _, []) = error else { return false }
            return (error as? RecordStoreError)?.description.contains("it was not deleted and the edit is kept") == true
        }
        #expect(workspace.bytes("dune.json") == edited)
        _ = try await store.get("dune")
        #expect(try await store.delete("dune"))
        #expect(workspace.bytes("dune.json") == nil)
    }

    /// A record the store never read is written whole, like `setData(from:)`:
    /// there is no version to merge against. This pins the documented rule.
    @Test func aRecordNeverReadIsWrittenWhole() async throws {
        let workspace = try StoreWorkspace()
        try workspace.write("dune.json", #"{"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "sf", "isbn": "1"}"#)
        try await workspace.store().save(ShelfBook.sample())
        let onDisk = try fields(workspace)
        #expect(onDisk["isbn"] == nil && onDisk["genre"] == .string("science fiction"))
    }

    /// A form keeps the copy it read while a list refreshes the same record
    /// after an editor's change: saved against its own version, the form's
    /// copy merges with the edit instead of undoing it, and each save hands
    /// back the version for the copy's next change.
    @Test func aCopySavedAgainstItsOwnVersionKeepsWhatChangedAfterItsRead() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        try await store.save(ShelfBook.sample())
        var form = try #require(try await store.getVersioned("dune"))
        _ = try handEdit(workspace) { $0["rating"] = .double(4.75) }
        _ = try await store.all()  // the list refreshes: the store's latest read now holds the edit

        form.value.pages = 900
        let saved = try await store.save(form.value, basedOn: form.version)
        #expect(try fields(workspace)["rating"] == .double(4.75), "the edit made after the form's read stays")
        #expect(try fields(workspace)["pages"] == .integer(900))

        // The form's next change goes against the version its save handed back.
        _ = try handEdit(workspace) { $0["tags"] = .array([.string("spice")]) }
        form.value.title = "Dune (50th anniversary)"
        try await store.save(form.value, basedOn: saved)
        let onDisk = try fields(workspace)
        #expect(onDisk["title"] == .string("Dune (50th anniversary)") && onDisk["tags"] == .array([.string("spice")])
                && onDisk["rating"] == .double(4.75))

        // The same field changed on both sides since the copy's read is named.
        form.value.rating = 1
        await #expect { try await store.save(form.value, basedOn: saved) } throws: { error in
            guard case RecordStoreError.editedSinceRead("dune", _, let paths) = error else { return false }
            return paths == ["rating"]
        }
    }

    @Test func deleteAgainstAnOldVersionIsRefusedAfterAnEditEvenWhenTheStoreReadItSince() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        try await store.save(ShelfBook.sample())
        let old = try #require(try await store.getVersioned("dune"))
        let edited = try handEdit(workspace) { $0["rating"] = .double(4.75) }
        _ = try await store.get("dune")
        await #expect { try await store.delete("dune", basedOn: old.version) } throws: { error in
            guard case RecordStoreError.editedSinceRead("dune", _, []) = error else { return false }
            return true
        }
        #expect(workspace.bytes("dune.json") == edited)
        let fresh = try #require(try await store.getVersioned("dune"))
        #expect(try await store.delete("dune", basedOn: fresh.version))
        #expect(workspace.bytes("dune.json") == nil)
    }

    // MARK: helpers

    /// Rewrites dune.json as an editor would (its fields changed by `edit`); returns the new bytes.
    func handEdit(_ workspace: StoreWorkspace, _ edit: (inout Fields) -> Void) throws -> [UInt8] {
        var current = try fields(workspace)
        edit(&current)
        let bytes = workspace.collection.rules.canonicalBytes(current)
        try Data(bytes).write(to: URL(fileURLWithPath: workspace.root + "/dune.json"))
        return bytes
    }

    func fields(_ workspace: StoreWorkspace) throws -> Fields {
        try workspace.collection.rules.parse(try #require(workspace.bytes("dune.json"))).get()
    }
}
