import BooksyncCore

/// A collection's record files: listed (top-level and in configured
/// subcollection folders, `dune/reviews/r1.json`) and named by the file
/// arguments of `validate`, `fmt`, `resolve` and pathspecs, never through a
/// link and never outside the collection.
package struct RecordFiles: Sendable {
    /// Where the collection is.
    let paths: CollectionPaths
    /// How records look (their subcollections, which say where files may be).
    let rules: RecordRules

    /// The record files of the collection relative to its directory, sorted:
    /// `*.json` directly in it, then those of the configured subcollection
    /// folders (found as a scan finds them: never through a link).
    /// - Throws: `.io` if the collection directory cannot be listed.
    func names() throws(BooksyncError) -> [String] {
        try namesAndRefusedFolders().names
    }

    /// `names()`, and the configured subcollection folders that
    /// could not be entered (a link, a file or a FIFO where `dune/reviews/`
    /// belongs), which `validate` and `fmt` report like a bad record file.
    func namesAndRefusedFolders() throws(BooksyncError) -> (names: [String], refusedFolders: [UnusableFile]) {
        let names = try BooksyncError.io { () throws(FileSystemError) in try FileSystem.listDirectory(paths.root) }
        var files = names.filter(RecordID.isRecordFileName)
        var refused: [UnusableFile] = []
        if !rules.subcollections.isEmpty {
            let directory = try BooksyncError.io { () throws(FileSystemError) in try FileSystem.openDirectory(paths.root) }
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

    /// Where a file argument lies in the collection directory, as a path
    /// relative to it (`dune.json`, `dune/reviews/r1.json`), found from the
    /// current directory. Every command that takes files finds them here.
    ///
    /// The folder is resolved as the kernel resolves it (`link/../x.json` is
    /// not `x.json`), and must then be the folder the name says: a link inside
    /// the collection (`dune/reviews` linked to `ghost/reviews`) would make
    /// `dune/reviews/r1.json` another record, so it is refused, never followed.
    /// A folder that is gone (a deleted record's) is taken by name. A relative
    /// path that is not in the collection from the current directory is taken
    /// from the collection directory (`booksync -C books resolve dune.json`).
    /// - Throws: `.invalidArgument` for a path outside the collection or
    ///   through a link inside it.
    /// `shown` is how errors name the argument, when it is not `argument` itself.
    func relativePath(ofFileArgument argument: String, rootOnly: Bool = false, shown: String? = nil) throws(BooksyncError) -> String {
        let shown = TerminalEscaping.abbreviate(shown ?? argument)
        if !rootOnly, let found = try relativePath(ofFileArgument: argument, from: FileSystem.currentDirectory(), shown: shown) { return found }
        if !argument.hasPrefix("/"), let found = try relativePath(ofFileArgument: argument, from: paths.root, shown: shown) { return found }
        throw .invalidArgument("'\(shown)': not a record file of the collection in \(paths.root)")
    }

    /// `relativePath(ofFileArgument:)` from `directory`; nil when the path is outside the collection.
    private func relativePath(ofFileArgument argument: String, from directory: String, shown: String) throws(BooksyncError) -> String? {
        let (folder, name) = FileSystem.split(argument.hasPrefix("/") ? argument : directory + "/" + argument)
        let roots = [FileSystem.realPath(paths.root) ?? paths.root, paths.root]
        func below(_ folder: String) -> String? {
            for root in roots {
                if folder == root { return name }
                if folder.hasPrefix(root + "/") { return String(folder.dropFirst(root.count + 1)) + "/" + name }
            }
            return nil
        }
        let byName = below(FileSystem.absolute(folder))
        guard let real = FileSystem.realPath(folder) else { return byName }
        switch (byName, below(real)) {
        case (let named?, let found?) where named == found: return found
        case (nil, let found?): return found  // named from outside, through a link into the collection or `../books/`
        case (_?, _):
            throw .invalidArgument("'\(shown)': its folder is reached through a symbolic link inside the collection; "
                + "booksync never follows links there")
        case (nil, nil): return nil
        }
    }

    /// The record a file argument names: the record at its path, never the
    /// one its last name would be at the top (`r1.json` inside `dune/reviews/`
    /// is the review, not the book `r1`).
    /// - Throws: `.invalidArgument` as `relativePath(ofFileArgument:)`, or for a
    ///   path that is not a record file of a configured subcollection.
    func recordID(ofFileArgument argument: String, rootOnly: Bool = false) throws(BooksyncError) -> RecordID {
        try recordID(atRelativePath: try relativePath(ofFileArgument: argument, rootOnly: rootOnly), argument: argument)
    }

    /// The record at `relative` (from `relativePath(ofFileArgument:)`), named
    /// in errors by the `argument` it came from.
    func recordID(atRelativePath relative: String, argument: String) throws(BooksyncError) -> RecordID {
        let found: RecordID?
        do {
            found = try RecordID.fromRelativePath(relative, subcollections: rules.subcollections)
        } catch {
            throw .invalidArgument("'\(TerminalEscaping.abbreviate(argument))': \(error.message)")
        }
        guard let id = found else {
            throw .invalidArgument("'\(TerminalEscaping.abbreviate(argument))': not a record file name (records are <id>.json and not hidden)")
        }
        return id
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

    /// Parses command-line record names: an id (`dune`, or `dune/reviews/r1`
    /// with subcollections), or a file name (`dune.json`,
    /// `books/%C3%BCber.json`, `books/dune/reviews/r1.json`) whose encoded
    /// name decodes to one.
    package func recordIDs(_ arguments: [String]) throws(BooksyncError) -> [RecordID] {
        var ids: [RecordID] = []
        for argument in arguments {
            if argument.hasSuffix(".json") {
                ids.append(try recordID(ofFileArgument: argument))
                continue
            }
            do {
                ids.append(try rules.recordID(argument))
            } catch {
                throw .invalidArgument("'\(TerminalEscaping.abbreviate(argument))': \(error.message)")
            }
        }
        return ids
    }
}
