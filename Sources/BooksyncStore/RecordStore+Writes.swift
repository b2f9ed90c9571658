import BooksyncCore
@_spi(Remote) import BooksyncKit

/// Saving and deleting records: what an editor does to the files, done for the app.
extension RecordStore {
    /// Writes `dto` as the record named by its own `id` field. An edit made to
    /// the file since this store's latest read (or save) of the record is
    /// merged in, as `pull` merges a remote change.
    /// - Parameters:
    ///   - dto: The record's new values; its `id` names the record.
    ///   - keepingUndeclaredFields: Keep the top-level fields of the
    ///     existing file that `dto` does not encode (someone else's `isbn`, a
    ///     field a newer app version added), like Firestore's `setData(_:merge:)`;
    ///     by default the record is replaced whole, like `setData(from:)`.
    /// - Returns: The version to save this DTO's next change against
    ///   (`save(_:basedOn:)`); most apps ignore it, the store remembers it too.
    /// - Throws: `RecordStoreError.missingID` when `dto` encodes no string `id`,
    ///   `.refused` when the record breaks the collection's schema (nothing is
    ///   written), `.editedSinceRead`/`.deletedSinceRead` when an edit since
    ///   the read cannot be merged, `.invalidFile` when the file on disk is not
    ///   a valid record, `.notEncodable`, `.invalidID`, `.collection` (lock held, I/O).
    @discardableResult
    public func save(_ dto: DTO, keepingUndeclaredFields: Bool = false) async throws(RecordStoreError) -> RecordVersion {
        let (fields, id) = try encodeCarryingID(dto)
        return try await write(fields, id: id, keepingUndeclaredFields: keepingUndeclaredFields, base: nil).version
    }

    /// `save(_:)` of a copy read with `getVersioned`/`allVersioned`: merged
    /// against the version that copy was read from, whatever the store read since.
    /// - Returns: The version to save this copy's next change against.
    /// - Throws: As `save(_:keepingUndeclaredFields:)`.
    @discardableResult
    public func save(_ dto: DTO, basedOn version: RecordVersion,
                     keepingUndeclaredFields: Bool = false) async throws(RecordStoreError) -> RecordVersion {
        let (fields, id) = try encodeCarryingID(dto)
        return try await write(fields, id: id, keepingUndeclaredFields: keepingUndeclaredFields, base: version.state).version
    }

    /// Writes `dto` as the record `id`: for DTOs without an `id` property, and
    /// for subcollection records (`id` = `dune/reviews/r1`, whose file gets
    /// `"id": "r1"`, the document id, which a DTO's own `id` must then hold).
    /// The record file gets its `"id"` all the same (every record file names itself).
    /// - Throws: As `save(_:keepingUndeclaredFields:)`, and `.conflictingID`
    ///   when `dto` has an `id` field that is not `id`.
    @discardableResult
    public func save(_ dto: DTO, id: String, keepingUndeclaredFields: Bool = false) async throws(RecordStoreError) -> RecordVersion {
        try await write(encode(dto, namedAs: id), id: recordID(id), keepingUndeclaredFields: keepingUndeclaredFields, base: nil).version
    }

    /// `save(_:id:)` of a copy read with `getVersioned`/`allVersioned`,
    /// merged against the version it was read from (see `save(_:basedOn:)`).
    /// - Throws: As `save(_:id:keepingUndeclaredFields:)`.
    @discardableResult
    public func save(_ dto: DTO, id: String, basedOn version: RecordVersion,
                     keepingUndeclaredFields: Bool = false) async throws(RecordStoreError) -> RecordVersion {
        try await write(encode(dto, namedAs: id), id: recordID(id), keepingUndeclaredFields: keepingUndeclaredFields,
                        base: version.state).version
    }

    /// `dto`'s fields and the record id its own `id` field names.
    private func encodeCarryingID(_ dto: DTO) throws(RecordStoreError) -> (Fields, RecordID) {
        // The id is known only from the encoded fields; for an encoding error, the property of that name says it.
        let fields = try encode(dto, id: Mirror(reflecting: dto).children.first { $0.label == "id" }?.value as? String)
        guard case .string(let id)? = fields["id"] else { throw .missingID(type: "\(DTO.self)") }
        return (fields, try recordID(id))
    }

