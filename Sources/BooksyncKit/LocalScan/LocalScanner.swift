import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `*.json` file in the collection directory whose name does not decode to
/// a record id. (A record file that is not a regular file is an invalid
/// record, `LocalFileState.invalid`, not an unusable file.)
public struct UnusableFile: Sendable, Equatable {
    /// The file's name in the collection directory, as found on disk.
    public let fileName: String
    /// Why it cannot be a record file, for the user (`RecordIDError.message`).
    public let message: String
}

/// What a scan of the collection directory found.
package struct LocalScan: Sendable {
    /// Every record file, valid or not, by id.
    package var files: LocalFiles
    /// Files that cannot be records, sorted by name; reported, never synced.
    package var unusableFiles: [UnusableFile]
    /// How many record files had to be read (the rest were proven unchanged by the stat cache).
    package var filesRead: Int
    /// Records parsed during the scan whose content differs from
    /// `LocalScanner.keepRecordsChangedFrom` (the first `maximumKeptRecords`):
    /// what push sends without a second read.
    var changedRecords: [RecordID: CanonicalRecord] = [:]
    /// Subcollection folders holding booksync's temporary files (`SubcollectionWalker.foldersWithTemporaries`).
    var foldersWithTemporaries: [String] = []
    /// Valid record files with more than one hard link (a watched status
    /// looks at them every time), up to one more than `WatchedScan.maximumDiffering`.
    var linkedFiles: [String] = []
}

/// Scans the record files of a collection directory, reading only the files
/// whose stat differs from the stat cache, on several threads.
///
/// Memory does not grow with the collection beyond a bit per clean record:
/// the directory is listed in batches, each batch is examined and written
/// to the new index (a temporary file, renamed over the old one at the end)
/// before the next is listed, the previous index is read alongside
/// (`StatCache.Stream`), and clean files are one bit each (`LocalFiles`).
struct LocalScanner: Sendable {
    let paths: CollectionPaths
    let rules: RecordRules
    let fingerprint: String
    /// False for `--dry-run`, which must not write anything, not even the cache.
    var writeIndex = true
    /// Only the records in scope are examined (pathspecs); a scoped scan never
    /// writes the index, which must describe the whole directory.
    var scope = RecordScope.everything {
        didSet { if !scope.isEverything { writeIndex = false } }
    }
    /// False when every file must be read and hashed (`verify`): the stat
    /// cache vouches for files by their stat, not their content.
    var trustsIndex = true
    /// False when no remote content will be compared with the files (push):
    /// changed and added files are then kept without their hash (`LocalFiles`).
    var keepsHashes = true
    /// The base the scan is compared with, and the stamp of its manifest file,
    /// so index entries can remember which records were clean.
    var base: Manifest?
    var baseStamp = FileStamp.unknown
    /// When set, records parsed in the scan whose hash differs from this
    /// manifest's are kept in `LocalScan.changedRecords` (push sends them),
    /// up to `maximumKeptRecords`.
    var keepRecordsChangedFrom: Manifest?
    /// Records kept at most: push reads the rest again when it sends them, so
    /// a push of 100,000 new records holds a few chunks of records, not all.
    static let maximumKeptRecords = 500
    /// Names listed and examined at a time.
    static let batchSize = 8192

    enum Outcome: Sendable {
        /// `linked`: the file has other hard links.
        case valid(hash: ContentHash, entry: StatCache.Entry?, read: Bool, record: CanonicalRecord?, linked: Bool)
        case invalid([RecordDiagnostic], read: Bool)
        case vanished
    }

    /// One record file of a batch, with its previous index entry.
    struct Candidate: Sendable {
        /// The path relative to the collection directory: the index key.
        let name: String
        let id: RecordID
        let cached: StatCache.Entry?
        /// The open folder the file is in, and its name there.
        let directory: Int32
        let leaf: String
    }

    /// What examining a candidate found, with its base entry's slot and hash
    /// (looked up on the examining thread), if it has one.
    private struct Examined: Sendable {
        let outcome: Outcome
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

