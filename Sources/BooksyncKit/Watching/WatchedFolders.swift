import BooksyncCore

/// The folders a watcher watches: the collection directory, and the folders
/// that hold subcollection records (`dune/reviews/`, deeper for nested
/// subcollections) with the document folders above them (`dune/`, where a
/// new `reviews` folder appears), found the way the scan finds them — real folders
/// only, links never followed, names starting with `.` (`.booksync`, `.git`)
/// skipped.
package enum WatchedFolders {
    /// Whether a change to the folder `path` (relative, without a trailing
    /// `/`) can change what a scan finds: a document folder that can hold
    /// subcollection folders, or a folder named like a record file (an
    /// invalid record).
    package static func folderMatters(_ path: String, subcollections: Subcollections) -> Bool {
        if path.hasSuffix(".json") { return true }
        return !subcollections.isEmpty && !path.hasPrefix(".")
    }

    /// The folders below `root` (relative to it, `""` for root itself) that
    /// can hold record files of the collection or of `subcollections`.
    package static func list(root: String, subcollections: Subcollections) -> [String] {
        var folders = [""]
        guard !subcollections.isEmpty else { return folders }
        // A subcollection path `reviews/likes` has its records in
        // DOC/reviews/ and DOC/reviews/R/likes/ (collection folders named as
        // the scan names them, `my%20reviews`): the names below alternate
        // between document folders (any) and collection folders (configured).
        // `paths`: the configured paths whose collection names match the
        // folders taken so far (`reviews` then `likes` for reviews/likes).
        func visit(_ folder: String, depth: Int, paths: [[String]]) {
            let names = (try? FileSystem.listDirectory(root + "/" + folder)) ?? []
            for name in names where !name.hasPrefix(".") {
                let relative = folder.isEmpty ? name : folder + "/" + name
                // Even depths are document folders (any name), odd ones collection folders named by a configured path.
                let level = depth / 2
                let below = depth % 2 == 1
                    ? paths.filter { $0.count > level && RecordID.folderName(ofCollection: $0[level]) == name }
                    : paths.filter { $0.count > level }
                guard !below.isEmpty, (try? FileSystem.stat(root + "/" + relative))?.kind == .directory else { continue }
                folders.append(relative)
                visit(relative, depth: depth + 1, paths: below)
            }
        }
        visit("", depth: 0, paths: subcollections.entries.map(\.segments))
        return folders
    }
}
