/// Where a named remote's requests go.
package enum RemoteEndpoint: Sendable, Equatable {
    /// Firestore in production (or `BOOKSYNC_FIRESTORE_URL`, which stands in for it).
    case production
    /// The Firestore emulator at a loopback `host:port`, or, without one, at
    /// `FIRESTORE_EMULATOR_HOST`.
    case emulator(host: String?)
}

/// A remote besides origin: another Firestore target the collection syncs
/// with (staging, the emulator), with its own sync state.
package struct RemoteDefinition: Sendable, Equatable {
    /// Its name, as `--remote NAME` gives it (`RemoteList.problem(withName:)`).
    package let name: String
    /// Project, database and collection path.
    package var target: FirestoreTarget
    /// Production Firestore or the emulator.
    package var endpoint: RemoteEndpoint
    /// Whether its sync state is committed (`.booksync/remotes/NAME`) or kept
    /// on this machine only (`.booksync/local/NAME`, the default for the
    /// emulator, whose data is per machine).
    package var sharesState: Bool

    /// A definition, taken as it is; `RemoteList.decode` checks one read from a file.
    package init(name: String, target: FirestoreTarget, endpoint: RemoteEndpoint, sharesState: Bool) {
        self.name = name
        self.target = target
        self.endpoint = endpoint
        self.sharesState = sharesState
    }
}

