import BooksyncCore
@_spi(Remote) import BooksyncKit

/// The few git commands booksync runs: setting up the merge drivers, and git's
/// own line merge as the fallback for files that are not valid JSON.
enum GitCommand {
    /// One merge driver: the `.gitattributes` line that selects it (relative to
    /// the collection directory) and its `merge.<key>.*` settings.
    struct Driver {
        let key: String
        let attributesLine: String
        let name: String
        let command: String
    }

    /// Record files, field by field. `%P` (the path being merged) lets the
    /// driver check the merged `id` against the file name and read the
    /// collection's rules; installs from before it still work without it.
    /// `--` comes first because `%P` is a record's file name when the
    /// collection is the repository's top folder, and a Firebase push id
    /// (`-Nq1abc.json`) would otherwise read as an option: the driver would
    /// fail and git would keep our side whole, dropping their changes.
    static let recordDriver = Driver(
        key: "booksync", attributesLine: "/*.json merge=booksync",
        name: "booksync field-level merge of record files", command: "booksync merge-file -- %O %A %B %P")
    /// The manifest, record by record: branches that synced different records merge cleanly.
    /// `--` for a collection folder whose name starts with `-`, as for record files.
    static let manifestDriver = Driver(
        key: "booksync-manifest", attributesLine: "/.booksync/manifest.json merge=booksync-manifest",
        name: "booksync merge of the base manifest by record", command: "booksync merge-manifest -- %O %A %B %P")
    static let drivers = [recordDriver, manifestDriver]

    /// The `.gitattributes` lines of the record files of configured
    /// subcollections, one per path (`/*/reviews/*.json merge=booksync`,
    /// `/*/reviews/*/likes/*.json …`): `*` never matches `/`, so each line
    /// selects exactly one depth, as the scan does.
    static func subcollectionLines(_ subcollections: Subcollections) -> [String] {
        subcollections.entries.map { entry -> String in
            var pattern = "/"
            for collection in entry.segments {
                let folder: String = RecordID.folderName(ofCollection: collection)
                pattern += "*/" + folder + "/"
            }
            return pattern + "*.json merge=" + recordDriver.key
        }
    }

    /// Every `.gitattributes` line of a collection with these subcollections.
    static func attributesLines(_ subcollections: Subcollections) -> [String] {
        [recordDriver.attributesLine] + subcollectionLines(subcollections) + [manifestDriver.attributesLine]
    }

    /// The setup, as a user would type it.
    static func instructions(collectionRoot: String, subcollections: Subcollections = .none) -> [String] {
        var lines = ["To merge record files field by field in git too (and the manifest by record), run 'booksync init --git', or:"]
        for line in attributesLines(subcollections) {
            lines.append("  echo '\(line)' >> \(collectionRoot)/.gitattributes")
        }
        for driver in drivers {
            lines.append("  git config merge.\(driver.key).name '\(driver.name)'")
            lines.append("  git config merge.\(driver.key).driver '\(driver.command)'")
        }
        return lines
    }

    /// Writes `.gitattributes` in the collection directory and the drivers into
    /// the enclosing repository's config. Idempotent: `.gitattributes` lines
    /// already present (from an older install too) are kept, missing ones
    /// appended; the driver settings are set to this version's, which
    /// replaces an older install's command.
    static func install(collectionRoot: String, subcollections: Subcollections = .none) throws(BooksyncError) {
        let attributes = collectionRoot + "/.gitattributes"
        // Only a missing file counts as empty: one that cannot be read is an error, never replaced.
        var existing: String
        do {
            existing = String(decoding: try FileSystem.readFile(attributes), as: UTF8.self)
        } catch where error.isNotFound {
            existing = ""
        } catch {
            throw .io(error)
        }
        let present = Set(existing.split(separator: "\n").map { String($0).trimmingWhitespace })
        let missing = attributesLines(subcollections).filter { !present.contains($0) }
        if !missing.isEmpty {
            if !existing.isEmpty, !existing.hasSuffix("\n") { existing += "\n" }
            existing += missing.map { $0 + "\n" }.joined()
            do {
                try FileSystem.writeAtomically(Array(existing.utf8), to: attributes)
            } catch {
                throw .io(error)
            }
        }
        for driver in drivers {
            for (key, value) in [("merge.\(driver.key).name", driver.name), ("merge.\(driver.key).driver", driver.command)] {
                let status = run(["git", "-C", collectionRoot, "config", key, value])
                guard status == 0 else {
                    throw .invalidArgument("could not configure git in \(collectionRoot) (is it inside a git repository?): git config exited \(status)")
                }
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
