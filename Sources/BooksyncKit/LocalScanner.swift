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
public struct LocalScan: Sendable {
    /// Every record file, valid or not, by id.
    public var files: [RecordID: LocalFileState]
    /// Files that cannot be records, sorted by name; reported, never synced.
    public var unusableFiles: [UnusableFile]
    /// How many record files had to be read (the rest were proven unchanged by the stat cache).
    public var filesRead: Int
    /// Records parsed during the scan whose content differs from
    /// `LocalScanner.keepRecordsChangedFrom`: what push sends, without a second read.
    var changedRecords: [RecordID: Record] = [:]
}

/// Scans the record files of a collection directory, reading only the files
/// whose stat differs from the stat cache, on several threads.
struct LocalScanner: Sendable {
    let paths: CollectionPaths
    let rules: RecordRules
    let fingerprint: String
    /// False for `--dry-run`, which must not write anything, not even the cache.
    var writeIndex = true
    /// The base the scan is compared with, and the stamp of its manifest file,
    /// so index entries can remember which records were clean.
    var base: Manifest?
    var baseStamp = "-"
    /// When set, records parsed in the scan whose hash differs from this
    /// manifest's are kept in `LocalScan.changedRecords` (push sends them).
    var keepRecordsChangedFrom: Manifest?

    private enum Outcome: Sendable {
        case valid(hash: String, entry: StatCache.Entry?, read: Bool, record: Record?)
        case invalid([RecordDiagnostic], read: Bool)
        case vanished
    }

    func scan() throws(BooksyncError) -> LocalScan {
        let scanStartedAt = WallClock.nowNanoseconds()
        let directory: Int32
        do {
            directory = try FileSystem.openDirectory(paths.root)
        } catch {
            throw .io(error)
        }
        defer { FileSystem.closeDirectory(directory) }
        // Stamp the directory (through the descriptor, so a symlinked root stamps the
        // real directory) before listing it: a change after this is seen next time.
        let directoryStamp = (try? FileSystem.stat(descriptor: directory)).map { StatCache.stamp(of: $0, scanStartedAt: scanStartedAt) } ?? "-"
        let names: [String]
        do {
            names = try FileSystem.listDirectory(paths.root)
        } catch {
            throw .io(error)
        }
        var candidates: [(String, RecordID)] = []
        var unusable: [UnusableFile] = []
        for name in names {
            do {
                if let id = try RecordID.fromFileName(name) { candidates.append((name, id)) }
            } catch {
                unusable.append(UnusableFile(fileName: name, message: error.message))
            }
        }
        let previous = (try? FileSystem.readFile(paths.index)).flatMap { StatCache.decode($0, fingerprint: fingerprint) }
        let root = paths.root
        let rules = self.rules
        // Hashes known to belong to valid records under this config: the index's
        // (written under the same fingerprint), or, on a cold scan (a fresh clone),
        // the manifest's when it was written under the same config.json. A file
        // whose raw bytes hash to one of them needs no parsing.
        let trustedBase = previous == nil && base?.configFingerprint == fingerprint ? base : nil
        let keepFrom = keepRecordsChangedFrom
        let outcomes = ParallelMap.map(candidates) { (name, id) -> Outcome in
            Self.examine(directory: directory, root: root, fileName: name, id: id, cache: previous,
                         knownHash: previous?.entries[name]?.hash ?? trustedBase?.entries[id]?.hash, rules: rules,
                         keepRecord: { hash in keepFrom.map { $0.entries[id]?.hash != hash } ?? false })
        }

        var files: [RecordID: LocalFileState] = [:]
        files.reserveCapacity(candidates.count)
        var cacheEntries: [String: StatCache.Entry] = [:]
        cacheEntries.reserveCapacity(candidates.count)
        var filesRead = 0
        var validFilesHashed = 0
        var reusedEntries = 0
        var flagsChanged = false
        var changedRecords: [RecordID: Record] = [:]
        for ((name, id), outcome) in zip(candidates, outcomes) {
            switch outcome {
            case .valid(let hash, var entry, let read, let record):
                files[id] = .valid(hash: hash)
                if let record { changedRecords[id] = record }
                if entry != nil {
                    entry!.clean = base?.entries[id]?.hash == hash
                    if !read, previous?.entries[name]?.clean != entry!.clean { flagsChanged = true }
                    cacheEntries[name] = entry
                }
                if read {
                    filesRead += 1
                    validFilesHashed += 1
                } else {
                    reusedEntries += 1
                }
            case .invalid(let diagnostics, let read):
                files[id] = .invalid(diagnostics)
                if read { filesRead += 1 }
            case .vanished:
                break
            }
        }
        let stamp = base == nil ? "-" : baseStamp
        // The directory stamp only vouches for a directory of clean, cached records.
        let onlyCleanRecords = unusable.isEmpty && cacheEntries.count == candidates.count && cacheEntries.values.allSatisfy(\.clean)
        let cache = StatCache(scanStartedAt: scanStartedAt, fingerprint: fingerprint, baseStamp: stamp,
                              baseCount: base?.entries.count ?? 0, directoryStamp: onlyCleanRecords ? directoryStamp : "-",
                              entries: cacheEntries)
        // Rewrite when anything was hashed, even to the same result: the new scan
        // start time is what lets a formerly racy entry be trusted next time.
        // Every trusted entry was reused unchanged; anything else (a file hashed,
        // an entry dropped, a new base) changes the index.
        let unchanged = validFilesHashed == 0 && !flagsChanged && reusedEntries == (previous?.entries.count ?? -1)
            && previous?.baseStamp == cache.baseStamp && previous?.baseCount == cache.baseCount
            && previous?.directoryStamp == cache.directoryStamp
        if writeIndex, !unchanged {
            // Best effort: a read-only directory still gets a correct status, only slower.
            try? FileSystem.writeAtomically(cache.encoded(), to: paths.index)
        }
        unusable.sort { CanonicalJSON.utf8Less($0.fileName, $1.fileName) }
        return LocalScan(files: files, unusableFiles: unusable, filesRead: filesRead, changedRecords: changedRecords)
    }

