import Foundation
import Testing
import BooksyncCodable
import BooksyncCore
@_spi(Remote) import BooksyncKit
@_spi(Remote) import BooksyncStore
import BooksyncTestSupport

/// The store's files: what `save` writes is what `booksync fmt` makes of the
/// record, what it refuses it never writes, and what `get`/`all` cannot read
/// they name by its file.
@Suite struct RecordStoreFileTests {
    @Test func saveWritesTheCanonicalFileThatFormatWouldMake() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        try await store.save(ShelfBook.sample())
        let saved = try #require(workspace.bytes("dune.json"))

        // The same record typed by hand, one line, keys in any order: `fmt` makes the same bytes.
        let other = try StoreWorkspace()
        try other.write("dune.json", #"{"tags": ["desert", "ecology"], "rating": 4.25, "pages": 412, "id": "dune", "printing": {"publisher": {"$reference": "publishers/chilton"}, "copies": 2200}, "setting": {"$geopoint": {"longitude": -3.25, "latitude": 24.5}}, "title": "Dune", "published": {"$timestamp": "1965-08-01T00:00:00Z"}, "genre": "science fiction", "cover": {"$bytes": "iVBORwD/"}, "authorRef": {"$reference": "authors/frank-herbert"}, "author": "Frank Herbert"}"#)
        let formatted = try await other.collection.format([], checkOnly: false)
        #expect(formatted.map(\.outcome) == [.reformatted])
        #expect(other.bytes("dune.json") == saved)
        #expect(try await workspace.collection.format([], checkOnly: true).map(\.outcome) == [.alreadyCanonical])

        // And it reads back as the same DTO.
        #expect(try await store.get("dune") == ShelfBook.sample())
        let mode = try FileManager.default.attributesOfItem(atPath: workspace.root + "/dune.json")[.posixPermissions] as? Int
        #expect(mode == 0o644)
    }

