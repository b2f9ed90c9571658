import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `status --offline` in O(changes) while a watcher runs (`booksync watch`):
/// the last full scan's findings (`WatchedScan`) plus the files the watcher
/// saw change since that scan's token, each looked at again, and nothing
/// else listed, stat'ed or read.
///
/// Never wrong, only sometimes slower: whenever the watcher cannot vouch
/// (no watcher, lost events, a folder replaced), the manifest or config.json
/// changed, or a changed path is one this path does not handle (a folder, a
/// nested name that is not a record's), the full scan decides, and its
/// findings are kept under a fresh token for the next status.
struct WatchedStatus {
    /// The collection whose status is asked for.
    let collection: CollectionDirectory
    /// The socket of the watcher watching it.
    let socket: WatcherSocket

    private var paths: CollectionPaths { collection.paths }
    private var rules: RecordRules { collection.rules }
    private var manifestFile: ManifestFile { collection.manifestFile }

    /// What asking the watcher gave.
    enum Outcome {
        /// The status, from the changed files alone.
        case answered(SyncStatus)
        /// Look at everything, then keep what was found under `token` (nil:
        /// no watcher answers); `reason` says why, for `--verbose`.
        case scan(token: ChangeJournal.Token?, reason: String)
    }

    /// Most files a status looks at from the watcher's answer; past that a
    /// full scan is about as fast, and leaves a fresh record.
    static let maximumWatchedFiles = 10_000

    /// The status from the watcher's answer, or why a full scan is needed.
    func outcome() -> Outcome {
        let record = (try? FileSystem.readFile(socket.scanRecordPath)).flatMap(WatchedScan.decode)
        guard let reply = socket.ask(since: record?.token, layout: WatcherMessages.layout(rules.subcollections)) else {
            return .scan(token: nil, reason: "no watcher answers for this collection")
        }
        guard let token = reply.token else { return .scan(token: nil, reason: "the watcher is not watching: \(reply.problem ?? "")") }
        guard var record else { return .scan(token: token, reason: "the watcher has no earlier scan to start from") }
        guard case .changed(let changed)? = reply.answer else {
            if case .cannotVouch(let why)? = reply.answer { return .scan(token: token, reason: "the watcher cannot vouch: \(why)") }
            return .scan(token: token, reason: "the watcher gave no answer")
        }
        let stamp = manifestFile.stamp()
        guard record.manifest == paths.manifest, stamp.isKnown, stamp == record.manifestStamp else {
            return .scan(token: token, reason: "the base changed since the last scan")
        }
        guard record.fingerprint == collection.configFingerprint else { return .scan(token: token, reason: "config.json changed since the last scan") }
        // A pull runs, or one was killed: the base is the manifest plus its journal (`PullJournal`).
        guard !PullJournal(paths: paths).exists else { return .scan(token: token, reason: "a pull is running or was stopped before it saved") }
        switch statusFromChanges(&record, changed: changed) {
        case .success(var status):
            status.watcherNote = "the watcher vouched for all but \(status.filesRead) file\(status.filesRead == 1 ? "" : "s")"
            return .answered(status)
        case .failure(let problem):
            return .scan(token: token, reason: problem.reason)
        }
    }

