import BooksyncCore

extension CollectionDirectory {
    /// Adds subcollection paths to config.json (`booksync discover`), under
    /// the collection's lock so no sync reads a config half-changed; the
    /// editors' schemas follow. Records of the new paths need only an id.
    /// - Returns: the collection reopened with the new config.
    /// - Throws: `.invalidArgument` when the paths would end in more distinct
    ///   collection ids than booksync syncs (`Subcollections.maximumGroupIDs`).
    package func addingSubcollections(_ added: [String]) throws(BooksyncError) -> CollectionDirectory {
        let lock = try lock()
        defer { lock.release() }
        var entries = config.subcollections.entries
        for path in added where config.subcollections.entry(forPath: path) == nil {
            if let problem = Subcollections.problem(withPath: path) { throw .invalidArgument(problem) }
            entries.append(Subcollections.Entry(path: path))
        }
        if let problem = Subcollections.problem(withPaths: entries.map(\.path)) { throw .invalidArgument(problem) }
        var changed = config
        changed.subcollections = Subcollections(entries: entries)
        try BooksyncError.io { () throws(FileSystemError) in
            try FileSystem.writeAtomically(changed.encoded(), to: self.paths.config, durable: true)
        }
        let reopened = try CollectionDirectory.open(searchingFrom: self.paths.root)
        _ = try? reopened.writeEditorSchemas()
        return reopened
    }
}