    private static func examine(directory: Int32, root: String, fileName: String, id: RecordID, cache: StatCache?,
                                knownHash: String?, rules: RecordRules, keepRecord: (_ hash: String) -> Bool) -> Outcome {
        let path = root + "/" + fileName
        let stat: FileStat
        do {
            stat = try FileSystem.stat(directory: directory, name: fileName)
        } catch {
            if error.isNotFound { return .vanished }
            return .invalid([RecordDiagnostic(message: "\(path): cannot read file status")], read: false)
        }
        guard stat.isRegularFile else {
            return .invalid([RecordDiagnostic(message: FileSystemError.refusal(stat.kind))], read: false)
        }
        if let cache, let hash = cache.trustedHash(fileName: fileName, stat: stat) {
            return .valid(hash: hash, entry: StatCache.Entry(stat, hash: hash), read: false, record: nil)
        }
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path)
        } catch {
            if error.isNotFound { return .vanished }
            return .invalid([error.diagnostic], read: true)
        }
        // Touched but unchanged (a checkout, `touch`): bytes that hash to the known
        // content hash are that content's canonical bytes, already validated,
        // so they need no parsing.
        if let knownHash, SHA256.contentHash(bytes) == knownHash {
            let entry = StatCache.Entry(stat, hash: knownHash)
            return .valid(hash: knownHash, entry: entry, read: true, record: nil)
        }
        switch rules.load(bytes, id: id) {
        case .success(let record):
            // Cache under the stat taken before reading: if the file changed
            // while we read it, the next scan sees a different stat and re-reads.
            let entry = StatCache.Entry(stat, hash: record.hash)
            return .valid(hash: record.hash, entry: entry, read: true, record: keepRecord(record.hash) ? record : nil)
        case .failure(let problems):
            return .invalid(problems.diagnostics, read: true)
        }
    }
}

/// The wall clock, for the stat cache's racy-file rule (file times are wall-clock times).
enum WallClock {
    static func nowNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
