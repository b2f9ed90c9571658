import BooksyncCore

/// The remote a command works with, and where its sync state lives.
package struct SelectedRemote: Sendable, Equatable {
    /// `origin`, a name from remotes.json, or `emulator` for the emulator's
    /// own state that `FIRESTORE_EMULATOR_HOST` selects (see `CollectionDirectory.selectingRemote`).
    package let name: String
    /// Its project, database and collection.
    package let target: FirestoreTarget
    /// Nil for origin, whose endpoint the environment decides as it always has.
    package let endpoint: RemoteEndpoint?
    /// Whether the state is committed.
    package let sharesState: Bool
    /// Why booksync chose this remote when the command named none; nil when
    /// it was named, or is origin as usual. Shown in the status header.
    package let reason: String?

    /// True for config.json's remote, whose state is `.booksync` itself.
    package var isOrigin: Bool { name == RemoteList.origin }

    /// The environment to resolve this remote's `FirestoreEndpoint` from:
    /// an emulator remote's host as `FIRESTORE_EMULATOR_HOST`; a production
    /// remote refuses a set `FIRESTORE_EMULATOR_HOST` rather than quietly
    /// ignoring what the user set for every Firebase tool.
    package func endpointEnvironment(_ environment: [String: String]) throws(BooksyncError) -> [String: String] {
        var result = environment
        let emulatorHost = environment[EnvironmentVariable.emulatorHost].flatMap { $0.isEmpty ? nil : $0 }
        switch endpoint {
        case nil:
            break
        case .production?:
            if let emulatorHost {
                throw .invalidArgument("remote '\(name)' is production Firestore, but FIRESTORE_EMULATOR_HOST=\(emulatorHost) is set; "
                    + "unset it to use '\(name)', or name an emulator remote")
            }
        case .emulator(let host)?:
            guard let host = host ?? emulatorHost else {
                throw .invalidArgument("remote '\(name)' is the emulator but names no host, and FIRESTORE_EMULATOR_HOST is not set; "
                    + "set it, or run 'booksync remote add \(name) --emulator-host 127.0.0.1:PORT'")
            }
            result[EnvironmentVariable.emulatorHost] = host
        }
        return result
    }
}

extension CollectionDirectory {
    /// Where each remote's sync state lives, and which remote the environment implies.
    var remoteStates: RemoteStates { RemoteStates(paths: paths, config: config) }

    /// The remotes of `.booksync/remotes.json` (none when it is absent).
    package func loadRemotes() throws(BooksyncError) -> RemoteList {
        guard let bytes = try StateFileCaps.read(paths.remotes, limit: RemoteList.maximumFileBytes,
                                                 holds: "room for its \(RemoteList.maximumRemotes) remotes several times over") else {
            return RemoteList()
        }
        do {
            return try RemoteList.decode(bytes)
        } catch {
            if GitConflictMarkers.found(in: bytes) { throw .unfinishedGitMerge(path: paths.remotes) }
            throw .damagedStateFile(path: paths.remotes, error)
        }
    }

    /// Writes remotes.json (atomically: it is committed and read by every command).
    package func saveRemotes(_ list: RemoteList) throws(BooksyncError) {
        try BooksyncError.io { () throws(FileSystemError) in
            try FileSystem.writeAtomically(list.encoded(), to: paths.remotes, durable: true)
        }
    }

    /// The stored conflicts' folder relative to the collection, as messages name it (`.booksync/conflicts`).
    package var relativeConflictsFolder: String { String(paths.conflicts.dropFirst(paths.root.count + 1)) }

    /// Where `definition`'s sync state lives, for `booksync remote`.
    package func syncStateDirectory(of definition: RemoteDefinition) -> String {
        remoteStates.directory(of: SelectedRemote(definition, reason: nil))
    }

    /// The other remotes (origin, each defined one, the emulator's own state)
    /// whose state holds an unresolved conflict of `id`: where `resolve`
    /// points when this remote has none. A state folder that is a link is skipped.
    package func otherRemotesWithConflict(_ id: RecordID) -> [String] {
        let defined = (try? loadRemotes())?.remotes ?? []
        var candidates = [remoteStates.origin] + defined.map { SelectedRemote($0, reason: nil) }
        if !defined.contains(where: { $0.name == RemoteStates.implicitEmulator }) { candidates.append(remoteStates.implicitEmulatorRemote(reason: nil)) }
        return candidates.filter { candidate in
            guard candidate.name != remote.name else { return false }
            let other = selecting(candidate)
            guard (try? other.paths.verifyStateKinds()) != nil else { return false }
            // Against that state's own base: a conflict it has moved past is no hint.
            return other.unresolvedConflict(id, base: try? other.manifestFile.load()) != nil
        }.map(\.name)
    }