    /// Keeps what a full scan found (`status`, under `token`) for the next status.
    /// Best effort: without it, the next status scans again.
    func record(_ status: SyncStatus, linkedFiles: [String], token: ChangeJournal.Token, manifestStamp: FileStamp,
                canonicalManifest: Bool) {
        // Without a record the next status scans too; an old one must not outlive the scan that replaced it.
        try? FileSystem.remove(socket.scanRecordPath)
        var differing: [WatchedScan.Differing] = []
        for record in status.records {
            // (A nested record the scan found blocked by its folder, a link or a
            // file, is looked at again by every status, and `lookAgain` gives up
            // on such a folder: the scan decides again.)
            let deleted = record.state == .localChange(.deleted)
            differing.append(WatchedScan.Differing(fileName: record.id.fileName, unusable: false, present: !deleted))
        }
        for file in status.unusableFiles {
            // A name that is not UTF-8 was listed with U+FFFD in it: no path spells it to look at it again.
            guard !file.fileName.contains("/"), !file.fileName.unicodeScalars.contains("\u{FFFD}") else { return }
            differing.append(WatchedScan.Differing(fileName: file.fileName, unusable: true, present: true, message: file.message))
        }
        // A record file with another hard link can be written through that
        // name, outside the watched folders, which raises no event here: it is
        // looked at again by every status, as if it differed.
        for fileName in linkedFiles where !differing.contains(where: { $0.fileName == fileName }) {
            differing.append(WatchedScan.Differing(fileName: fileName, unusable: false, present: true, linked: true))
        }
        guard differing.count <= WatchedScan.maximumDiffering, manifestStamp.isKnown else { return }
        let record = WatchedScan(token: token, manifest: paths.manifest, manifestStamp: manifestStamp, canonicalManifest: canonicalManifest,
                                 fingerprint: collection.configFingerprint, recordCount: status.recordCount, differing: differing)
        try? FileSystem.writeAtomically(record.encoded(), to: socket.scanRecordPath)
    }

    /// Why the changed files alone cannot give the status.
    struct Problem: Error {
        let reason: String
    }

