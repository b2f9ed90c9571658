import BooksyncCore
import BooksyncKit

/// Saving and deleting records: what an editor does to the files, done for the app.
extension RecordStore {
    /// Writes `dto` as the record named by its own `id` field.
    /// - Parameter keepingUndeclaredFields: Keep the top-level fields of the
    ///   existing file that `dto` does not encode (someone else's `isbn`, a
    ///   field a newer app version added), like Firestore's `setData(_:merge:)`;
    ///   by default the record is replaced whole, like `setData(from:)`.
    /// - Returns: The record as written (id, fields, canonical bytes, hash).
    /// - Throws: `RecordStoreError.missingID` when `dto` encodes no string `id`,
    ///   `.refused` when the record breaks the collection's schema (nothing is
    ///   written), `.notEncodable`, `.invalidID`, `.collection` (lock held, I/O).
    @discardableResult
    public func save(_ dto: DTO, keepingUndeclaredFields: Bool = false) async throws(RecordStoreError) -> Record {
        // The id is known only from the encoded fields; for an encoding error, the property of that name says it.
        let fields = try encode(dto, id: Mirror(reflecting: dto).children.first { $0.label == "id" }?.value as? String)
        guard case .string(let id)? = fields["id"] else { throw .missingID(type: "\(DTO.self)") }
        return try await write(fields, id: recordID(id), keepingUndeclaredFields: keepingUndeclaredFields)
    }

    /// Writes `dto` as the record `id`: for DTOs without an `id` property, and
    /// for subcollection records (`id` = `dune/reviews/r1`, whose file gets
    /// `"id": "r1"`, the document id, which a DTO's own `id` must then hold).
    /// The record file gets its `"id"` all the same (every record file names itself).
    /// - Throws: As `save(_:keepingUndeclaredFields:)`, and `.conflictingID`
    ///   when `dto` has an `id` field that is not `id`.
    @discardableResult
    public func save(_ dto: DTO, id: String, keepingUndeclaredFields: Bool = false) async throws(RecordStoreError) -> Record {
        let recordID = try recordID(id)
        var fields = try encode(dto, id: id)
        // A subcollection record's file says its document id (`r1` of `dune/reviews/r1`).
        switch fields["id"] {
        case nil: fields["id"] = .string(recordID.documentID)
        case .string(recordID.documentID)?: break
        case let other?: throw .conflictingID(type: "\(DTO.self)", given: id, field: CanonicalJSON.encodeInline(other))
        }
        return try await write(fields, id: recordID, keepingUndeclaredFields: keepingUndeclaredFields)
    }

    /// Removes the record file of `id`, as `rm` would: the next `push` deletes
    /// the document (guarded by its revision), the next `pull` does not bring it back.
    /// - Returns: False when there was no such file.
    /// - Throws: `RecordStoreError.invalidID`, `.collection` (lock held, I/O).
    @discardableResult
    public func delete(_ id: String) async throws(RecordStoreError) -> Bool {
        let id = try recordID(id)
        return try await exclusively { () throws(RecordStoreError) -> Bool in
            let collection = try open()
            let path = try Self.recordFile(id, in: collection)
            return try Self.locked(collection) { () throws(RecordStoreError) -> Bool in
                // A link or anything but a regular file is reported, never removed (as get and save refuse it).
                let stat: FileStat
                do throws(FileSystemError) {
                    stat = try FileSystem.stat(path)
                } catch {
                    if error.isNotFound { return false }
                    throw .collection(.io(error))
                }
                guard stat.isRegularFile else {
                    throw .collection(.io(FileSystemError.notRegular(path, stat.kind, operation: "delete")))
                }
                // Removed only if it still holds what was read here: an editor's save that
                // lands in between is put back (see FileSystem.remove(_:ifCurrent:)).
                let removed: Bool
                do throws(FileSystemError) {
                    let read = try FileSystem.readFile(path)
                    removed = try FileSystem.remove(path, ifCurrent: { $0 == read })
                } catch {
                    throw .collection(.io(error))
                }
                guard removed else { throw .changedOnDisk(file: path) }
                return true
            }
        }
    }

    /// `dto` as record fields; `id`, when known, names the record in the error
    /// (evaluated only then).
    func encode(_ dto: DTO, id: @autoclosure () -> String?) throws(RecordStoreError) -> Fields {
        do {
            return try encoder.encode(dto)
        } catch {
            throw .notEncodable(type: "\(DTO.self)", id: id(), reason: CodingErrorText.reason(error))
        }
    }

    /// Checks `fields` as a hand-edited file would be checked (the canonical
    /// bytes loaded back through the collection's rules), then replaces the
    /// file atomically, all under the collection lock. A file already holding
    /// these bytes is left alone, so its stat-cache entry stays valid.
    func write(_ fields: Fields, id: RecordID, keepingUndeclaredFields: Bool) async throws(RecordStoreError) -> Record {
        try await exclusively { () throws(RecordStoreError) -> Record in
            let collection = try open()
            let rules = collection.rules
            let path = try Self.recordFile(id, in: collection)
            return try Self.locked(collection) { () throws(RecordStoreError) -> Record in
                let existing = try? FileSystem.readFile(path)
                var fields = fields
                if keepingUndeclaredFields {
                    // Keeping what the file holds needs a file that says it: one that cannot be
                    // read or parsed (a hand edit half done) is reported, never overwritten.
                    if let existing {
                        switch rules.parse(existing) {
                        case .success(let kept): fields.merge(kept) { declared, _ in declared }
                        case .failure(let problem): throw .invalidFile(file: path, problems: [problem])
                        }
                    } else if FileSystem.exists(path) {
                        throw .invalidFile(file: path, problems: [RecordDiagnostic(message: "cannot be read, so its other fields cannot be kept")])
                    }
                }
                let record: Record
                switch rules.load(rules.canonicalBytes(fields, id: id), id: id) {
                case .failure(let problems): throw .refused(id: id.rawValue, file: path, problems: problems.diagnostics)
                case .success(let loaded): record = loaded
                }
                if existing != record.canonicalBytes {
                    // In place only if the file still holds what was read above (or is still
                    // absent): an editor's save that lands in between stays, and nothing is written.
                    let replaced: Bool
                    do throws(FileSystemError) {
                        // A subcollection record's folders are made only now, once the record is known valid.
                        _ = try collection.paths.recordFileCreatingFolders(id)
                        if let stat = try? FileSystem.stat(path), !stat.isRegularFile {
                            throw FileSystemError.notRegular(path, stat.kind, operation: "write")
                        }
                        replaced = try FileSystem.replace(path, with: record.canonicalBytes, ifCurrent: { $0 == existing })
                    } catch {
                        throw .collection(.io(error))
                    }
                    guard replaced else { throw .changedOnDisk(file: path) }
                }
                return record
            }
        }
    }

    /// Runs `body` holding the collection lock, as every writing CLI command does.
    static func locked<T>(_ collection: CollectionDirectory, _ body: () throws(RecordStoreError) -> T) throws(RecordStoreError) -> T {
        let lock: CollectionLock
        do {
            lock = try collection.lock()
        } catch {
            throw .collection(error)
        }
        defer { lock.release() }
        return try body()
    }
}