    /// The folder of the emulator's own state (`--remote emulator` when no
    /// remote of `remotes` has that name), once a command has used it:
    /// `booksync remote` lists it with the remotes, since it is a base too.
    package func implicitEmulatorState(_ remotes: RemoteList) -> String? {
        guard remotes[RemoteStates.implicitEmulator] == nil else { return nil }
        let state = remoteStates.directory(of: remoteStates.implicitEmulatorRemote(reason: nil))
        return FileSystem.isDirectory(state) ? state : nil
    }

    /// This collection working with the remote `name`, or, with none named,
    /// the one the environment implies:
    ///
    /// - `FIRESTORE_EMULATOR_HOST` set: origin's state if it was never synced
    ///   or was synced with the emulator; else the one emulator remote of
    ///   remotes.json if there is exactly one; else the emulator's own local
    ///   state (`.booksync/local/emulator`), so that switching to the emulator
    ///   never applies production's base to it (or back).
    /// - otherwise origin.
    ///
    /// `emulator` names that emulator state when no remote is called so.
    ///
    /// Nothing is created; the state folder is made by the first save.
    package func selectingRemote(_ name: String?, environment: [String: String]) throws(BooksyncError) -> CollectionDirectory {
        let remotes = try loadRemotes()
        let selected: SelectedRemote
        if name == RemoteStates.implicitEmulator, remotes[RemoteStates.implicitEmulator] == nil {
            selected = remoteStates.implicitEmulatorRemote(reason: nil)
        } else if let name, name != RemoteList.origin {
            guard let definition = remotes[name] else {
                let known = ([RemoteList.origin] + remotes.remotes.map(\.name)).joined(separator: ", ")
                throw .invalidArgument("no remote named '\(name)' (this collection has: \(known)); 'booksync remote add \(name) …' adds one")
            }
            selected = SelectedRemote(definition, reason: nil)
        } else if name == nil, let host = environment[EnvironmentVariable.emulatorHost], !host.isEmpty {
            selected = try remoteStates.emulatorRemote(remotes, host: host)
        } else {
            selected = remoteStates.origin
        }
        let chosen = selecting(selected)
        try BooksyncError.io { () throws(FileSystemError) in
            // The selected state's folders, now that they are known: a link
            // planted at .booksync/local/NAME would otherwise take the manifest elsewhere.
            try chosen.paths.verifyStateKinds()
        }
        return chosen
    }

    /// This collection with `remote`'s target and sync state.
    func selecting(_ remote: SelectedRemote) -> CollectionDirectory {
        var config = config
        config.remote = remote.target
        return CollectionDirectory(paths: paths.withSyncState(remoteStates.directory(of: remote)), config: config,
                                   configFingerprint: configFingerprint, remote: remote)
    }

}

extension SelectedRemote {
    init(_ definition: RemoteDefinition, reason: String?) {
        self.init(name: definition.name, target: definition.target, endpoint: definition.endpoint, sharesState: definition.sharesState,
                  reason: reason)
    }
}

extension CollectionDirectory {
    /// Forgets the whole base of the selected remote: every entry, the change
    /// mark and the recorded target. The files stay; the next pull compares
    /// each with the remote by content (equal: recorded; different: a
    /// conflict), so nothing is deleted or overwritten because of the old base.
    package func forgetWholeBase(onStaleLock: (Int32) -> Void = { _ in }) throws(BooksyncError) -> Int {
        let lock = try self.lock(onStaleLock: onStaleLock)
        defer { lock.release() }
        var manifest = try manifestFile.load()
        let count = manifest.entries.count
        manifest.target = nil
        var base = BaseState(copies: baseCopies, manifest: manifest, configFingerprint: configFingerprint)
        for id in Array(manifest.entries.keys) { base.forget(id) }
        base.setChangeMark(nil)
        base.markChanged()
        try base.finish()
        return count
    }
}
