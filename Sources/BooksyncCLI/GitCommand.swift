import BooksyncKit

/// The few git commands booksync runs: setting up the merge driver, and git's
/// own line merge as the fallback for files that are not valid JSON.
enum GitCommand {
    /// `.gitattributes` line for the collection directory: record files only.
    static let attributesLine = "/*.json merge=booksync"
    static let driverName = "booksync field-level merge of record files"
    static let driverCommand = "booksync merge-file %O %A %B %P"

    /// The setup, as a user would type it.
    static func instructions(collectionRoot: String) -> [String] {
        [
            "To merge record files field by field in git too, run 'booksync init --git', or:",
            "  echo '\(attributesLine)' >> \(collectionRoot)/.gitattributes",
            "  git config merge.booksync.name '\(driverName)'",
            "  git config merge.booksync.driver '\(driverCommand)'",
        ]
    }

    /// Writes `.gitattributes` in the collection directory and the driver into
    /// the enclosing repository's config.
    static func install(collectionRoot: String) throws(BooksyncError) {
        let attributes = collectionRoot + "/.gitattributes"
        var existing = (try? FileSystem.readFile(attributes)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        if !existing.split(separator: "\n").contains(where: { String($0).trimmingWhitespace == attributesLine }) {
            if !existing.isEmpty, !existing.hasSuffix("\n") { existing += "\n" }
            existing += attributesLine + "\n"
            do {
                try FileSystem.writeAtomically(Array(existing.utf8), to: attributes)
            } catch {
                throw .io(error)
            }
        }
        for (key, value) in [("merge.booksync.name", driverName), ("merge.booksync.driver", driverCommand)] {
            let status = run(["git", "-C", collectionRoot, "config", key, value])
            guard status == 0 else {
                throw .invalidArgument("could not configure git in \(collectionRoot) (is it inside a git repository?): git config exited \(status)")
            }
        }
    }

    /// `git merge-file` on the three files: line-based, with conflict markers.
    static func lineMerge(base: String, ours: String, theirs: String) throws -> ExitCode {
        let status = run(["git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", ours, base, theirs])
        return status == 0 ? .success : .attention
    }

    @discardableResult
    static func run(_ arguments: [String]) -> Int32 {
        Subprocess.run(arguments).status
    }
}
