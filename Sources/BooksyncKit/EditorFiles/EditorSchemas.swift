import BooksyncCore

/// One JSON Schema file for editors (`booksync schema`): where it lives in
/// `.booksync/` (committed, so every clone's editor has it), what it holds,
/// and how record files point at it (the manual's CollectionFormat article, "Editing records").
package struct EditorSchemaFile: Sendable, Equatable {
    /// Absolute path of the schema file.
    package let path: String
    /// Its path from the collection directory (`.booksync/record.schema.json`).
    package let relativePath: String
    /// The schema, as `JSONSchemaDocument.encoded` makes it.
    package let bytes: [UInt8]
    /// The records it describes, from the collection directory, as a glob
    /// (`*.json`, `*/reviews/*.json`) for an editor's file mapping.
    package let recordGlob: String
    /// The `$schema` a record file of these records writes to point at it
    /// (`./.booksync/record.schema.json`, `../../.booksync/…` below).
    package let hint: String
    /// The subcollection path (`reviews/likes`), nil for the collection's own records.
    package let subcollection: String?
}

extension CollectionDirectory {
    /// The most subcollection paths that get a schema file of their own (in
    /// path order). A schema file is about 20 KB and every command that
    /// checks them encodes each, so a config with hundreds of discovered
    /// paths (the manual's WholeProject article) must not make every `validate` and `init`
    /// write or read megabytes; records of the paths past it are synced and
    /// validated all the same, only editors get no schema for them.
    package static let maximumSubcollectionSchemaFiles = 100

    /// The schema files this config makes: the collection's, then one per
    /// configured subcollection, for the first `maximumSubcollectionSchemaFiles`.
    package var editorSchemaFiles: [EditorSchemaFile] {
        let config = self.config
        var files = [EditorSchemaFile(path: paths.state + "/record.schema.json", relativePath: ".booksync/record.schema.json",
                                      bytes: JSONSchemaDocument.encoded(config.schema, collection: config.remote.collectionPath),
                                      recordGlob: "*.json", hint: "./.booksync/record.schema.json", subcollection: nil)]
        for entry in config.subcollections.entries.prefix(Self.maximumSubcollectionSchemaFiles) {
            files.append(editorSchemaFile(entry))
        }
        return files
    }

    /// The schema file of one configured subcollection path, whether or not
    /// it is among those written (`booksync schema --subcollection PATH`).
    package func editorSchemaFile(_ entry: Subcollections.Entry) -> EditorSchemaFile {
        // Folder names as record files use them (the collection ids' file-name
        // encoding); every segment was checked to be a valid id when the config was read.
        let folders = entry.segments.map { (try? RecordID($0).encodedName) ?? $0 }
        // A fixed name in a folder per collection id: it fits wherever the id
        // does, and its leading dot is one no encoded collection id has.
        let relative = ".booksync/subcollections/" + folders.joined(separator: "/") + "/.record.schema.json"
        let collection = config.remote.collectionPath + "/" + entry.segments.map { "*/" + $0 }.joined(separator: "/")
        let up = String(repeating: "../", count: 2 * folders.count)
        return EditorSchemaFile(path: paths.root + "/" + relative, relativePath: relative,
                                bytes: JSONSchemaDocument.encoded(entry.schema, collection: collection),
                                recordGlob: folders.map { "*/" + $0 }.joined(separator: "/") + "/*.json",
                                hint: up + relative, subcollection: entry.path)
    }

    /// Writes every schema file whose bytes differ from what the config
    /// makes, atomically. A link in a schema file's or folder's place is
    /// refused, never followed (a clone may plant one). Config and records are not touched and no lock is taken:
    /// the files are derived, and the last writer writes the same bytes.
    /// - Returns: Each file and whether it was written.
    /// - Throws: `BooksyncError.io` when one cannot be written.
    @discardableResult
    package func writeEditorSchemas() throws(BooksyncError) -> [(file: EditorSchemaFile, written: Bool)] {
        var results: [(file: EditorSchemaFile, written: Bool)] = []
        for file in editorSchemaFiles {
            // Read only up to the size it should have: a larger file differs, however large.
            if (try? FileSystem.readFile(file.path, limit: file.bytes.count)) == file.bytes {
                results.append((file, false))
                continue
            }
            try BooksyncError.io { () throws(FileSystemError) in
                // Each folder below .booksync/ is made or checked in turn: a
                // cloned link there is refused, never written through.
                var folder = paths.state
                for name in file.relativePath.split(separator: "/").dropFirst().dropLast() {
                    folder += "/" + name
                    try FileSystem.createDirectory(folder)
                }
                try FileSystem.requireRegularOrAbsent(file.path, operation: "write")
                try FileSystem.writeAtomically(file.bytes, to: file.path)
            }
            results.append((file, true))
        }
        return results
    }

    /// The schema files that exist but no longer match the config (it was
    /// edited by hand since): `validate` says so.
    package func staleEditorSchemas() -> [EditorSchemaFile] {
        editorSchemaFiles.filter { file in
            do throws(FileSystemError) {
                return try FileSystem.readFile(file.path, limit: file.bytes.count) != file.bytes
            } catch {
                return error.isTooLarge
            }
        }
    }
}
