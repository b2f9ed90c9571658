import BooksyncCodable
import BooksyncCore
@_spi(Remote) import BooksyncKit

/// A typed store over a collection directory: the record files are the app's
/// local store, read and written as `DTO` values, and the same sync engine the
/// `booksync` CLI runs keeps them in step with the remote (<doc:SwiftLibrary>).
///
///     struct BookDTO: Codable, Sendable { var id, title, author, genre: String }
///     let store = RecordStore<BookDTO>.firestore(directory: "books")
///     try await store.save(BookDTO(id: "dune", title: "Dune", author: "Frank Herbert", genre: "science fiction"))
///     let report = try await store.push()
///
/// **Where the id comes from.** A record file always holds its id in `"id"`
/// (it must match the file name). A DTO that declares `id: String` carries it:
/// `save(_:)` takes it from there, and `get`/`all` fill it from the record.
/// A DTO without an `id` property is saved with `save(_:id:)` and loses
/// nothing on the way back (the decoder ignores fields the DTO does not declare).
///
/// **Same as a hand edit.** `save` writes exactly the bytes `booksync fmt`
/// would make of the record (canonical form), atomically, under the
/// collection lock, after the checks `booksync validate` makes of a
/// hand-edited file; it does not touch the base or the stat cache. So to the
/// engine a saved record is a locally changed file like any other: `status`
/// shows it, `push` sends it, and a concurrent remote change merges field by field.
/// A record written through the store replaces the whole file, as Firestore's
/// `setData(from:)` replaces a document: fields the DTO does not declare are
/// dropped unless `save(_:keepingUndeclaredFields:)` is asked to keep them.
///
/// **Edits since the read are merged, never overwritten.** The store
/// remembers what it last read (`get`, `all`) or wrote of each record. When
/// an editor (or a `pull`) changed the file after that, `save` merges
/// three-way with that version as the base, field by field at any depth, as
/// `pull` merges a remote change: the editor's `rating` and the app's `pages`
/// both stay. The same path changed differently on both sides, or a file
/// removed since the read, throws `editedSinceRead`/`deletedSinceRead` and
/// writes nothing; so does `delete` of a file edited since the read. A record
/// the store never read is written whole (a blind `setData`).
///
/// The base `save(_:)` uses is per record: this store's latest read (or
/// save) of it. An app that keeps a copy while the same record is read again
/// (a form's copy while a list refreshes) reads it with `getVersioned` and
/// saves it with `save(_:basedOn:)`, so the copy is merged against its own
/// read; `save(_:)` of such a stale copy would merge against the later read
/// and undo what changed between the two.
///
/// **Threads.** The store is an actor: file work runs on its executor and
/// requests on the engine's tasks, never on the caller's actor, so a
/// `@MainActor` view model awaits it without blocking the interface. Writes and syncs run one at a time in the
/// order they were called (a `save` during a `pull` waits for it; so do the
/// writes of another store on the same directory in this process), and another
/// process holding the collection lock (the CLI) makes them fail with
/// `RecordStoreError.collection(.lockHeld)`, as two CLI commands would.
public actor RecordStore<DTO: Codable & Sendable> {
    /// The collection directory (or a directory inside it), as given.
    public nonisolated let directory: String
    let makeRemote: @Sendable (CollectionDirectory) throws(BooksyncError) -> any RemoteCollection
    /// Which remote's sync state `status`, `pull` and `push` use, chosen as
    /// the CLI chooses (`CollectionDirectory.selectingRemote`); nil: origin.
    let remoteChoice: (name: String?, environment: [String: String])?
    let encoder = RecordEncoder()
    let decoder = RecordDecoder()
    /// Per record, what this store last read or wrote of its file: the base a
    /// later `save` or `delete` is checked (and merged) against.
    var versionsRead: [RecordID: ReadVersion] = [:]

    /// A store over the collection at `directory` (or its nearest parent with
    /// `.booksync/`, as the CLI finds it) syncing with the remote `remote` makes.
    /// Nothing is read until the first call: each call opens the collection
    /// afresh, so a config.json changed meanwhile is honoured, as by the CLI.
    /// - Parameters:
    ///   - directory: The collection directory, created by `booksync init` or
    ///     `CollectionDirectory.initialize(at:config:)`.
    ///   - remote: Makes the remote for a sync from the opened collection (its
    ///     config and rules); called once per `status`/`pull`/`push`. Tests pass
    ///     an in-memory remote. SPI with the remote seam: an app uses
    ///     `firestore(directory:environment:retry:remote:log:)`.
    @_spi(Remote)
    public init(directory: String,
                remote: @escaping @Sendable (CollectionDirectory) throws(BooksyncError) -> any RemoteCollection) {
        self.init(directory: directory, choosing: nil, remote: remote)
    }

    /// A store whose syncs use the sync state of the remote `choice` selects.
    init(directory: String, choosing choice: (name: String?, environment: [String: String])?,
         remote: @escaping @Sendable (CollectionDirectory) throws(BooksyncError) -> any RemoteCollection) {
        self.directory = directory
        self.remoteChoice = choice
        self.makeRemote = remote
    }

    /// The collection as it is on disk now, with the sync state of the chosen remote.
    func openForSync() throws(RecordStoreError) -> CollectionDirectory {
        let collection = try open()
        guard let remoteChoice else { return collection }
        do {
            return try collection.selectingRemote(remoteChoice.name, environment: remoteChoice.environment)
        } catch {
            throw .collection(error)
        }
    }

    /// The collection as it is on disk now.
    func open() throws(RecordStoreError) -> CollectionDirectory {
        do {
            return try CollectionDirectory.open(searchingFrom: directory)
        } catch {
            throw .collection(error)
        }
    }

    /// `id` as a record id, or why it cannot be one: a subcollection path
    /// (`dune/reviews/r1`) only when the collection's config names that
    /// subcollection, as every command takes it.
    func recordID(_ id: String) throws(RecordStoreError) -> RecordID {
        let rules = id.contains("/") ? try open().rules : RecordRules()
        do {
            return try rules.recordID(id)
        } catch {
            throw .invalidID(id, reason: error.message)
        }
    }

    /// The record file of `id`, its folders checked on the way (never a
    /// link) and, for a write, created.
    static func recordFile(_ id: RecordID, in collection: CollectionDirectory, creatingFolders: Bool = false) throws(RecordStoreError) -> String {
        do {
            return creatingFolders ? try collection.paths.recordFileCreatingFolders(id) : try collection.paths.recordFile(id)
        } catch {
            throw .collection(.io(error))
        }
    }

    /// The path of the record file for `id`, whether or not it exists.
    /// - Throws: `RecordStoreError.invalidID`, or `.collection` when the directory is not a collection.
    public func file(for id: String) throws(RecordStoreError) -> String {
        try open().paths.root + "/" + recordID(id).fileName
    }

    // MARK: reading

    /// Every record of the collection itself as a DTO, sorted by id. Files
    /// that are not records (other names) are skipped, as the CLI does, and so
    /// are subcollection records, which have DTOs of their own (a `Review` is
    /// not a `Book`): reach those by path id with `get("dune/reviews/r1")`.
    /// - Throws: `RecordStoreError.invalidFile` naming the first record file
    ///   that is invalid (a hand edit gone wrong, a symbolic link),
    ///   `.notDecodable` naming a record that does not fit `DTO`, `.collection` for I/O.
    public func all() throws(RecordStoreError) -> [DTO] {
        try allVersioned().map(\.value)
    }

    /// `all()`, each DTO with the version it was read from, for saving each
    /// copy against its own read (`save(_:basedOn:)`).
    /// - Throws: As `all()`.
    public func allVersioned() throws(RecordStoreError) -> [Versioned<DTO>] {
        let collection = try open()
        let paths: [String]
        do {
            paths = try collection.recordFiles.filePaths([])
        } catch {
            throw .collection(error)
        }
        var result: [Versioned<DTO>] = []
        let root = collection.paths.root + "/"
        for path in paths where !path.hasPrefix(root) || !path.dropFirst(root.count).contains("/") {
            let decoded: RecordID?
            do {
                decoded = try RecordID.fromFileName(FileSystem.split(path).name)
            } catch {
                throw .invalidFile(file: path, problems: [RecordDiagnostic(message: error.message)])  // `bad%zz.json`
            }
            guard let id = decoded, let read = try read(id, in: collection) else { continue }  // removed meanwhile
            result.append(read)
        }
        return result
    }

    /// The record `id` as a DTO, or nil when there is no such record file.
    /// - Throws: `RecordStoreError.invalidFile` naming the file when it is not a
    ///   valid record (syntax, schema, a link), `.notDecodable` when it does not
    ///   fit `DTO`, `.invalidID`, `.collection` for I/O.
    public func get(_ id: String) throws(RecordStoreError) -> DTO? {
        try read(recordID(id), in: open())?.value
    }

    /// `get(_:)` with the version the DTO was read from: a copy kept for a
    /// while (a form's) is saved with `save(_:basedOn:)`, so it is merged
    /// against its own read even after later reads of the same record.
    /// - Throws: As `get(_:)`.
    public func getVersioned(_ id: String) throws(RecordStoreError) -> Versioned<DTO>? {
        try read(recordID(id), in: open())
    }

    /// Reads, checks and decodes one record file exactly as the engine loads
    /// it, and remembers it as the store's latest read of the record.
    func read(_ id: RecordID, in collection: CollectionDirectory) throws(RecordStoreError) -> Versioned<DTO>? {
        let path = try Self.recordFile(id, in: collection)
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path)
        } catch {
            if error.isNotFound {
                versionsRead[id] = .absent
                return nil
            }
            throw .invalidFile(file: path, problems: [error.diagnostic])
        }
        switch collection.rules.load(bytes, id: id) {
        case .failure(let problems):
            throw .invalidFile(file: path, problems: problems.diagnostics)
        case .success(let record):
            let dto: DTO
            do {
                dto = try decoder.decode(DTO.self, from: record, file: path)
            } catch {
                throw .notDecodable(type: "\(DTO.self)", error)
            }
            versionsRead[id] = .bytes(bytes)
            return Versioned(value: dto, version: RecordVersion(state: .bytes(bytes)))
        }
    }
}
