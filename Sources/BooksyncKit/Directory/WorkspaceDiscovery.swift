import BooksyncCore

/// The collections below a folder that is not itself inside one (a data
/// repository holding `books/`, `authors/`, …), for workspace commands
/// (the manual's Scopes article).
///
/// The folder may be a stranger's clone, so the search is bounded and never
/// follows a link: dot folders (`.git`, `.booksync` of nothing) are skipped,
/// a collection is not searched further (its folders are its subcollections),
/// at most `maximumDepth` levels and `maximumEntries` names are looked at.
package enum WorkspaceDiscovery {
    /// Levels below the workspace folder that may hold a collection.
    package static let maximumDepth = 6
    /// Names looked at in all, so a huge tree costs bounded time.
    package static let maximumEntries = 200_000

    /// The collections' paths relative to `root`, in path (byte) order.
    /// - Throws: `.invalidArgument` when the search passes `maximumEntries`.
    package static func collections(below root: String) throws(BooksyncError) -> [String] {
        var found: [String] = []
        var level = [""]
        var seen = 0
        for _ in 0...maximumDepth {
            var next: [String] = []
            for relative in level {
                let folder = relative.isEmpty ? root : root + "/" + relative
                guard let names = try? FileSystem.listDirectory(folder) else { continue }
                seen += names.count
                guard seen <= maximumEntries else {
                    throw .invalidArgument("more than \(maximumEntries) names below \(root) were searched for collections; "
                        + "run booksync inside a collection, or with -C pointing at one")
                }
                for name in names where !name.hasPrefix(".") {
                    let path = relative.isEmpty ? name : relative + "/" + name
                    guard (try? FileSystem.stat(root + "/" + path))?.kind == .directory else { continue }
                    if (try? FileSystem.stat(root + "/" + path + "/.booksync")) != nil {
                        found.append(path)  // opened later, where a linked .booksync is refused by name
                    } else {
                        next.append(path)
                    }
                }
            }
            level = next
            if level.isEmpty { break }
        }
        return found.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
