import BooksyncCore

/// The stat cache (`.booksync/index`): for each record file, the stat fields seen
/// when it was last hashed and the content hash of the valid record it held.
///
/// A file whose size, mtime, ctime and inode are unchanged is not read again,
/// like git's index. The format is line-oriented text because it loads ten
/// times faster than JSON for 100,000 entries:
///
///     booksync-index<TAB>3<TAB><scan start ns><TAB><config fingerprint><TAB><manifest stamp><TAB><base count><TAB><directory stamp>
///     <file name><TAB><size><TAB><mtime ns><TAB><ctime ns><TAB><inode><TAB><sha256:…><TAB><c or ->
///
/// The last field says whether the hash equalled the manifest's hash for that
/// record when the index was written, and the header names the manifest it
/// was compared with (size, times, inode). While that manifest is unchanged,
/// `status --offline` on an unchanged tree needs neither the record files nor
/// the manifest: every file trusted and clean, and as many as the base has,
/// means nothing changed. The directory stamp (the collection directory's own
/// times and inode) is written only when the scan found nothing but these
/// files; while it holds, no file was added, removed or renamed, so even the
/// directory listing can be skipped (`verifiesClean`).
///
/// Racily clean files: file times are coarse (ticks of several milliseconds),
/// so a file changed in the same tick as it was hashed keeps an identical stat.
/// An entry is trusted only if the file's mtime and ctime are older than the
/// start of the scan that wrote it, less a safety margin; otherwise it is
/// re-hashed, and the index is rewritten with the new scan's start time, so the
/// entry settles once the file is older than the margin.
///
/// The text format is written and parsed only in `StatCacheFormat.swift`; the
/// clean proof that streams it lives beside it in `StatCache+QuickClean.swift`.
struct StatCache: Sendable {
    static let header = "booksync-index"
    static let version = "3"
    /// Wider than any file-system clock tick booksync expects (ext4, APFS, tmpfs).
    static let racyMarginNanoseconds: Int64 = 100_000_000

    struct Entry: Sendable, Equatable {
        let size: Int64
        let mtime: Int64
        let ctime: Int64
        let inode: UInt64
        let hash: ContentHash
        /// The hash equalled the base hash of the record when the index was written.
        var clean = false
    }

    /// When the scan that produced these entries started (CLOCK_REALTIME, ns).
    var scanStartedAt: Int64
    /// Identifies the rules the hashes were computed under (config.json's hash),
    /// so changing the schema invalidates the cache.
    var fingerprint: String
    /// Stamp of the manifest the clean flags were computed against.
    var baseStamp = FileStamp.unknown
    /// How many records that manifest has.
    var baseCount = 0
    /// Stamp of the collection directory when the scan listed it; unknown when
    /// the scan saw files that are not clean cached records.
    var directoryStamp = FileStamp.unknown
    var entries: [String: Entry]

    /// True if the file's stat proves it unchanged since the entry was written.
    func trusts(_ entry: Entry, _ stat: FileStat) -> Bool {
        Self.trusts(entry, stat, scanStartedAt: scanStartedAt)
    }

    /// True if the file's stat proves it unchanged since the entry was written
    /// by a scan that started at `scanStartedAt`.
    static func trusts(_ entry: Entry, _ stat: FileStat, scanStartedAt: Int64) -> Bool {
        entry.size == stat.size && entry.mtime == stat.mtimeNanoseconds && entry.ctime == stat.ctimeNanoseconds
            && entry.inode == stat.inode && !isRacy(mtime: entry.mtime, ctime: entry.ctime, scanStartedAt: scanStartedAt)
    }

    /// The stamp of a state file, unknown if it changed too recently to be
    /// told apart from a later change in the same clock tick.
    static func stamp(of stat: FileStat, scanStartedAt: Int64) -> FileStamp {
        if isRacy(mtime: stat.mtimeNanoseconds, ctime: stat.ctimeNanoseconds, scanStartedAt: scanStartedAt) { return .unknown }
        return FileStamp(stat)
    }

    func isRacy(_ entry: Entry) -> Bool {
        Self.isRacy(mtime: entry.mtime, ctime: entry.ctime, scanStartedAt: scanStartedAt)
    }

    /// A file time is racy when it is within the file system's clock resolution
    /// of the scan start. Times without a fraction of a second come from a file
    /// system that keeps whole seconds (HFS+, FAT, small ext4 inodes, some NFS),
    /// so the margin there is two seconds instead of 100 ms.
    static func isRacy(mtime: Int64, ctime: Int64, scanStartedAt: Int64) -> Bool {
        let coarse = mtime % 1_000_000_000 == 0 && ctime % 1_000_000_000 == 0
        let margin = coarse ? 2_000_000_000 : racyMarginNanoseconds
        return max(mtime, ctime) >= scanStartedAt - margin
    }

    /// The index file's bytes, entries sorted by name (deterministic). The
    /// scan writes its index line by line instead (`LocalScanner`), in
    /// directory order; readers accept any order.
    func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(64 + entries.count * 120)
        Self.appendHeader(scanStartedAt: scanStartedAt, fingerprint: fingerprint, baseStamp: baseStamp, baseCount: baseCount,
                          directoryStamp: directoryStamp, to: &out)
        for name in entries.keys.sorted(by: CanonicalJSON.utf8Less) { Self.appendLine(name: name, entries[name]!, to: &out) }
        return out
    }

    /// Decodes an index; nil when it is missing, damaged or from other rules.
    /// The index is only a cache, so a bad one is rebuilt rather than reported.
    /// Parsed from bytes without intermediate strings: it is read by every status.
    static func decode(_ bytes: [UInt8], fingerprint: String) -> StatCache? {
        bytes.withUnsafeBufferPointer { b -> StatCache? in
            func text(_ r: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self) }
            guard let head = parseHeader(b), head.fingerprint(b, is: fingerprint) else { return nil }
            var entries: [String: Entry] = [:]
            entries.reserveCapacity(b.count / 100)
            var i = head.end
            while i < b.count {
                guard let line = parseLine(b, at: i) else { return nil }
                entries[text(line.name)] = Entry(size: line.size, mtime: line.mtime, ctime: line.ctime, inode: line.inode,
                                                 hash: ContentHash(text: text(line.hash)), clean: line.clean)
                i = line.end
            }
            return StatCache(scanStartedAt: head.scanStartedAt, fingerprint: fingerprint, baseStamp: FileStamp(text: text(head.baseStamp)),
                             baseCount: Int(head.baseCount), directoryStamp: FileStamp(text: text(head.directoryStamp)), entries: entries)
        }
    }

    /// The directory stamp in an index's header, without decoding the rest.
    static func directoryStamp(of bytes: [UInt8]) -> FileStamp? {
        bytes.withUnsafeBufferPointer { b in
            parseHeader(b).map { FileStamp(text: String(decoding: UnsafeBufferPointer(rebasing: b[$0.directoryStamp]), as: UTF8.self)) }
        }
    }
}

extension StatCache.Entry {
    /// The entry for a file with this stat (taken before it was read: a change
    /// during the read shows as a different stat next time) and content hash.
    init(_ stat: FileStat, hash: ContentHash) {
        self.init(size: stat.size, mtime: stat.mtimeNanoseconds, ctime: stat.ctimeNanoseconds, inode: stat.inode, hash: hash)
    }
}
