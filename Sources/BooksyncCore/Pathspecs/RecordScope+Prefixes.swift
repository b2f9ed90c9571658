/// The id prefixes a remote lists instead of every name, for folder and glob
/// pathspecs: `dune*` needs only the names from `dune` up to `dunf`, so a
/// scoped status of a few records in a large collection reads a few names,
/// not all of them (each is a billed read).
extension RecordScope {
    /// Raw-id prefixes that cover every record this scope can select: each
    /// selected record's raw id starts with one of them (a remote may list a
    /// superset; the scope narrows it after). nil when some pattern has no
    /// literal start (`*.json`, `**/r1.json`, `%C3*`), so only a listing of
    /// every name covers it. A prefix that a shorter one covers is dropped.
    package var listingPrefixes: [String]? {
        guard !patterns.isEmpty else { return nil }
        var prefixes: [String] = []
        for pattern in patterns {
            let prefix = switch pattern.kind {
            case .record(let id): id.rawValue
            case .folder(let folder): Self.rawPrefix(ofPathStart: Substring(folder + "/"))
            case .glob(let glob): Self.rawPrefix(ofPathStart: glob.prefix { $0 != "*" && $0 != "?" })
            }
            guard !prefix.isEmpty else { return nil }
            prefixes.append(prefix)
        }
        prefixes.sort { CanonicalJSON.utf8Less($0, $1) }
        var kept: [String] = []
        for prefix in prefixes where !(kept.last.map { prefix.utf8.starts(with: $0.utf8) } ?? false) {
            kept.append(prefix)
        }
        return kept
    }

    /// The longest raw-id prefix of every record whose file path starts with
    /// `start`. A file path is the id with each byte either kept or written
    /// `%XX`, plus `.json`; so up to the first `%` the bytes are the id's own,
    /// except that a final `.`, `.j` … `.json` may be the file name's suffix
    /// (`dune.js*` matches `dune.json`, whose id is `dune`).
    static func rawPrefix(ofPathStart start: Substring) -> String {
        var prefix = start.prefix { $0 != "%" }
        let lastSegment = prefix.lastIndex(of: "/").map { prefix[prefix.index(after: $0)...] } ?? prefix
        if let dot = lastSegment.lastIndex(of: "."), ".json".hasPrefix(lastSegment[dot...]) {
            prefix = prefix[..<dot]
        }
        return String(prefix)
    }
}
