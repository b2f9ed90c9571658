import BooksyncCore
@_spi(Remote) import BooksyncKit
import Synchronization

/// A database as a workspace (the manual's WholeProject article): one folder per root
/// collection, each an ordinary collection whose subcollections were
/// discovered (`FirestoreRemote.discover`), and `.booksync-workspace.json`
/// at the top naming the database, so that `status` and `discover` there
/// know where to look for what appeared since.
enum DatabaseLayout {
    /// The workspace file, next to the collection folders.
    static let markerName = ".booksync-workspace.json"
    /// The most of it booksync reads (it names a project and a database).
    static let markerBytes = 64 << 10

    /// A root collection and the folder it becomes.
    struct Root: Sendable {
        /// The collection id, as Firestore has it.
        let collection: String
        /// Its folder name: the id encoded as record ids are (`café` is
        /// `caf%C3%A9`, `.booksync` is `%2Ebooksync`, `a b` is `a%20b`), so
        /// never `.`, `..`, a dot name or a path; nil when it cannot be one.
        let folder: String?
        /// Why it cannot be cloned, when it cannot.
        let problem: String?

        init(_ collection: String) {
            self.collection = collection
            if let problem = FirestoreTarget.validateCollectionPath(collection) ?? Subcollections.problem(withPath: collection) {
                folder = nil
                self.problem = problem
            } else {
                folder = RecordID.folderName(ofCollection: collection)
                problem = nil
            }
        }
    }

    /// One root collection and what lies below it.
    struct Found: Sendable {
        let root: Root
        let tree: DiscoveredCollection

        /// The subcollection paths to configure, or why the collection cannot have them all.
        var configuration: (paths: [String], refused: [(path: String, problem: String)], problem: String?) {
            let (paths, refused) = tree.configurable
            return (paths, refused, Subcollections.problem(withPaths: paths))
        }
    }

    // MARK: the workspace file

    /// What `.booksync-workspace.json` holds: the database, and per root
    /// collection the difference `status` expects between its two counts
    /// (everything below the collection, and what its configured paths'
    /// queries count) when nothing new has appeared: not 0 when documents
    /// lie in paths booksync cannot sync (a `:` in an id), or in unsynced
    /// paths ending in a synced id. Without it, such a collection would have
    /// its names listed by every `status`.
    struct Marker: Sendable, Equatable {
        let project: String
        let database: String
        var baseline: [String: Int] = [:]
    }