    /// `dto`'s fields as the record `id`, with `"id": id` added when the DTO has none.
    private func encode(_ dto: DTO, namedAs id: String) throws(RecordStoreError) -> Fields {
        let recordID = try recordID(id)
        var fields = try encode(dto, id: id)
        // A subcollection record's file says its document id (`r1` of `dune/reviews/r1`).
        switch fields["id"] {
        case nil: fields["id"] = .string(recordID.documentID)
        case .string(recordID.documentID)?: break
        case let other?: throw .conflictingID(type: "\(DTO.self)", given: id, field: CanonicalJSON.encodeInline(other))
        }
        return fields
    }

    /// Removes the record file of `id`, as `rm` would: the next `push` deletes
    /// the document (guarded by its revision), the next `pull` does not bring it back.
    /// - Returns: False when there was no such file.
    /// - Throws: `RecordStoreError.editedSinceRead` when the file was edited
    ///   since this store's latest read of it (the edit is kept),
    ///   `.invalidID`, `.collection` (lock held, I/O).
    @discardableResult
    public func delete(_ id: String) async throws(RecordStoreError) -> Bool {
        try await remove(recordID(id), base: nil)
    }

    /// `delete(_:)` of a copy read with `getVersioned`/`allVersioned`:
    /// refused when the file was edited since that copy's read.
    /// - Throws: As `delete(_:)`.
    @discardableResult
    public func delete(_ id: String, basedOn version: RecordVersion) async throws(RecordStoreError) -> Bool {
        try await remove(recordID(id), base: version.state)
    }

