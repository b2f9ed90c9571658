import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The small state files a clone commits are read only up to a size of
/// their own (<doc:CollectionFormat>): at the size a file is read, one byte
/// past it refused with a sentence naming the file and the size, never
/// read whole. Files booksync only compares (the editors' schemas) or that
/// hold a few bytes (a conflict's revisions) are read no further either.
@Suite struct StateFileCapsTests {
    static func collection(in scratch: ScratchDirectory) throws -> CollectionDirectory {
        try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
    }

    /// `bytes` padded with spaces (JSON whitespace) to `size`.
    static func padded(_ bytes: [UInt8], to size: Int) -> [UInt8] {
        bytes + [UInt8](repeating: 0x20, count: size - bytes.count)
    }

    /// config.json and remotes.json, each exactly at its cap and one byte past it.
    static let files: [(name: String, cap: Int, refusal: String)] = [
        ("config.json", CollectionConfig.maximumFileBytes,
         "the file is larger than 4 MiB, the most booksync reads of it (room for a schema of many thousands of fields); "
            + "if it came with a clone, check what it holds, then shorten it or restore it with git"),
        ("remotes.json", RemoteList.maximumFileBytes,
         "the file is larger than 1 MiB, the most booksync reads of it (room for its 1000 remotes several times over); "
            + "if it came with a clone, check what it holds, then shorten it or restore it with git"),
    ]

    @Test(arguments: files)
    func atTheCapIsReadPastItIsRefused(_ file: (name: String, cap: Int, refusal: String)) throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(in: scratch)
        let path = collection.paths.state + "/" + file.name
        let contents = file.name == "config.json" ? try FileSystem.readFile(path) : RemoteList().encoded()
        func open() throws(BooksyncError) {
            let opened = try CollectionDirectory.open(searchingFrom: scratch.path)
            _ = try opened.loadRemotes()
        }
        try FileSystem.writeAtomically(Self.padded(contents, to: file.cap), to: path)
        #expect(throws: Never.self, "\(file.name) at \(file.cap) bytes") { try open() }
        try FileSystem.writeAtomically(Self.padded(contents, to: file.cap + 1), to: path)
        #expect(throws: BooksyncError.damagedStateFile(path: path, StateFileError(message: file.refusal))) { try open() }
    }

    /// A schema file of any size larger than the config makes it is out of
    /// date (and rewritten), found without reading it.
    @Test func anOversizedSchemaFileIsStale() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(in: scratch)
        let file = try #require(collection.editorSchemaFiles.first)
        #expect(collection.staleEditorSchemas().isEmpty)
        try FileSystem.writeAtomically(file.bytes + [0x20], to: file.path)
        #expect(collection.staleEditorSchemas().map(\.path) == [file.path])
        #expect(try collection.writeEditorSchemas().map(\.written) == [true])
        #expect(try FileSystem.readFile(file.path) == file.bytes)
    }

    /// A revision file past its cap is not read: like any unreadable one it
    /// means no stored conflict (the next pull stores the remote side anew).
    @Test func anOversizedRevisionFileIsNoConflict() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(in: scratch)
        let store = ConflictStore(paths: collection.paths)
        let id = try RecordID("dune")
        let record = try collection.rules.load(Array(#"{"id": "dune", "title": "t", "author": "a", "genre": "g"}"#.utf8), id: id).get()
        try store.save(id, record: record, revision: "2026-01-02T00:00:00Z", baseRevision: nil)
        #expect(store.load(id, rules: collection.rules)?.revision == "2026-01-02T00:00:00Z")
        let revisions = collection.paths.conflicts + "/revisions/" + collection.paths.stateFileName(id)
        let stored = try FileSystem.readFile(revisions)
        try FileSystem.writeAtomically(Self.padded(stored, to: ConflictStore.maximumRevisionFileBytes), to: revisions)
        #expect(store.load(id, rules: collection.rules)?.revision == "2026-01-02T00:00:00Z", "at the cap it is read")
        try FileSystem.writeAtomically(Self.padded(stored, to: ConflictStore.maximumRevisionFileBytes + 1), to: revisions)
        #expect(store.load(id, rules: collection.rules) == nil)
    }
}