    /// The workspace file at `root`, if there is one.
    /// - Throws: `.damagedStateFile` for a file that is not one booksync wrote.
    static func readMarker(at root: String) throws(BooksyncError) -> Marker? {
        let path = root + "/" + markerName
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path, limit: markerBytes)
        } catch {
            if error.isNotFound { return nil }
            if error.isTooLarge { throw .damagedStateFile(path: path, StateFileError(message: "the file is larger than 64 KiB")) }
            throw .io(error)
        }
        let fields: Fields
        do {
            fields = try JSONParser.parseObject(bytes)
        } catch {
            throw .damagedStateFile(path: path, StateFileError(position: error.position, message: error.message))
        }
        guard case .integer(1)? = fields["version"], case .map(let remote)? = fields["remote"], case .string("firestore")? = remote["type"],
              case .string(let project)? = remote["project"], case .string(let database)? = remote["database"] else {
            throw .damagedStateFile(path: path, StateFileError(message: "expected {\"version\": 1, \"remote\": {\"type\": \"firestore\", \"project\": …, \"database\": …}}"))
        }
        if let problem = FirestoreTarget.problem(withProject: project) ?? FirestoreTarget.problem(withDatabase: database) {
            throw .damagedStateFile(path: path, StateFileError(message: problem))
        }
        var marker = Marker(project: project, database: database)
        if case .map(let baseline)? = fields["baseline"] {
            for (collection, value) in baseline {
                guard case .integer(let difference) = value else {
                    throw .damagedStateFile(path: path, StateFileError(message: "baseline.\(collection) must be an integer"))
                }
                marker.baseline[collection] = Int(difference)
            }
        }
        return marker
    }

    static func writeMarker(_ marker: Marker, at root: String) throws(BooksyncError) {
        var fields: Fields = [
            "version": .integer(1),
            "remote": .map(["type": .string("firestore"), "project": .string(marker.project), "database": .string(marker.database)]),
        ]
        let baseline = marker.baseline.filter { $0.value != 0 }
        if !baseline.isEmpty { fields["baseline"] = .map(baseline.mapValues { .integer(Int64($0)) }) }
        do {
            try FileSystem.writeAtomically(CanonicalJSON.encode(fields, leadingKeys: ["version"]), to: root + "/" + markerName, durable: true)
        } catch {
            throw .io(error)
        }
    }

    /// The difference `status` sees between a collection's two counts
    /// (`FirestoreRemote.descendantCount` minus `configuredCount`) for the
    /// documents of `tree` when `paths` are configured: every document
    /// below, minus those its queries count (its own; per group id, every
    /// path ending in it, configured or not; its own documents again when a
    /// group id is the collection's own id, as its range takes them in).
    static func countDifference(_ tree: DiscoveredCollection, paths: [String]) -> Int {
        let ids = Set(Subcollections(entries: paths.map { Subcollections.Entry(path: $0) }).groupIDs.map { Array($0.utf8) })
        func last(_ path: String) -> [UInt8] {
            let segments = path.split(separator: "/", omittingEmptySubsequences: false)
            return Array((segments.last ?? "").utf8)
        }
        var counted = tree.documents
        for (path, documents) in tree.subcollections where ids.contains(last(path)) { counted += documents }
        if ids.contains(last(tree.path)) { counted += tree.documents }
        return tree.total - counted
    }

    // MARK: discovery

    /// What lies below each of `collections` (root collection ids), several
    /// at once, with a progress line; collections that cannot be folders are
    /// not read. `found` keeps the order of `collections`.
    static func discover(_ collections: [String], remote: FirestoreRemote, context: CommandContext) async throws(RemoteError) -> (found: [Found], skipped: [Root]) {
        let roots = collections.map(Root.init)
        let readable = roots.filter { $0.folder != nil }
        let progress = context.progressDisplay()
        defer { progress.finish() }
        // One count for the whole discovery: its "listing" phase runs across the collections.
        let listed = Tally()
        let update = progress.update
        let trees = try await remote.discover(readable.map(\.collection)) { count in
            // Under the count's lock: listings running at once show a total that only grows.
            listed.add(count) { update(SyncProgress(phase: "listing", done: $0, total: nil)) }
        }
        return (zip(readable, trees).map { Found(root: $0, tree: $1) }, roots.filter { $0.folder == nil })
    }

    /// The pull of a collection configured with `paths`, in billed reads:
    /// one per document and at least one per query (the collection's and one
    /// per distinct collection id the paths end in); more when a query's
    /// pages end exactly at a page boundary, hence "about".
    static func pullReads(_ tree: DiscoveredCollection, paths: [String]) -> (reads: Int, queries: Int) {
        var reads = max(1, tree.documents)
        let groups = Subcollections(entries: paths.map { Subcollections.Entry(path: $0) })
        for id in groups.groupIDs {
            let documents = paths.filter { $0 == id || $0.hasSuffix("/" + id) }.reduce(0) { $0 + (tree.subcollections[$1] ?? 0) }
            reads += max(1, documents)
        }
        return (reads, 1 + groups.groupIDs.count)
    }

    // MARK: printing

    /// The layout as folders: `books/ (2 documents)` and its subcollections below.
    static func printLayout(_ found: [Found], skipped: [Root], into folder: String, context: CommandContext) {
        for item in found {
            let (paths, refused, problem) = item.configuration
            let tree = item.tree
            let label: TerminalText = item.root.folder == item.root.collection ? "" : " (collection \(name: item.root.collection))"
            context.console.out("\(name: folder)\(name: item.root.folder ?? "")/\(label): \(documents(tree.documents))")
            for path in paths {
                context.console.out("  subcollection \(name: path): \(documents(tree.subcollections[path] ?? 0))")
            }
            for (path, why) in refused {
                context.console.err("booksync: warning: \(name: item.root.collection): subcollection \(name: path) (\(documents(tree.subcollections[path] ?? 0))) is left out: \(name: why)")
            }
            if let problem { context.console.err("booksync: error: \(name: item.root.collection): \(name: problem)") }
        }
        for root in skipped {
            context.console.err("booksync: warning: the root collection \(name: root.collection) is left out: \(name: root.problem ?? "")")
        }
    }

    /// `1 document`, `1,234 documents`.
    static func documents(_ count: Int) -> String {
        "\(grouped(count)) document\(count == 1 ? "" : "s")"
    }
}

/// A running count shared with the progress callback.
private final class Tally: Sendable {
    private let count = Mutex(0)
    /// Adds `more` and hands the new total to `show` before another add can.
    func add(_ more: Int, show: (Int) -> Void) { count.withLock { $0 += more; show($0) } }
}