    /// The editor's `$schema` is the file's: the DTO never sees it, and a
    /// save keeps it first, whether or not the values changed.
    @Test func saveKeepsTheFilesEditorHint() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        try await store.save(ShelfBook.sample())
        let text = String(decoding: try #require(workspace.bytes("dune.json")), as: UTF8.self)
        try workspace.write("dune.json", "{\n  \"$schema\": \"./.booksync/record.schema.json\"," + text.dropFirst())
        var book = try #require(try await store.get("dune"))
        #expect(book == ShelfBook.sample())
        _ = try await store.save(book)
        #expect(String(decoding: try #require(workspace.bytes("dune.json")), as: UTF8.self).hasPrefix("{\n  \"$schema\": \"./.booksync/record.schema.json\",\n  \"id\": \"dune\","))
        book.pages = 900
        try await store.save(book)
        let bytes = try #require(workspace.bytes("dune.json"))
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("{\n  \"$schema\": \"./.booksync/record.schema.json\",\n  \"id\": \"dune\","))
        #expect(String(decoding: bytes, as: UTF8.self).contains("\"pages\": 900"))
        #expect(try await store.get("dune") == book, "the hint is no field of the record")
    }

    @Test func aSavedRecordAndAHandEditedOneAreTheSameToTheEngine() async throws {
        let viaStore = try StoreWorkspace()
        let byHand = try StoreWorkspace()
        try await viaStore.store().save(ShelfBook.sample())
        try byHand.write("dune.json", String(decoding: try #require(viaStore.bytes("dune.json")), as: UTF8.self))
        let one = try await viaStore.collection.status(remote: nil)
        let other = try await byHand.collection.status(remote: nil)
        #expect(one.records == other.records)
        #expect(one.records.map(\.state) == [.localChange(.added)])

        // Pushed, then saved again with a change: a local modification, like an edit.
        _ = try await viaStore.collection.push(remote: ScriptedRemote())
        #expect(try await viaStore.collection.status(remote: nil).isClean)
        // Saving the same values again leaves the file alone (same inode and
        // times), so its stat-cache entry stays valid, as for an editor that saves nothing.
        let before = try FileSystem.stat(viaStore.root + "/dune.json")
        try await viaStore.store().save(ShelfBook.sample())
        let after = try FileSystem.stat(viaStore.root + "/dune.json")
        #expect(after.inode == before.inode && after.mtimeNanoseconds == before.mtimeNanoseconds && after.ctimeNanoseconds == before.ctimeNanoseconds)
        #expect(try await viaStore.collection.status(remote: nil).isClean)
        var changed = ShelfBook.sample()
        changed.rating = 4.5
        try await viaStore.store().save(changed)
        let modified = try await viaStore.collection.status(remote: nil)
        #expect(modified.records.map(\.state) == [.localChange(.modified)])
    }

    /// A DTO looser than the schema: its title is not even a string.
    struct Loose: Codable, Sendable {
        var id: String
        var title: Int?
        var author = "A"
        var genre = "g"
        var extra: [String: String]?
        var grid: [[Int]]?
        var blob: String?
    }

    /// Each DTO encodes fine but breaks the Book schema or a Firestore rule a
    /// hand-edited file is checked against: refused with a sentence naming the
    /// record and file, and no file is written.
    @Test(arguments: [
        (Loose(id: "numeric-title", title: 7), "field 'title' must be string, found integer"),
        (Loose(id: "no-title"), "missing required field 'title'"),
        (Loose(id: "reserved-name", title: nil, extra: ["__name__": "x"]), "reserved by Firestore"),
        (Loose(id: "nested-arrays", title: nil, grid: [[1, 2]]), "array inside an array"),
        (Loose(id: "too-big", title: nil, blob: String(repeating: "x", count: 1_100_000)), "1 MiB"),
    ])
    func saveRefusesARecordTheSchemaRefuses(dto: Loose, mentions: String) async throws {
        let workspace = try StoreWorkspace()
        let file = workspace.root + "/" + dto.id + ".json"
        do {
            try await workspace.store(Loose.self).save(dto)
            Issue.record("saved \(dto.id)")
        } catch {
            let text = error.description
            #expect(text.hasPrefix("refused to save record '\(dto.id)' to \(file), nothing was written: "), "\(text)")
            #expect(text.contains(mentions), "\(text)")
        }
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.root).filter { !$0.hasPrefix(".booksync") } == [])
    }

    /// Values the encoder itself refuses (a reference that is no document
    /// path, a latitude beyond 90): the sentence names the record and the field.
    @Test func valuesTheEncoderRefusesNameTheRecordAndField() async throws {
        let workspace = try StoreWorkspace()
        var book = ShelfBook.sample("bad-geopoint")
        book.setting = GeoPoint(latitude: 91, longitude: 0)
        await #expect { try await workspace.store().save(book) } throws: { error in
            let text = (error as? RecordStoreError)?.description ?? ""
            return text.hasPrefix("cannot encode ShelfBook for record 'bad-geopoint'") && text.contains("setting") && text.contains("nothing was written")
        }
        book = ShelfBook.sample("bad-reference")
        book.printing?.publisher = DocumentReference(path: "publishers")
        await #expect { try await workspace.store().save(book, id: "bad-reference") } throws: { error in
            let text = (error as? RecordStoreError)?.description ?? ""
            return text.hasPrefix("cannot encode ShelfBook for record 'bad-reference'") && text.contains("printing.publisher")
        }
        #expect(workspace.bytes("bad-geopoint.json") == nil && workspace.bytes("bad-reference.json") == nil)
    }

    @Test func aRequiredFieldMissingFromTheDTOIsRefused() async throws {
        struct NoGenre: Codable, Sendable { var id = "x"; var title = "T"; var author = "A" }
        let workspace = try StoreWorkspace()
        await #expect { try await workspace.store(NoGenre.self).save(NoGenre()) } throws: { error in
            guard case RecordStoreError.refused(let id, _, let problems) = error else { return false }
            return id == "x" && problems.contains { $0.message.contains("genre") }
        }
        #expect(workspace.bytes("x.json") == nil)
    }

    /// Hostile ids never make the store touch a path outside the collection.
    @Test(arguments: ["../escape", "..", "a/b", "", "__reserved__"])
    func idsThatCannotBeRecordsAreRefused(id: String) async throws {
        let workspace = try StoreWorkspace()
        var book = ShelfBook.sample()
        book.id = id
        await #expect { try await workspace.store().save(book) } throws: { error in
            guard case RecordStoreError.invalidID(id, _) = error else { return false }
            return (error as? RecordStoreError)?.description.contains("cannot be a record id") == true
        }
        await #expect(throws: RecordStoreError.self) { try await workspace.store().get(id) }
        await #expect(throws: RecordStoreError.self) { try await workspace.store().delete(id) }
        #expect(!FileManager.default.fileExists(atPath: workspace.scratch.path + "/../escape.json"))
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/a"))
    }

    @Test func aDTOWithoutAnIDIsSavedUnderTheIDGiven() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store(Untagged.self)
        let book = Untagged(title: "Kindred", author: "Octavia E. Butler", genre: "fiction")
        await #expect { try await store.save(book) } throws: { error in
            guard case RecordStoreError.missingID(let type) = error else { return false }
            return type == "Untagged" && (error as? RecordStoreError)?.description.contains("save(_:id:)") == true
        }
        try await store.save(book, id: "kindred")
        let text = String(decoding: try #require(workspace.bytes("kindred.json")), as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"id\": \"kindred\",\n  \"title\": \"Kindred\""))
        #expect(try await store.get("kindred") == book)
        await #expect { try await workspace.store().save(ShelfBook.sample("dune"), id: "other") } throws: { error in
            guard case RecordStoreError.conflictingID(_, "other", _) = error else { return false }
            return true
        }
    }

    @Test func aHandEditedInvalidFileIsNamedByGetAndAll() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        try await store.save(ShelfBook.sample())
        let cases: [(text: String, expected: String)] = [
            ("{\"id\": \"broken\", \"title\": \"T\",\n  \"author\": }\n", "2:"),               // syntax, with its position
            (#"{"id": "broken", "title": 7, "author": "A", "genre": "g"}"#, "title"),        // schema
            (#"{"id": "wrong", "title": "T", "author": "A", "genre": "g"}"#, "wrong"),       // id not the file's
        ]
        for (text, expected) in cases {
            try workspace.write("broken.json", text)
            for attempt in [{ _ = try await store.get("broken") }, { _ = try await store.all() }] as [() async throws -> Void] {
                do {
                    try await attempt()
                    Issue.record("read \(text)")
                } catch let error as RecordStoreError {
                    guard case .invalidFile(let file, _) = error else { Issue.record("\(error)"); continue }
                    #expect(file == workspace.root + "/broken.json")
                    #expect(error.description.hasPrefix(file + " is not a valid record: ") && error.description.contains(expected), "\(error)")
                }
            }
        }
        // A valid record that is not a ShelfBook: the coding path says where.
        try workspace.write("broken.json", #"{"id": "broken", "title": "T", "author": "A", "genre": "g", "printing": {"copies": "many"}}"#)
        await #expect { try await store.get("broken") } throws: { error in
            guard case RecordStoreError.notDecodable("ShelfBook", let decoding) = error else { return false }
            let text = (error as? RecordStoreError)?.description ?? ""
            return decoding.recordID.rawValue == "broken" && text.hasPrefix(workspace.root + "/broken.json: printing.copies: ")
        }
    }

    /// A record file that is a link to a file outside is never read (<doc:Safety>).
    @Test func aRecordFileThatIsALinkIsRefusedNotFollowed() async throws {
        let workspace = try StoreWorkspace()
        let outside = workspace.scratch.path + "/../booksync-outside-\(UUID().uuidString).json"
        try Data(#"{"id": "linked", "title": "Secret", "author": "A", "genre": "g"}"#.utf8).write(to: URL(fileURLWithPath: outside))
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try FileManager.default.createSymbolicLink(atPath: workspace.root + "/linked.json", withDestinationPath: outside)
        await #expect { try await workspace.store().get("linked") } throws: { error in
            guard case RecordStoreError.invalidFile(let file, _) = error else { return false }
            return file.hasSuffix("/linked.json") && !((error as? RecordStoreError)?.description.contains("Secret") ?? true)
        }
        // Saving over it is refused as well: never written through, never replaced.
        await #expect { try await workspace.store().save(ShelfBook.sample("linked")) } throws: { error in
            (error as? RecordStoreError)?.description.contains("linked.json: is a symbolic link") == true
        }
        #expect(try String(contentsOfFile: outside, encoding: .utf8).contains("Secret"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: workspace.root + "/linked.json") == outside)
    }

    @Test func allReadsEveryRecordSortedAndSkipsOtherFiles() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        for id in ["neuromancer", "dune", "%E3%82%AE"] { try await store.save(ShelfBook.sample(id)) }
        try workspace.write("README.md", "notes\n")
        try FileManager.default.createDirectory(atPath: workspace.root + "/notes", withIntermediateDirectories: true)
        #expect(try await store.all().map(\.id) == ["%E3%82%AE", "dune", "neuromancer"])
        #expect(try await store.get("missing") == nil)
        // A name that looks like a record but decodes to no id is named, not skipped in silence.
        try workspace.write("bad%zz.json", "{}")
        await #expect { try await store.all() } throws: { error in
            guard case RecordStoreError.invalidFile(let file, _) = error else { return false }
            return file == workspace.root + "/bad%zz.json"
        }
    }

    @Test func deleteRemovesTheFileAndThePushDeletesTheDocument() async throws {
        let workspace = try StoreWorkspace()
        let store = workspace.store()
        try await store.save(ShelfBook.sample("dune"))
        try await store.save(ShelfBook.sample("solaris"))
        _ = try await store.push()
        #expect(try await store.delete("dune"))
        #expect(workspace.bytes("dune.json") == nil)
        #expect(try await store.delete("dune") == false)
        #expect(try await store.status(offline: true).records.map(\.state) == [.localChange(.deleted)])
        let report = try await store.push(options: { var o = SyncOptions(); o.force = true; return o }())
        #expect(report.events == [SyncEvent(id: try RecordID("dune"), kind: .pushed(.delete(baseRevision: "r1")))])
    }

    @Test func keepingUndeclaredFieldsKeepsWhatTheDTODoesNotKnow() async throws {
        let workspace = try StoreWorkspace()
        try workspace.write("dune.json", #"{"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "sf", "isbn": "978-0441013593", "pages": 1}"#)
        let store = workspace.store(Untagged.self)
        try await store.save(Untagged(title: "Dune", author: "Frank Herbert", genre: "science fiction"), id: "dune", keepingUndeclaredFields: true)
        let kept = try workspace.collection.rules.parse(try #require(workspace.bytes("dune.json"))).get()
        #expect(kept["isbn"] == .string("978-0441013593") && kept["pages"] == .integer(1) && kept["genre"] == .string("science fiction"))
        try await store.save(Untagged(title: "Dune", author: "Frank Herbert", genre: "science fiction"), id: "dune")
        #expect(try workspace.collection.rules.parse(try #require(workspace.bytes("dune.json"))).get().keys.sorted() == ["author", "genre", "id", "title"])
    }
}