    /// Removes the file if it holds the fields of `base` (nil: the store's latest read).
    private func remove(_ id: RecordID, base: ReadVersion?) async throws(RecordStoreError) -> Bool {
        try await exclusively { () throws(RecordStoreError) -> Bool in
            let collection = try open()
            let path = try Self.recordFile(id, in: collection)
            return try await locked(collection) { () throws(RecordStoreError) -> Bool in
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
                let current: [UInt8]
                do throws(FileSystemError) { current = try FileSystem.readFile(path) } catch { throw .collection(.io(error)) }
                if let read = base ?? versionsRead[id], !read.holdsSameFields(as: current, rules: collection.rules) {
                    // Edited since the app read it: removing it would lose the edit.
                    throw .editedSinceRead(id: id.rawValue, file: path, paths: [])
                }
                let removed: Bool
                do throws(FileSystemError) {
                    removed = try FileSystem.remove(path, ifCurrent: { $0 == current })
                } catch {
                    throw .collection(.io(error))
                }
                guard removed else { throw .changedOnDisk(file: path) }
                versionsRead[id] = .absent
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
    /// - Parameter base: The version the app's copy was read from; nil for
    ///   the store's latest read (or save) of the record.
    /// - Returns: The record written, with the app's side as the next base.
    func write(_ fields: Fields, id: RecordID, keepingUndeclaredFields: Bool,
               base: ReadVersion?) async throws(RecordStoreError) -> Versioned<CanonicalRecord> {
        try await exclusively { () throws(RecordStoreError) -> Versioned<CanonicalRecord> in
            let collection = try open()
            let rules = collection.rules
            let path = try Self.recordFile(id, in: collection)
            return try await locked(collection) { () throws(RecordStoreError) -> Versioned<CanonicalRecord> in
                // A link or anything but a regular file is refused (never written through); a file
                // that cannot be read (permissions) is never overwritten: its other fields, or the
                // edit made since the store read it, cannot be known.
                let existing: [UInt8]?
                do throws(FileSystemError) {
                    if let stat = try? FileSystem.stat(path), !stat.isRegularFile {
                        throw FileSystemError.notRegular(path, stat.kind, operation: "write")
                    }
                    existing = try FileSystem.readFile(path)
                } catch {
                    guard error.isNotFound else { throw .collection(.io(error)) }
                    existing = nil
                }
                let (appSide, fields) = try fieldsToWrite(fields, id: id, path: path, existing: existing, rules: rules,
                                                          keepingUndeclaredFields: keepingUndeclaredFields,
                                                          base: base ?? versionsRead[id])
                let record: CanonicalRecord
                switch rules.load(rules.canonicalBytes(fields, id: id), id: id) {
                case .failure(let problems): throw .refused(id: id.rawValue, file: path, problems: problems.diagnostics)
                case .success(let loaded): record = loaded
                }
                // The file's editor hint (`$schema`) stays first; it is not the app's to change.
                let bytes = rules.fileBytes(record.fields, id: id, hint: rules.hint(inFile: existing))
                if existing != bytes {
                    // In place only if the file still holds what was read above (or is still
                    // absent): an editor's save that lands in between stays, and nothing is written.
                    let replaced: Bool
                    do throws(FileSystemError) {
                        // A subcollection record's folders are made only now, once the record is known valid.
                        _ = try collection.paths.recordFileCreatingFolders(id)
                        replaced = try FileSystem.replace(path, with: bytes, ifCurrent: { $0 == existing })
                    } catch {
                        throw .collection(.io(error))
                    }
                    guard replaced else { throw .changedOnDisk(file: path) }
                }
                let saved = ReadVersion.bytes(appSide == record.fields ? record.canonicalBytes : rules.canonicalBytes(appSide, id: id))
                versionsRead[id] = saved
                return Versioned(value: record, version: RecordVersion(state: saved))
            }
        }
    }

    /// The app's side of a save (the DTO's fields, with the undeclared fields
    /// of the app's version kept when asked) and the fields it writes: the
    /// app's side merged with what changed in the file since the store read it
    /// (`SaveMerge`).
    /// - Throws: `.invalidFile` for a file on disk that does not parse,
    ///   `.editedSinceRead` / `.deletedSinceRead` when the merge cannot be made.
    private func fieldsToWrite(_ declared: Fields, id: RecordID, path: String, existing: [UInt8]?, rules: RecordRules,
                               keepingUndeclaredFields: Bool, base read: ReadVersion?) throws(RecordStoreError) -> (appSide: Fields, write: Fields) {
        func parsed(_ bytes: [UInt8]?) throws(RecordStoreError) -> Fields? {
            guard let bytes else { return nil }
            switch rules.parse(bytes) {
            case .success(let fields): return fields
            case .failure(let problem): throw .invalidFile(file: path, problems: [problem])
            }
        }
        func withKept(_ base: Fields?) -> Fields {
            guard keepingUndeclaredFields, let base else { return declared }
            return declared.merging(base) { declared, _ in declared }
        }
        guard let read else {
            // Never read: nothing to merge against, the DTO is the record (a blind `setData`).
            let appSide = withKept(try parsed(existing))
            return (appSide, appSide)
        }
        let base: Fields?
        if case .bytes(let bytes) = read { base = try parsed(bytes) } else { base = nil }
        if read.matches(existing) {  // not changed on disk since
            let appSide = withKept(base)
            return (appSide, appSide)
        }
        // The editor's file is checked as `get` checks it: a change that broke it (a required
        // field removed, another id) is named as the file's problem, not the save's.
        let onDisk: Fields?
        if let existing {
            switch rules.load(existing, id: id) {
            case .success(let record): onDisk = record.fields
            case .failure(let problems): throw .invalidFile(file: path, problems: problems.diagnostics)
            }
        } else {
            onDisk = nil
        }
        // Read as absent and created since: the undeclared fields to keep are the creator's.
        let appSide = withKept(base ?? onDisk)
        switch SaveMerge.merge(read: base, saved: appSide, onDisk: onDisk) {
        case .write(let fields): return (appSide, fields)
        case .conflicts(let paths): throw .editedSinceRead(id: id.rawValue, file: path, paths: paths.map(\.description))
        case .deletedSinceRead: throw .deletedSinceRead(id: id.rawValue, file: path)
        }
    }

    /// Runs `body` holding the collection lock, as every writing CLI command
    /// does; waiting for the lock holds no thread of the caller's pool.
    func locked<T>(_ collection: CollectionDirectory, _ body: () throws(RecordStoreError) -> T) async throws(RecordStoreError) -> T {
        let lock: CollectionLock
        do {
            lock = try await collection.lock()
        } catch {
            throw .collection(error)
        }
        defer { lock.release() }
        return try body()
    }
}