    /// The status from `record` and the `changed` paths: every file the
    /// record lists and every changed one is looked at; the rest are as the
    /// record's scan found them (clean, or not a record).
    private func statusFromChanges(_ record: inout WatchedScan, changed: Set<String>) -> Result<SyncStatus, Problem> {
        var records: [String: RecordID] = [:]
        /// Unusable names, with the scan's reason when the record has it.
        var unusable: [String: String] = [:]
        var presentBefore: [String: Bool] = [:]
        /// Record files the scan found with other hard links.
        var knownLinked: Set<String> = []
        let collectionFolders = Set(rules.subcollections.entries.flatMap { $0.segments.map(RecordID.folderName(ofCollection:)) })
        for file in record.differing {
            if file.unusable {
                unusable[file.fileName] = file.message
            } else if let id = try? RecordID.fromRelativePath(file.fileName, subcollections: rules.subcollections) {
                records[file.fileName] = id
                presentBefore[file.fileName] = file.present
                if file.linked { knownLinked.insert(file.fileName) }
            } else {
                return .failure(Problem(reason: "the last scan's record names a file that is not a record's"))
            }
        }
        for path in changed {
            if path.hasSuffix("/") {
                let folder = String(path.dropLast())
                guard !WatchedFolders.folderMatters(folder, subcollections: rules.subcollections) else {
                    return .failure(Problem(reason: "the folder '\(folder)' was added, moved or removed"))
                }
                continue
            }
            do {
                guard let id = try RecordID.fromRelativePath(path, subcollections: rules.subcollections) else {
                    // A file, link or FIFO where a subcollection folder belongs is the scan's to report.
                    if collectionFolders.contains(FileSystem.split(path).name) {
                        return .failure(Problem(reason: "'\(path)' is where a subcollection folder belongs"))
                    }
                    // Another name for a record file's bytes (ln dune.json x): its writes raise events under this name only.
                    if let stat = try? FileSystem.stat(paths.root + "/" + path), stat.isRegularFile, stat.linkCount > 1 {
                        return .failure(Problem(reason: "'\(path)' has other hard links"))
                    }
                    continue
                }
                records[path] = id
            } catch {
                guard !path.contains("/") else {
                    return .failure(Problem(reason: "'\(path)' changed, and only a full scan can say what it is"))
                }
                if unusable[path] == nil { unusable[path] = "" }
            }
        }
        guard records.count + unusable.count <= Self.maximumWatchedFiles else {
            return .failure(Problem(reason: "more than \(Self.maximumWatchedFiles) files changed"))
        }
        if !records.isEmpty, !record.canonicalManifest {
            // The scan that made the record proved the tree clean without reading
            // the manifest: read it once now (far less than a scan), and remember.
            var canonical = false
            _ = try? manifestFile.load(canonical: &canonical)
            guard canonical, manifestFile.stamp() == record.manifestStamp else {
                return .failure(Problem(reason: "the manifest is not as booksync writes it, so it is read whole"))
            }
            record.canonicalManifest = true
            try? FileSystem.writeAtomically(record.encoded(), to: socket.scanRecordPath)
        }
        let lookup = records.isEmpty ? nil : ManifestLookup(path: paths.manifest)
        guard records.isEmpty || lookup != nil else {
            return .failure(Problem(reason: "the manifest is not as booksync writes it, so it is read whole"))
        }
        var statuses: [RecordStatus] = []
        var recordCount = record.recordCount
        var filesRead = 0
        for (fileName, id) in records {
            let base: BaseEntry?
            switch lookup!.find(id) {
            case .entry(let entry): base = entry
            case .absent: base = nil
            case .unknown: return .failure(Problem(reason: "the manifest is not as booksync writes it, so it is read whole"))
            }
            guard let (local, linked) = lookAgain(fileName, id: id) else {
                return .failure(Problem(reason: "'\(fileName)' could not be looked at alone"))
            }
            // A new hard link: the scan finds which other record files share its bytes.
            if linked, !knownLinked.contains(fileName) {
                return .failure(Problem(reason: "'\(fileName)' has other hard links"))
            }
            if local != .absent { filesRead += 1 }
            recordCount += (local == .absent ? 0 : 1) - ((presentBefore[fileName] ?? (base != nil)) ? 1 : 0)
            let state = SyncRules.classify(base: base, local: local, remote: .notChecked) { nil }
            if state != .clean { statuses.append(RecordStatus(id: id, state: state)) }
        }
        statuses.sort { $0.id < $1.id }
        var unusableFiles: [UnusableFile] = []
        for (name, said) in unusable where FileSystem.exists(paths.root + "/" + name) {
            do {
                _ = try RecordID.fromFileName(name)
                // Not a record file's name (a folder the walk could not take): as the scan said.
                if !said.isEmpty { unusableFiles.append(UnusableFile(fileName: name, message: said)) }
            } catch {
                unusableFiles.append(UnusableFile(fileName: name, message: error.message))
            }
        }
        unusableFiles.sort { CanonicalJSON.utf8Less($0.fileName, $1.fileName) }
        return .success(SyncStatus(records: statuses, unusableFiles: unusableFiles, unusableRemote: [], recordCount: recordCount,
                                   remoteCount: nil, filesRead: filesRead))
    }

    /// The record file at `fileName` looked at as the scan looks at it (a
    /// link or a folder is an invalid record), and whether it has other hard
    /// links; nil when a folder on its way is not a plain folder, which only
    /// the full scan judges.
    private func lookAgain(_ fileName: String, id: RecordID) -> (LocalVersion, linked: Bool)? {
        let (folder, leaf) = fileName.contains("/") ? FileSystem.split(fileName) : ("", fileName)
        let directory = FileSystem.openFolderWithoutLinks(root: paths.root, folder)
        guard directory >= 0 else { return -directory == ENOENT ? (.absent, false) : nil }
        defer { FileSystem.closeDirectory(directory) }
        let candidate = LocalScanner.Candidate(name: fileName, id: id, cached: nil, directory: directory, leaf: leaf)
        switch LocalScanner.examine(root: paths.root, candidate: candidate, cacheStartedAt: nil, knownHash: nil, rules: rules,
                                    keepRecord: { _ in false }) {
        case .valid(let hash, _, _, _, let linked): return (.present(hash: hash), linked)
        case .invalid(let diagnostics, _): return (.invalid(diagnostics), false)
        case .vanished: return (.absent, false)
        }
    }
}
