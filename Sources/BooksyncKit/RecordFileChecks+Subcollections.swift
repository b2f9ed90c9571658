import BooksyncCore

/// `validate` and `fmt` over subcollection records too (`dune/reviews/r1.json`).
extension CollectionDirectory {
    /// The record files of the collection relative to its directory, sorted:
    /// `*.json` directly in it, then those of the configured subcollection
    /// folders (found as a scan finds them: never through a link).
    /// - Throws: `.io` if the collection directory cannot be listed.
    func recordFileNames() throws(BooksyncError) -> [String] {
        try recordFilesAndRefusedFolders().names
    }

    /// `recordFileNames()`, and the configured subcollection folders that
    /// could not be entered (a link, a file or a FIFO where `dune/reviews/`
    /// belongs), which `validate` and `fmt` report like a bad record file.
    func recordFilesAndRefusedFolders() throws(BooksyncError) -> (names: [String], refusedFolders: [UnusableFile]) {
        let names: [String]
        do {
            names = try FileSystem.listDirectory(paths.root)
        } catch {
            throw .io(error)
        }
        var files = names.filter(RecordID.isRecordFileName)
        var refused: [UnusableFile] = []
        if !rules.subcollections.isEmpty {
            let directory: Int32
            do {
                directory = try FileSystem.openDirectory(paths.root)
            } catch {
                throw .io(error)
            }
            defer { FileSystem.closeDirectory(directory) }
            var walker = SubcollectionWalker(root: paths.root, rootDirectory: directory, subcollections: rules.subcollections, batchSize: 4096)
            walker.walk(documentFolders: names.filter { !RecordID.isRecordFileName($0) && !$0.hasPrefix(".") }) { found in
                files += found.map(\.relativePath)
            }
            // Record-like names that do not decode are checked too (and reported), as at the top level.
            for entry in walker.unusable {
                if RecordID.isRecordFileName(FileSystem.split(entry.fileName).name) { files.append(entry.fileName) } else { refused.append(entry) }
            }
        }
        return (files.sorted(by: CanonicalJSON.utf8Less), refused)
    }

    /// The path of a file argument inside a configured subcollection folder
    /// (`books/dune/reviews/r1.json`), nil for anything else. The folder as the
    /// kernel resolves it must be inside the collection directory.
    func subcollectionFilePath(directory: String, name: String, root: String) -> String? {
        guard !rules.subcollections.isEmpty, let real = FileSystem.realPath(directory), real.hasPrefix(root + "/") else { return nil }
        let relative = String(real.dropFirst(root.count + 1)) + "/" + name
        guard let id = try? RecordID.fromRelativePath(relative, subcollections: rules.subcollections), !id.isTopLevel else { return nil }
        return paths.root + "/" + id.fileName
    }

    /// The record a file path in the collection stands for: its name for a
    /// file directly in it, its path below it for a subcollection file.
    static func recordID(ofFile path: String, paths: CollectionPaths, rules: RecordRules) throws(RecordIDError) -> RecordID? {
        let prefix = paths.root + "/"
        if !rules.subcollections.isEmpty, path.hasPrefix(prefix) {
            return try RecordID.fromRelativePath(String(path.dropFirst(prefix.count)), subcollections: rules.subcollections)
        }
        return try RecordID.fromFileName(FileSystem.split(path).name)
    }
}