/// The remotes of `.booksync/remotes.json`, sorted by name. Origin is not
/// among them: it is config.json's `remote`.
///
/// The file comes with a clone, so it may name only production Firestore or
/// a loopback emulator: a URL from a stranger's file would receive the user's
/// access token. Another deployment of the API is reached only through the
/// user's own `BOOKSYNC_FIRESTORE_URL`.
package struct RemoteList: Sendable, Equatable {
    /// The `"version"` this booksync writes and reads.
    package static let currentVersion: Int64 = 1
    /// The name of config.json's remote.
    package static let origin = "origin"
    /// The remote `FIRESTORE_EMULATOR_HOST` selects when no remote of this name is defined.
    package static let emulator = "emulator"
    /// Why a remote called `emulator` must be one (`problem(withName:endpoint:)`), for sentences that add what to do.
    package static let emulatorIsReserved = "the name 'emulator' is reserved for the Firestore emulator (--remote emulator always means one)"

    /// The most remotes a collection may define. Every command reads
    /// remotes.json, which may come with a clone; a collection has a handful
    /// (staging, an emulator), and thousands would only slow every command.
    package static let maximumRemotes = 1_000
    /// The most bytes booksync reads of remotes.json: room for `maximumRemotes`
    /// several times over, so that a cloned file of any size costs nothing.
    package static let maximumFileBytes = 1 << 20

    /// The remotes, sorted by name (bytes).
    package private(set) var remotes: [RemoteDefinition]

    /// A list of these remotes (sorted here).
    package init(_ remotes: [RemoteDefinition] = []) {
        self.remotes = remotes.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// The remote called `name`, if any.
    package subscript(name: String) -> RemoteDefinition? { remotes.first { $0.name == name } }

    /// Adds or replaces the remote of `definition.name`.
    package mutating func set(_ definition: RemoteDefinition) {
        self = RemoteList(remotes.filter { $0.name != definition.name } + [definition])
    }

    /// Removes a remote; false when there is none of that name.
    package mutating func remove(_ name: String) -> Bool {
        let before = remotes.count
        remotes.removeAll { $0.name == name }
        return remotes.count != before
    }

    /// Why `name` cannot name a remote, or nil. It becomes a folder name and
    /// a word on command lines: a letter or digit first, then letters,
    /// digits, `.`, `_` and `-`, at most 64 bytes.
    package static func problem(withName name: String) -> String? {
        guard let first = name.utf8.first, name.utf8.count <= 64 else { return "a remote name has 1 to 64 characters" }
        let isAlphanumeric = { (b: UInt8) in (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) }
        guard isAlphanumeric(first), name.utf8.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else { return "remote name '\(name)' must start with a letter or digit and hold only letters, digits, '.', '_' and '-'" }
        return nil
    }

    /// Why a remote called `name` cannot go to `endpoint`, or nil. `--remote
    /// emulator` is documented as the emulator's own state, so a remote of
    /// that name is an emulator or nothing: named so in a clone's remotes.json
    /// with production Firestore, it would send `status --remote emulator`
    /// (and a push) to a project the clone chose.
    package static func problem(withName name: String, endpoint: RemoteEndpoint) -> String? {
        name == emulator && endpoint == .production ? emulatorIsReserved : nil
    }

    /// Why `name` cannot be added beside these remotes, or nil: it differs
    /// from another remote, `origin` or `emulator` only in letter case.
    /// State folders are named after remotes, and macOS's file system
    /// ignores case, so `Staging` and `staging` would share one base there.
    package func caseClash(_ name: String) -> String? {
        var names = Self.reservedByLowercase
        for remote in remotes where remote.name != name { names[remote.name.lowercased()] = remote.name }
        return Self.caseClash(name, among: names)
    }

    /// `origin` and `emulator` by their lower case, where `caseClash(_:among:)`
    /// starts; each remote's name joins them.
    private static let reservedByLowercase = [origin: origin, emulator: emulator]

    /// `caseClash(_:)` against names kept by their lower case: one look-up,
    /// so reading a file of many remotes costs each a constant, not the list.
    private static func caseClash(_ name: String, among names: [String: String]) -> String? {
        guard let other = names[name.lowercased()], other != name else { return nil }
        return "remote name '\(name)' differs from '\(other)' only in letter case; on macOS they would share one sync state"
    }

    /// Why these remotes cannot take one more, or nil.
    package var problemAddingOne: String? {
        remotes.count < Self.maximumRemotes ? nil
            : "this collection has \(remotes.count) remotes, the most booksync reads (\(Self.maximumRemotes)); remove one first"
    }

    /// Why an emulator host from the remotes file cannot be used, or nil:
    /// `host:port` on a loopback host.
    package static func problem(withEmulatorHost host: String) -> String? {
        guard let colon = host.lastIndex(of: ":"), let port = Int(host[host.index(after: colon)...]), (1...65535).contains(port) else {
            return "emulator host '\(host)' must be HOST:PORT, e.g. 127.0.0.1:8080"
        }
        let name = host[..<colon]
        guard ["127.0.0.1", "localhost", "[::1]"].contains(name) else {
            return "emulator host '\(host)' is not a loopback address; a committed file may name only 127.0.0.1, localhost or [::1] "
                + "(set FIRESTORE_EMULATOR_HOST yourself for another host)"
        }
        return nil
    }

    /// Why an emulator remote's state cannot be committed.
    package static let emulatorStateIsLocal = "an emulator's sync state is local: its data is per machine, and a committed base "
        + "would be applied to every teammate's emulator"

    /// The canonical JSON of remotes.json.
    package func encoded() -> [UInt8] {
        var entries: Fields = [:]
        for remote in remotes {
            var fields: Fields = [
                "project": .string(remote.target.project),
                "database": .string(remote.target.database),
                "collection": .string(remote.target.collectionPath),
                "state": .string(remote.sharesState ? "shared" : "local"),
            ]
            switch remote.endpoint {
            case .production: fields["endpoint"] = .string("production")
            case .emulator(let host):
                fields["endpoint"] = .string("emulator")
                if let host { fields["emulatorHost"] = .string(host) }
            }
            entries[remote.name] = .map(fields)
        }
        return CanonicalJSON.encode(["version": .integer(Self.currentVersion), "remotes": .map(entries)], leadingKeys: ["version"])
    }

    /// Reads remotes.json, checking every part as config.json's remote is checked.
    /// - Throws: `StateFileError` naming the remote and key; the caller adds the file name.
    package static func decode(_ bytes: [UInt8]) throws(StateFileError) -> RemoteList {
        let top: Fields
        do {
            top = try JSONParser.parseObject(bytes)
        } catch {
            throw StateFileError(position: error.position, message: error.message)
        }
        guard case .integer(let version)? = top["version"], version == currentVersion else {
            throw StateFileError(message: "\"version\" must be \(currentVersion) (this booksync reads version \(currentVersion))")
        }
        guard case .map(let entries)? = top["remotes"] else { throw StateFileError(message: "missing \"remotes\" object") }
        guard entries.count <= maximumRemotes else {
            throw StateFileError(message: "\(entries.count) remotes are defined; booksync reads at most \(maximumRemotes) "
                + "(every command reads this file, and a collection needs a handful): remove the ones not in use")
        }
        var remotes: [RemoteDefinition] = []
        var names = reservedByLowercase
        // In name order, so that the same file always gets the same first complaint.
        for name in entries.keys.sorted(by: CanonicalJSON.utf8Less) {
            if let problem = problem(withName: name) { throw StateFileError(message: problem) }
            guard name != origin else { throw StateFileError(message: "'origin' is config.json's remote; name this one differently") }
            guard case .map(let fields)? = entries[name] else { throw StateFileError(message: "remote '\(name)' must be an object") }
            let defined = try definition(name, fields)
            if let clash = caseClash(name, among: names) { throw StateFileError(message: clash) }
            names[name.lowercased()] = name
            remotes.append(defined)
        }
        return RemoteList(remotes)
    }

    private static func definition(_ name: String, _ fields: Fields) throws(StateFileError) -> RemoteDefinition {
        func text(_ key: String) throws(StateFileError) -> String? {
            guard let value = fields[key] else { return nil }
            guard case .string(let s) = value, !s.isEmpty else { throw StateFileError(message: "remote '\(name)': \"\(key)\" must be a non-empty string") }
            return s
        }
        guard let project = try text("project"), let collection = try text("collection") else {
            throw StateFileError(message: "remote '\(name)' needs \"project\" and \"collection\"")
        }
        if let problem = FirestoreTarget.problem(withProject: project) { throw StateFileError(message: "remote '\(name)': \(problem)") }
        let database = try text("database") ?? "(default)"
        if let problem = FirestoreTarget.problem(withDatabase: database) { throw StateFileError(message: "remote '\(name)': \(problem)") }
        if let problem = FirestoreTarget.validateCollectionPath(collection) { throw StateFileError(message: "remote '\(name)': \(problem)") }
        let endpoint: RemoteEndpoint
        switch try text("endpoint") ?? "production" {
        case "production": endpoint = .production
        case "emulator":
            let host = try text("emulatorHost")
            if let host, let problem = problem(withEmulatorHost: host) { throw StateFileError(message: "remote '\(name)': \(problem)") }
            endpoint = .emulator(host: host)
        case let other:
            throw StateFileError(message: "remote '\(name)': endpoint '\(other)' is neither \"production\" nor \"emulator\" "
                + "(another URL is reached only through BOOKSYNC_FIRESTORE_URL, never from a committed file)")
        }
        let sharesState: Bool
        switch try text("state") {
        case nil: sharesState = endpoint == .production
        case "shared"?: sharesState = true
        case "local"?: sharesState = false
        case let other?: throw StateFileError(message: "remote '\(name)': \"state\" must be \"shared\" or \"local\", not '\(other)'")
        }
        if sharesState, endpoint != .production { throw StateFileError(message: "remote '\(name)': \(emulatorStateIsLocal)") }
        if let problem = problem(withName: name, endpoint: endpoint) {
            throw StateFileError(message: "remote '\(name)': \(problem), but this one names production Firestore; "
                + "give it \"endpoint\": \"emulator\", or another name")
        }
        return RemoteDefinition(name: name, target: FirestoreTarget(project: project, database: database, collectionPath: collection),
                                endpoint: endpoint, sharesState: sharesState)
    }
}