    func scan() throws(BooksyncError) -> LocalScan {
        let scanStartedAt = WallClock.nowNanoseconds()
        let directory = try BooksyncError.io { () throws(FileSystemError) in try FileSystem.openDirectory(paths.root) }
        defer { FileSystem.closeDirectory(directory) }
        // Stamp the directory (through the descriptor, so a symlinked root stamps the
        // real directory) before listing it: a change after this is seen next time.
        let directoryStamp = (try? FileSystem.stat(descriptor: directory)).map { StatCache.stamp(of: $0, scanStartedAt: scanStartedAt) } ?? .unknown
        let lister: DirectoryLister
        do {
            lister = try DirectoryLister(paths.root)
        } catch {
            throw .io(error)
        }
        let previous = trustsIndex ? StatCache.Stream(path: paths.index, fingerprint: fingerprint) : nil
        let baseEntries = base?.entries ?? ManifestEntries()
        let stamp = base == nil ? FileStamp.unknown : baseStamp
        let baseCount = base?.entries.count ?? 0
        // Hashes known to belong to valid records under this config: the index's
        // (written under the same fingerprint), or the manifest's when it was
        // written under the same config.json (a fresh clone has no index). A
        // file whose raw bytes hash to one of them needs no parsing.
        let baseHashesValid = base?.configFingerprint == fingerprint
        // The new index, written as the batches are examined. Its header is
        // written first, assuming the directory stamp will hold (only clean,
        // cached records); if not, it is rewritten with "-" at the end.
        var writer = writeIndex ? try? AtomicFileWriter(replacing: paths.index) : nil
        var header: [UInt8] = []
        StatCache.appendHeader(scanStartedAt: scanStartedAt, fingerprint: fingerprint, baseStamp: stamp, baseCount: baseCount,
                               directoryStamp: directoryStamp, to: &header)
        writer?.append(header)

        var files = LocalFiles(base: baseEntries, keepsHashes: keepsHashes)
        var unusable: [UnusableFile] = []
        var changedRecords: [RecordID: CanonicalRecord] = [:]
        var tally = Tally()
        var line: [UInt8] = []
        let root = paths.root
        let rules = self.rules
        let keepFrom = keepRecordsChangedFrom?.entries
        let subcollections = rules.subcollections
        var folderNames: [String] = []
        var foldersWithTemporaries: [String] = []
        var linkedFiles: [String] = []
        /// Directories named like top-level record files (`cfg.json/`).
        var folderLikeRecordFiles: [String] = []
        let cacheStartedAt = previous?.scanStartedAt
        let scope = self.scope
        func examineBatch(_ all: [Candidate]) {
            let batch = scope.isEverything ? all : all.filter { scope.contains($0.id) }
            let results = ParallelMap.map(batch) { candidate -> Examined in
                let slot = baseEntries.slot(of: candidate.id)
                let baseHash = slot.map { baseEntries.hash(atSlot: $0) }
                let outcome = Self.examine(root: root, candidate: candidate, cacheStartedAt: cacheStartedAt,
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
                    if let record, changedRecords.count < Self.maximumKeptRecords { changedRecords[candidate.id] = record }
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
        while true {
            let names = lister.next(Self.batchSize)
            if names.isEmpty { break }
            var batch: [Candidate] = []
            batch.reserveCapacity(names.count)
            for name in names {
                let id: RecordID
                do {
                    guard let decoded = try RecordID.fromFileName(name) else {
                        if !subcollections.isEmpty, !name.hasPrefix(".") { folderNames.append(name) }
                        continue
                    }
                    id = decoded
                } catch {
                    unusable.append(UnusableFile(fileName: name, message: error.message))
                    continue
                }
                batch.append(Candidate(name: name, id: id, cached: previous?.entry(for: name), directory: directory, leaf: name))
            }
            examineBatch(batch)
        }
        if !subcollections.isEmpty {
            // The configured subcollection folders, batch by batch (each batch's folders stay open while it is examined).
            var walker = SubcollectionWalker(root: root, rootDirectory: directory, subcollections: subcollections, batchSize: Self.batchSize)
            walker.walk(documentFolders: folderNames) { found in
                examineBatch(found.map {
                    Candidate(name: $0.relativePath, id: $0.id, cached: previous?.entry(for: $0.relativePath), directory: $0.directory, leaf: $0.name)
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
        // The directory stamp only vouches for a directory of clean, cached records.
        let onlyCleanRecords = unusable.isEmpty && tally.cacheEntries == tally.candidates && tally.allClean
        let finalDirectoryStamp = onlyCleanRecords ? directoryStamp : FileStamp.unknown
        // Rewrite when anything was hashed, even to the same result: the new scan
        // start time is what lets a formerly racy entry be trusted next time.
        // Every trusted entry was reused unchanged; anything else (a file hashed,
        // an entry dropped, a new base) changes the index.
        let previousLines = previous?.finish()
        let unchanged = tally.validFilesHashed == 0 && !tally.flagsChanged && tally.reusedEntries == (previousLines ?? -1)
            && previous?.baseStamp == stamp && previous?.baseCount == Int64(baseCount)
            && previous?.directoryStamp == finalDirectoryStamp
        if let lines = writer, !unchanged {
            // Best effort: a read-only directory still gets a correct status, only slower.
            if onlyCleanRecords {
                try? lines.commit()
            } else {
                writer = nil
                Self.rewrite(lines, header: header.count, as: paths.index, headedBy: { out in
                    StatCache.appendHeader(scanStartedAt: scanStartedAt, fingerprint: fingerprint, baseStamp: stamp,
                                           baseCount: baseCount, directoryStamp: .unknown, to: &out)
                })
            }
        }
        unusable.sort { CanonicalJSON.utf8Less($0.fileName, $1.fileName) }
        files.finish()
        return LocalScan(files: files, unusableFiles: unusable, filesRead: tally.filesRead, changedRecords: changedRecords,
                         foldersWithTemporaries: foldersWithTemporaries, linkedFiles: linkedFiles)
    }

    /// Puts the entry lines written to `lines` (after its `header` bytes) in
    /// place at `path` under a new header. Best effort, like every index write.
    private static func rewrite(_ lines: AtomicFileWriter, header: Int, as path: String, headedBy: (inout [UInt8]) -> Void) {
        guard let out = try? AtomicFileWriter(replacing: path) else { return }
        var head: [UInt8] = []
        headedBy(&head)
        out.append(head)
        guard lines.readBack(from: header, into: { out.append($0) }) else { return }
        try? out.commit()
    }

    static func examine(root: String, candidate: Candidate, cacheStartedAt: Int64?,
                                knownHash: ContentHash?, rules: RecordRules, keepRecord: (_ hash: ContentHash) -> Bool) -> Outcome {
        let path = root + "/" + candidate.name
        let stat: FileStat
        do {
            stat = try FileSystem.stat(directory: candidate.directory, name: candidate.leaf)
        } catch {
            if error.isNotFound { return .vanished }
            return .invalid([RecordDiagnostic(message: "\(path): cannot read file status")], read: false)
        }
        guard stat.isRegularFile else {
            return .invalid([RecordDiagnostic(message: FileSystemError.refusal(stat.kind))], read: false)
        }
        if let cached = candidate.cached, let started = cacheStartedAt, StatCache.trusts(cached, stat, scanStartedAt: started) {
            return .valid(hash: cached.hash, entry: StatCache.Entry(stat, hash: cached.hash), read: false, record: nil, linked: stat.linkCount > 1)
        }
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(directory: candidate.directory, name: candidate.leaf, path: path)
        } catch {
            if error.isNotFound { return .vanished }
            return .invalid([error.diagnostic], read: true)
        }
        // Touched but unchanged (a checkout, `touch`): bytes that hash to the known
        // content hash are that content's canonical bytes, already validated,
        // so they need no parsing.
        if let knownHash, SHA256.contentHash(bytes) == knownHash {
            let entry = StatCache.Entry(stat, hash: knownHash)
            return .valid(hash: knownHash, entry: entry, read: true, record: nil, linked: stat.linkCount > 1)
        }
        switch rules.load(bytes, id: candidate.id) {
        case .success(let record):
            // Cache under the stat taken before reading: if the file changed
            // while we read it, the next scan sees a different stat and re-reads.
            let entry = StatCache.Entry(stat, hash: record.hash)
            return .valid(hash: record.hash, entry: entry, read: true, record: keepRecord(record.hash) ? record : nil,
                          linked: stat.linkCount > 1)
        case .failure(let problems):
            return .invalid(problems.diagnostics, read: true)
        }
    }
}

/// The wall clock, for the stat cache's racy-file rule (file times are wall-clock times).
package enum WallClock {
    package static func nowNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
