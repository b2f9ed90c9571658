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
        var run = ScanRun(self, directory: directory, scanStartedAt: scanStartedAt, directoryStamp: directoryStamp)
        run.examineTopLevel(lister)
        if !rules.subcollections.isEmpty { run.walkSubcollections() }
        run.writeIndex()
        return run.finish()
    }

    /// Puts the entry lines written to `lines` (after its `header` bytes) in
    /// place at `path` under a new header. Best effort, like every index write.
    static func rewrite(_ lines: AtomicFileWriter, header: Int, as path: String, headedBy: (inout [UInt8]) -> Void) {
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
