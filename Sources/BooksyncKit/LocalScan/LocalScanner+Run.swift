import BooksyncCore

/// One scan from the first listed name to the index written: what
/// `LocalScanner.scan` reads once (base, previous index, rules) and what it
/// gathers as it goes, with a method per stage — the top-level files, the
/// subcollection folders, the new index, the result.
struct ScanRun {
    private let root: String
    private let paths: CollectionPaths
    private let rules: RecordRules
    private let fingerprint: String
    private let scope: RecordScope
    private let directory: Int32
    private let scanStartedAt: Int64
    private let directoryStamp: FileStamp
    /// The previous index, read as a stream while the new one is written.
    private let previous: StatCache.Stream?
    private let cacheStartedAt: Int64?
    private let baseEntries: ManifestEntries
    /// The base's stamp (unknown without a base) and size, for the index header.
    private let baseStamp: FileStamp
    private let baseCount: Int
    /// Hashes known to belong to valid records under this config: the index's
    /// (written under the same fingerprint), or the manifest's when it was
    /// written under the same config.json (a fresh clone has no index). A
    /// file whose raw bytes hash to one of them needs no parsing.
    private let baseHashesValid: Bool
    private let keepFrom: ManifestEntries?

    /// The new index, written as the batches are examined. Its header is
    /// written first, assuming the directory stamp will hold (only clean,
    /// cached records); if not, it is rewritten with "-" at the end.
    private var writer: AtomicFileWriter?
    private var header: [UInt8] = []
    private var line: [UInt8] = []
    private var files: LocalFiles
    private var unusable: [UnusableFile] = []
    private var changedRecords: [RecordID: CanonicalRecord] = [:]
    private var tally = Tally()
    /// Top-level names that may be document folders (with subcollections configured).
    private var folderNames: [String] = []
    private var foldersWithTemporaries: [String] = []
    private var linkedFiles: [String] = []
    /// Directories named like top-level record files (`cfg.json/`).
    private var folderLikeRecordFiles: [String] = []

    /// A run of `scanner` over the open collection `directory`.
    init(_ scanner: LocalScanner, directory: Int32, scanStartedAt: Int64, directoryStamp: FileStamp) {
        root = scanner.paths.root
        paths = scanner.paths
        rules = scanner.rules
        fingerprint = scanner.fingerprint
        scope = scanner.scope
        self.directory = directory
        self.scanStartedAt = scanStartedAt
        self.directoryStamp = directoryStamp
        previous = scanner.trustsIndex ? StatCache.Stream(path: scanner.paths.index, fingerprint: scanner.fingerprint) : nil
        cacheStartedAt = previous?.scanStartedAt
        baseEntries = scanner.base?.entries ?? ManifestEntries()
        baseStamp = scanner.base == nil ? FileStamp.unknown : scanner.baseStamp
        baseCount = scanner.base?.entries.count ?? 0
        baseHashesValid = scanner.base?.configFingerprint == scanner.fingerprint
        keepFrom = scanner.keepRecordsChangedFrom?.entries
        files = LocalFiles(base: baseEntries.slots, keepsHashes: scanner.keepsHashes)
        writer = scanner.writeIndex ? try? AtomicFileWriter(replacing: scanner.paths.index) : nil
        StatCache.appendHeader(scanStartedAt: scanStartedAt, fingerprint: fingerprint, baseStamp: baseStamp, baseCount: baseCount,
                               directoryStamp: directoryStamp, to: &header)
        writer?.append(header)
    }

    /// The top-level record files, batch by batch as the directory lists them.
    mutating func examineTopLevel(_ lister: DirectoryLister) {
        let keepFolderNames = !rules.subcollections.isEmpty
        while true {
            let names = lister.next(LocalScanner.batchSize)
            if names.isEmpty { break }
            var batch: [LocalScanner.Candidate] = []
            batch.reserveCapacity(names.count)
            for name in names {
                let id: RecordID
                do {
                    guard let decoded = try RecordID.fromFileName(name) else {
                        if keepFolderNames, !name.hasPrefix(".") { folderNames.append(name) }
                        continue
                    }
                    id = decoded
                } catch {
                    unusable.append(UnusableFile(fileName: name, message: error.message))
                    continue
                }
                batch.append(LocalScanner.Candidate(name: name, id: id, cached: previous?.entry(for: name), directory: directory, leaf: name))
            }
            examine(batch)
        }
    }

    /// The configured subcollection folders, batch by batch (each batch's
    /// folders stay open while it is examined).
    mutating func walkSubcollections() {
        var walker = SubcollectionWalker(root: root, rootDirectory: directory, subcollections: rules.subcollections, batchSize: LocalScanner.batchSize)
        let previous = self.previous
        walker.walk(documentFolders: folderNames) { found in
            examine(found.map {
                LocalScanner.Candidate(name: $0.relativePath, id: $0.id, cached: previous?.entry(for: $0.relativePath), directory: $0.directory, leaf: $0.name)
            })
        }
        unusable += walker.unusable
        foldersWithTemporaries = walker.foldersWithTemporaries
        // A base record below a folder the walk could not enter (a link or a
        // file where `dune/` or `dune/reviews/` belongs) was not read: it is
        // invalid, not deleted, so push never deletes its document.
        walker.blockLegacyFolders(folderLikeRecordFiles)
        if !walker.blocked.isEmpty {
            for (id, _) in baseEntries where !id.isTopLevel && files[id] == nil {
                guard let (folder, reason) = walker.blockingFolder(of: id) else { continue }
                files.set(id, .invalid([RecordDiagnostic(message: root + "/" + folder + ": " + reason)]), baseSlot: nil, clean: false)
            }
        }
    }

