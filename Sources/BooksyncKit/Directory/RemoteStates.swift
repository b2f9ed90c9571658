import BooksyncCore

/// Where a collection keeps each remote's sync state, and which remote the
/// environment implies when a command names none: the rules
/// `CollectionDirectory.selectingRemote` applies.
struct RemoteStates {
    /// The collection's paths (only those of `.booksync` itself are used).
    let paths: CollectionPaths
    /// The collection's config: its remote is origin's target when the
    /// collection was opened for origin, and the selected remote's once
    /// `CollectionDirectory.selecting` chose another (only names and state
    /// folders are taken from `origin` then, never its target).
    let config: CollectionConfig

    /// The name of the emulator's own state when no remote names the emulator.
    static let implicitEmulator = RemoteList.emulator

    /// Origin as config.json names it.
    var origin: SelectedRemote {
        SelectedRemote(name: RemoteList.origin, target: config.remote, endpoint: nil, sharesState: true, reason: nil)
    }

    /// The folder of a remote's sync state: `.booksync` for origin,
    /// `.booksync/remotes/NAME` when shared, `.booksync/local/NAME` when not.
    func directory(of remote: SelectedRemote) -> String {
        remote.isOrigin ? paths.state : parent(of: remote) + "/" + remote.name
    }

    /// The folder that holds the states of remotes like `remote` (not origin):
    /// `.booksync/remotes` for committed ones, `.booksync/local` for the rest.
    private func parent(of remote: SelectedRemote) -> String {
        remote.sharesState ? paths.sharedRemoteStates : paths.localRemoteStates
    }

    /// Makes `remote`'s state folder on its first save, with a `.gitignore`
    /// that keeps what must not be committed out of git even in a collection
    /// whose `.booksync/.gitignore` predates remotes.
    func createDirectory(of remote: SelectedRemote) throws(FileSystemError) {
        guard !remote.isOrigin else { return }
        let parent = parent(of: remote)
        let state = directory(of: remote)
        // Never through a link, whatever was checked when the command started.
        try FileSystem.requireDirectoryOrAbsent(parent)
        try FileSystem.requireDirectoryOrAbsent(state)
        if FileSystem.isDirectory(state) { return }
        if !FileSystem.isDirectory(parent) {
            try FileSystem.createDirectory(parent)
            if !remote.sharesState { try FileSystem.writeAtomically(Array("*\n".utf8), to: parent + "/.gitignore") }
        }
        try FileSystem.createDirectory(state)
        if remote.sharesState { try FileSystem.writeAtomically(Array("/conflicts/\n".utf8), to: state + "/.gitignore") }
    }

    /// The remote `FIRESTORE_EMULATOR_HOST` (`host`) implies when no remote is named (see
    /// `CollectionDirectory.selectingRemote`).
    func emulatorRemote(_ remotes: RemoteList, host: String) throws(BooksyncError) -> SelectedRemote {
        let recorded = try originHeader()
        // Never synced, or synced with this very emulator. A base with records
        // but no target (an older booksync) may be production's: not origin's then.
        if recorded.target == nil && !recorded.hasRecords || recorded.target?.emulatorHost == host { return origin }
        // A committed host is used only when it is the one the user set.
        let emulators = remotes.remotes.filter { remote in
            if case .emulator(let named) = remote.endpoint { named == nil || named == host } else { false }
        }
        if emulators.count == 1 {
            return SelectedRemote(emulators[0], reason: "FIRESTORE_EMULATOR_HOST is set and '\(emulators[0].name)' is this collection's emulator remote")
        }
        return implicitEmulatorRemote(reason: "FIRESTORE_EMULATOR_HOST is set, so this uses the emulator's own sync state "
            + "(.booksync/local/\(Self.implicitEmulator)), not origin's base")
    }

    /// Origin's target on the emulator of `FIRESTORE_EMULATOR_HOST`, with a
    /// local state of its own: `--remote emulator` when no remote has that name.
    func implicitEmulatorRemote(reason: String?) -> SelectedRemote {
        SelectedRemote(name: Self.implicitEmulator, target: config.remote, endpoint: .emulator(host: nil), sharesState: false, reason: reason)
    }

    /// Origin's recorded target and whether its base has records, from the
    /// manifest's first lines when it is canonical: choosing a remote must not
    /// cost a read of a million-record manifest. Any other manifest is read whole.
    func originHeader() throws(BooksyncError) -> (target: TargetIdentity?, hasRecords: Bool) {
        let originPaths = CollectionPaths(root: paths.root)
        let path = originPaths.manifest
        let prefix: [UInt8]
        do {
            prefix = try FileSystem.readFilePrefix(path, count: 4096)
        } catch {
            if error.isNotFound { return (nil, false) }
            throw .io(error)
        }
        var target: TargetIdentity?
        for line in prefix.split(separator: 0x0A, omittingEmptySubsequences: false).dropFirst() {
            let text = String(decoding: line, as: UTF8.self)
            if text == "  \"records\": {}" { return (target, false) }
            if text == "  \"records\": {" { return (target, true) }
            if text.hasPrefix("  \"target\": \""), text.hasSuffix("\","),
               let identity = TargetIdentity(rawValue: String(text.dropFirst(13).dropLast(2))) {
                target = identity
            } else if !text.hasPrefix("  \"") || target != nil && text.hasPrefix("  \"target\"") {
                // Not the canonical header (git's conflict markers, a hand
                // edit, two targets): the full reading decides, and explains.
                break
            }
        }
        let manifest = try ManifestFile(paths: originPaths, rules: config.rules, remoteName: RemoteList.origin).load()
        return (manifest.target, !manifest.entries.isEmpty)
    }
}
