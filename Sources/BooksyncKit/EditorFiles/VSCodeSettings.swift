import BooksyncCore

/// `.vscode/settings.json`'s `json.schemas` entries that map a collection's
/// record files to its editor schemas (`booksync schema --editor vscode`).
///
/// The file belongs to the user: every other setting is kept, and so is
/// every other `json.schemas` entry; booksync's entries (known by their
/// `url`) are replaced. The file is written back in canonical form (keys
/// sorted, two-space indent), as VS Code's settings editor also rewrites it.
/// VS Code also reads comments and trailing commas in
/// this file, which booksync's parser refuses: such a file is not rewritten,
/// and the entries are given for the user to add by hand.
package enum VSCodeSettings {
    /// What `map(_:)` did.
    package enum Outcome: Sendable, Equatable {
        /// The settings file was written (created when `created`).
        case written(path: String, created: Bool)
        /// It already had these entries; nothing was written.
        case unchanged(path: String)
        /// It could not be read as plain JSON (`reason`); `snippet` is what to add by hand.
        case needsHand(path: String, reason: String, snippet: String)
    }

    /// The workspace folder VS Code would open: the top of the git
    /// repository holding the collection, else the collection directory.
    static func workspace(of root: String) -> String {
        var folder = root
        while true {
            if FileSystem.exists(folder + "/.git") { return folder }
            let parent = FileSystem.split(folder).directory
            if parent == folder || parent.isEmpty { return root }
            folder = parent
        }
    }

    /// The `json.schemas` entries for `files`, with paths from `workspace`.
    package static func entries(_ files: [EditorSchemaFile], root: String, workspace: String) -> [Value] {
        let below = root == workspace ? "" : String(root.dropFirst(workspace.count + 1)) + "/"
        return files.map { file in
            .map(["fileMatch": .array([.string("/" + below + file.recordGlob)]), "url": .string("./" + below + file.relativePath)])
        }
    }

    /// `settings` with `entries` in `json.schemas`, replacing any entry with the same `url`.
    /// - Throws: A sentence when `json.schemas` is there but not a list.
    package static func merged(_ settings: Fields, entries: [Value]) throws(BooksyncError) -> Fields {
        var list: [Value] = []
        switch settings["json.schemas"] {
        case nil: break
        case .array(let items)?: list = items
        case .some: throw .invalidArgument("\"json.schemas\" is not a list")
        }
        let urls = Set(entries.compactMap { entry -> String? in
            if case .map(let m) = entry, case .string(let url)? = m["url"] { return url }
            return nil
        })
        list.removeAll { item in
            if case .map(let m) = item, case .string(let url)? = m["url"] { return urls.contains(url) }
            return false
        }
        var result = settings
        result["json.schemas"] = .array(list + entries)
        return result
    }

    /// Maps the collection's record files to its schemas in VS Code's workspace settings.
    /// - Throws: `BooksyncError.io` when the file or its folder cannot be written
    ///   (a link in either place is refused, never followed).
    package static func map(_ collection: CollectionDirectory) throws(BooksyncError) -> Outcome {
        let workspace = workspace(of: collection.paths.root)
        let path = workspace + "/.vscode/settings.json"
        let entries = entries(collection.editorSchemaFiles, root: collection.paths.root, workspace: workspace)
        var settings: Fields = [:]
        let existing: [UInt8]?
        do {
            // Neither the folder nor the file may be a link: not even read through one.
            try FileSystem.requireDirectoryOrAbsent(workspace + "/.vscode")
            try FileSystem.requireRegularOrAbsent(path, operation: "write")
            existing = FileSystem.exists(path) ? try FileSystem.readFile(path) : nil
        } catch {
            throw .io(error)
        }
        if let existing {
            do throws(JSONSyntaxError) {
                // Plain JSON: `{"$timestamp": …}` there is the user's text, not a record value.
                guard case .map(let top) = try JSONParser.parse(existing, decodeTags: false) else {
                    throw JSONSyntaxError(position: SourcePosition(line: 1, column: 1), message: "the settings are not a JSON object")
                }
                settings = top
            } catch {
                let snippet = CanonicalJSON.encode(["json.schemas": .array(entries)])
                return .needsHand(path: path, reason: "\(error.position): \(error.message)",
                                  snippet: String(decoding: snippet, as: UTF8.self))
            }
        }
        let result = try merged(settings, entries: entries)
        if existing != nil, result == settings { return .unchanged(path: path) }
        try BooksyncError.io { () throws(FileSystemError) in
            try FileSystem.createDirectory(workspace + "/.vscode")
            try FileSystem.writeAtomically(CanonicalJSON.encode(result), to: path)
        }
        return .written(path: path, created: existing == nil)
    }
}