    /// Examines one batch on several threads, then records each file's
    /// outcome in order: its class, a kept record, its index line.
    private mutating func examine(_ all: [LocalScanner.Candidate]) {
        let batch = scope.isEverything ? all : all.filter { scope.contains($0.id) }
        let (root, rules, baseEntries, cacheStartedAt, baseHashesValid, keepFrom) =
            (self.root, self.rules, self.baseEntries, self.cacheStartedAt, self.baseHashesValid, self.keepFrom)
        let results = ParallelMap.map(batch) { candidate -> Examined in
            let slot = baseEntries.slot(of: candidate.id)
            let baseHash = slot.map { baseEntries.hash(atSlot: $0) }
            let outcome = LocalScanner.examine(root: root, candidate: candidate, cacheStartedAt: cacheStartedAt,
                                               knownHash: candidate.cached?.hash ?? (baseHashesValid ? baseHash : nil), rules: rules,
                                               keepRecord: { hash in keepFrom.map { $0[candidate.id]?.hash != hash } ?? false })
            return Examined(outcome: outcome, baseSlot: slot, baseHash: baseHash)
        }
        for (candidate, result) in zip(batch, results) {
            tally.candidates += 1
            switch result.outcome {
            case .valid(let hash, var entry, let read, let record, let linked):
                if linked, linkedFiles.count <= WatchedScan.maximumDiffering { linkedFiles.append(candidate.name) }
                let matchesBase = result.baseHash == hash
                files.set(candidate.id, .valid(hash: hash), baseSlot: result.baseSlot, clean: matchesBase)
                if let record, changedRecords.count < LocalScanner.maximumKeptRecords { changedRecords[candidate.id] = record }
                if entry != nil {
                    entry!.clean = matchesBase
                    if !read, candidate.cached?.clean != matchesBase { tally.flagsChanged = true }
                    tally.cacheEntries += 1
                    tally.allClean = tally.allClean && matchesBase
                    line.removeAll(keepingCapacity: true)
                    StatCache.appendLine(name: candidate.name, entry!, to: &line)
                    writer?.append(line)
                }
                if read {
                    tally.filesRead += 1
                    tally.validFilesHashed += 1
                } else {
                    tally.reusedEntries += 1
                }
            case .invalid(let diagnostics, let read):
                files.set(candidate.id, .invalid(diagnostics), baseSlot: result.baseSlot, clean: false)
                if candidate.directory == directory, diagnostics == [RecordDiagnostic(message: FileSystemError.refusal(.directory))] {
                    folderLikeRecordFiles.append(candidate.name)
                }
                if read { tally.filesRead += 1 }
            case .vanished:
                break
            }
        }
    }

    /// Puts the new index in place when it says anything the old one did not.
    mutating func writeIndex() {
        // The directory stamp only vouches for a directory of clean, cached records.
        let onlyCleanRecords = unusable.isEmpty && tally.cacheEntries == tally.candidates && tally.allClean
        let finalDirectoryStamp = onlyCleanRecords ? directoryStamp : FileStamp.unknown
        // Rewrite when anything was hashed, even to the same result: the new scan
        // start time is what lets a formerly racy entry be trusted next time.
        // Every trusted entry was reused unchanged; anything else (a file hashed,
        // an entry dropped, a new base) changes the index.
        let previousLines = previous?.finish()
        let unchanged = tally.validFilesHashed == 0 && !tally.flagsChanged && tally.reusedEntries == (previousLines ?? -1)
            && previous?.baseStamp == baseStamp && previous?.baseCount == Int64(baseCount)
            && previous?.directoryStamp == finalDirectoryStamp
        guard let lines = writer, !unchanged else { return }
        // Best effort: a read-only directory still gets a correct status, only slower.
        if onlyCleanRecords {
            try? lines.commit()
        } else {
            writer = nil
            let (scanStartedAt, fingerprint, baseStamp, baseCount) = (self.scanStartedAt, self.fingerprint, self.baseStamp, self.baseCount)
            LocalScanner.rewrite(lines, header: header.count, as: paths.index, headedBy: { out in
                StatCache.appendHeader(scanStartedAt: scanStartedAt, fingerprint: fingerprint, baseStamp: baseStamp,
                                       baseCount: baseCount, directoryStamp: .unknown, to: &out)
            })
        }
    }

    /// What the scan found.
    mutating func finish() -> LocalScan {
        unusable.sort { CanonicalJSON.utf8Less($0.fileName, $1.fileName) }
        files.finish()
        return LocalScan(files: files, unusableFiles: unusable, filesRead: tally.filesRead, changedRecords: changedRecords,
                         foldersWithTemporaries: foldersWithTemporaries, linkedFiles: linkedFiles)
    }
}

/// What examining a candidate found, with its base entry's slot and hash
/// (looked up on the examining thread), if it has one.
private struct Examined: Sendable {
    let outcome: LocalScanner.Outcome
    let baseSlot: Int?
    let baseHash: ContentHash?
}

/// What the scan counts while it goes, to decide whether the index changed.
private struct Tally {
    var filesRead = 0
    var validFilesHashed = 0
    var reusedEntries = 0
    var cacheEntries = 0
    var candidates = 0
    var allClean = true
    var flagsChanged = false
}
