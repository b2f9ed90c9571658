/// The subcollections a collection directory syncs besides its top-level
/// documents (config `"subcollections"`, `init --subcollection`), each with
/// its own required fields (<doc:CollectionFormat>).
///
/// A path names collection ids from the collection down: `reviews` is
/// `books/*/reviews`, `reviews/likes` is `books/*/reviews/*/likes`. Nothing
/// is configured by default, and then no record id may contain `/`.
public struct Subcollections: Sendable, Equatable {
    /// One configured subcollection path and what its records must contain.
    public struct Entry: Sendable, Equatable {
        /// The collection ids from the collection down, joined with `/` (`reviews/likes`).
        public let path: String
        /// The required fields of this subcollection's records (none by default).
        public let schema: RecordSchema

        /// An entry; check the path first with `Subcollections.problem(withPath:)`.
        public init(path: String, schema: RecordSchema = .idOnly) {
            self.path = path
            self.schema = schema
        }

        /// The collection ids of `path`.
        package var segments: [String] { path.split(separator: "/", omittingEmptySubsequences: false).map(String.init) }
    }

    /// The configured paths, sorted by their bytes, each once.
    public let entries: [Entry]

    /// No subcollections: the behaviour of every collection that did not opt in.
    public static let none = Subcollections(entries: [])

    /// The given entries, sorted by path; a path given twice keeps its first entry.
    public init(entries: [Entry]) {
        var seen: Set<String> = []
        self.entries = entries.filter { seen.insert($0.path).inserted }.sorted { CanonicalJSON.utf8Less($0.path, $1.path) }
    }

    /// True when nothing is configured.
    public var isEmpty: Bool { entries.isEmpty }

    /// The entry of a subcollection path (`reviews/likes`), if it is configured.
    package func entry(forPath path: String) -> Entry? {
        entries.first { $0.path.utf8.elementsEqual(path.utf8) }
    }

    /// The collection ids that can follow `prefix` (collection ids from the
    /// collection down, e.g. `["reviews"]`) on the way to a configured path:
    /// the folders a scan looks into below a document folder at that depth,
    /// and nothing else, so the walk is only as deep as the config says.
    package func collectionIDs(after prefix: [String]) -> [String] {
        var found: [String] = []
        for entry in entries {
            let segments = entry.segments
            guard segments.count > prefix.count, Array(segments.prefix(prefix.count)) == prefix else { continue }
            let next = segments[prefix.count]
            if !found.contains(next) { found.append(next) }
        }
        return found
    }

    /// The deepest configured path, in collection ids (0 when none).
    package var maximumDepth: Int { entries.map { $0.segments.count }.max() ?? 0 }

    /// The most subcollection paths a collection may configure. Each costs a
    /// query (at least one billed read) on every `status`, so a config.json
    /// in a cloned collection must not be able to multiply that cost without bound.
    package static let maximumPaths = 32

    /// Why `count` paths are too many, or nil.
    package static func problem(withCount count: Int) -> String? {
        count > maximumPaths
            ? "\(count) subcollection paths are configured; booksync syncs at most \(maximumPaths) (each costs a query on every status)" : nil
    }

    /// Why `path` cannot be a subcollection path, or nil. Each collection id
    /// must be a valid record id (it becomes a folder name with the same
    /// encoding) and may not contain `:`, which separates the path from the
    /// field in `init --subcollection-require PATH:FIELD:TYPE`, nor anything
    /// a terminal or an editor acts on instead of showing, as the collection's
    /// own path may not (`FirestoreTarget.validateCollectionPath`).
    package static func problem(withPath path: String) -> String? {
        if path.isEmpty { return "a subcollection path cannot be empty" }
        if let scalar = path.unicodeScalars.first(where: TerminalEscaping.isUnsafe) {
            return "subcollection path '\(TerminalEscaping.escapeName(TerminalEscaping.abbreviate(path)))' contains "
                + "\(TerminalEscaping.describeUnsafe(scalar)); a collection id must be visible text"
        }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            if segment.isEmpty { return "subcollection path '\(TerminalEscaping.abbreviate(path))' has an empty segment" }
            if segment.contains(":") { return "subcollection path '\(TerminalEscaping.abbreviate(path))' contains ':'" }
            do {
                _ = try RecordID(String(segment))
            } catch {
                return "subcollection path '\(TerminalEscaping.abbreviate(path))' has a segment that is not a valid collection id: \(error.message)"
            }
        }
        return nil
    }
}

extension Subcollections {
    /// The subcollections `init --subcollection PATH` (repeatable) and
    /// `init --subcollection-require PATH:FIELD:TYPE` (repeatable) describe.
    /// PATH ends at the first `:` (paths cannot contain one); FIELD:TYPE is
    /// read as `--require` reads it. A requirement for a path not given with
    /// `--subcollection` is an error, not a silent opt-in.
    /// - Throws: `RequirementSyntaxError` naming the first bad argument.
    package static func parse(paths: [String], requirements: [String]) throws(RequirementSyntaxError) -> Subcollections {
        if let problem = problem(withCount: paths.count) { throw RequirementSyntaxError(problem) }
        var ordered: [String] = []
        for path in paths {
            if let problem = problem(withPath: path) { throw RequirementSyntaxError(problem) }
            guard !ordered.contains(path) else { throw RequirementSyntaxError("the subcollection '\(path)' is given twice") }
            ordered.append(path)
        }
        var required: [String: [FieldRequirement]] = [:]
        for text in requirements {
            guard let colon = text.firstIndex(of: ":") else {
                throw RequirementSyntaxError("'\(text)' needs PATH:FIELD:TYPE, such as reviews:rating:integer")
            }
            let path = String(text[..<colon])
            guard ordered.contains(path) else {
                throw RequirementSyntaxError("'\(text)' names the subcollection '\(path)', which no --subcollection gives")
            }
            let requirement = try FieldRequirement.parse(String(text[text.index(after: colon)...]))
            guard !(required[path] ?? []).contains(where: { $0.name == requirement.name }) else {
                throw RequirementSyntaxError("the field '\(requirement.name)' of subcollection '\(path)' is given twice")
            }
            required[path, default: []].append(requirement)
        }
        return Subcollections(entries: ordered.map { Entry(path: $0, schema: RecordSchema(requiredFields: required[$0] ?? [])) })
    }
}
