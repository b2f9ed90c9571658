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
        let hash: String
        /// The hash equalled the base hash of the record when the index was written.
        var clean = false
    }

    /// When the scan that produced these entries started (CLOCK_REALTIME, ns).
    var scanStartedAt: Int64
    /// Identifies the rules the hashes were computed under (config.json's hash),
    /// so changing the schema invalidates the cache.
    var fingerprint: String
    /// `size:mtime:ctime:inode` of the manifest the clean flags were computed
    /// against; "-" when unknown (or too recent to be trusted).
    var baseStamp = "-"
    /// How many records that manifest has.
    var baseCount = 0
    /// Stamp of the collection directory when the scan listed it, or "-" when
    /// the scan saw files that are not clean cached records.
    var directoryStamp = "-"
    var entries: [String: Entry]

    /// The cached hash for a file, if its stat proves it unchanged since it was hashed.
    func trustedHash(fileName: String, stat: FileStat) -> String? {
        guard let entry = entries[fileName], trusts(entry, stat) else { return nil }
        return entry.hash
    }

    /// True if the file's stat proves it unchanged since the entry was written.
    func trusts(_ entry: Entry, _ stat: FileStat) -> Bool {
        entry.size == stat.size && entry.mtime == stat.mtimeNanoseconds && entry.ctime == stat.ctimeNanoseconds
            && entry.inode == stat.inode && !isRacy(entry)
    }

    /// The stamp of a state file, or "-" if it changed too recently to be told
    /// apart from a later change in the same clock tick.
    static func stamp(of stat: FileStat, scanStartedAt: Int64) -> String {
        if isRacy(mtime: stat.mtimeNanoseconds, ctime: stat.ctimeNanoseconds, scanStartedAt: scanStartedAt) { return "-" }
        return "\(stat.size):\(stat.mtimeNanoseconds):\(stat.ctimeNanoseconds):\(stat.inode)"
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

    func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(64 + entries.count * 120)
        out.append(contentsOf: "\(Self.header)\t\(Self.version)\t\(scanStartedAt)\t\(fingerprint)\t\(baseStamp)\t\(baseCount)\t\(directoryStamp)\n".utf8)
        // Unsorted: the index is local-only and read into a dictionary or streamed.
        for (name, e) in entries {
            out.append(contentsOf: "\(name)\t\(e.size)\t\(e.mtime)\t\(e.ctime)\t\(e.inode)\t\(e.hash)\t\(e.clean ? "c" : "-")\n".utf8)
        }
        return out
    }

    /// Decodes an index; nil when it is missing, damaged or from other rules.
    /// The index is only a cache, so a bad one is rebuilt rather than reported.
    /// Parsed from bytes without intermediate strings: it is read by every status.
    static func decode(_ bytes: [UInt8], fingerprint: String) -> StatCache? {
        bytes.withUnsafeBufferPointer { b -> StatCache? in
            var i = 0
            /// The bytes up to the next tab or newline (consumed).
            func field() -> UnsafeBufferPointer<UInt8>? {
                let start = i
                while i < b.count, b[i] != 0x09, b[i] != 0x0A { i += 1 }
                guard i < b.count else { return nil }
                let slice = UnsafeBufferPointer(rebasing: b[start..<i])
                i += 1
                return slice
            }
            func text(_ f: UnsafeBufferPointer<UInt8>) -> String { String(decoding: f, as: UTF8.self) }
            func unsigned(_ f: UnsafeBufferPointer<UInt8>) -> UInt64? {
                guard !f.isEmpty, f.count <= 20 else { return nil }
                var n: UInt64 = 0
                for c in f {
                    guard c >= 0x30, c <= 0x39 else { return nil }
                    let (times10, o1) = n.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = times10.addingReportingOverflow(UInt64(c - 0x30))
                    guard !o1, !o2 else { return nil }
                    n = sum
                }
                return n
            }
            /// Signed: file times before 1970 are negative.
            func number(_ f: UnsafeBufferPointer<UInt8>) -> Int64? {
                if let first = f.first, first == 0x2D {
                    guard let magnitude = unsigned(UnsafeBufferPointer(rebasing: f.dropFirst())), magnitude <= UInt64(Int64.max) else { return nil }
                    return -Int64(magnitude)
                }
                guard let magnitude = unsigned(f), magnitude <= UInt64(Int64.max) else { return nil }
                return Int64(magnitude)
            }
            guard let h = field(), text(h) == header, let v = field(), text(v) == version,
                  let startField = field(), let started = number(startField), let fp = field(), text(fp) == fingerprint,
                  let stampField = field(), let countField = field(), let count = number(countField),
                  let directoryField = field(), b[i - 1] == 0x0A
            else { return nil }
            var entries: [String: Entry] = [:]
            entries.reserveCapacity(b.count / 100)
            while i < b.count {
                guard let name = field(), let sizeField = field(), let size = number(sizeField),
                      let mtimeField = field(), let mtime = number(mtimeField), let ctimeField = field(), let ctime = number(ctimeField),
                      let inodeField = field(), let inode = unsigned(inodeField), let hash = field(), let flag = field(),
                      flag.count == 1, b[i - 1] == 0x0A
                else { return nil }
                entries[text(name)] = Entry(size: size, mtime: mtime, ctime: ctime, inode: inode, hash: text(hash), clean: flag[0] == 0x63)
            }
            return StatCache(scanStartedAt: started, fingerprint: fingerprint, baseStamp: text(stampField), baseCount: Int(count),
                             directoryStamp: text(directoryField), entries: entries)
        }
    }

    /// The directory stamp in an index's header, without decoding the rest.
    static func directoryStamp(of bytes: [UInt8]) -> String? {
        guard let newline = bytes.firstIndex(of: 0x0A) else { return nil }
        let head = bytes[..<newline].split(separator: 0x09, omittingEmptySubsequences: false)
        return head.count == 7 ? String(decoding: head[6], as: UTF8.self) : nil
    }

    /// What streaming verification proved.
    struct CleanProof {
        /// Record files, all clean.
        let count: Int
        /// Files that had to be read again.
        let rehashed: Int
        /// A refreshed index when some files had to be re-hashed (their stat had
        /// changed, their bytes had not); nil when the index is current.
        let refreshedIndex: [UInt8]?
    }

    /// One line's verdict.
    private enum LineVerdict {
        case unchanged
        /// Stat changed, bytes still hash to the line's content hash: the new line.
        case rehashed([UInt8])
        case dirty
    }

    /// Proves an unchanged, clean tree straight from the index bytes, without
    /// building the cache: the header must name `baseStamp` and
    /// `directoryStamp`, and every entry must be clean and either trusted by a
    /// fresh `fstatat` in `directory` or, if its stat changed (a `touch`, a
    /// checkout), have bytes that still hash to its content hash. Returns nil
    /// as soon as anything differs. Entries are checked on several threads.
    /// `scanStartedAt` (taken before any stat) heads the refreshed index.
    static func verifiesClean(_ bytes: [UInt8], fingerprint: String, baseStamp: String, directoryStamp: String,
                              directory: Int32, scanStartedAt: Int64) -> CleanProof? {
        let expectedHeader = Array("\(header)\t\(version)\t".utf8)
        guard bytes.starts(with: expectedHeader), let newline = bytes.firstIndex(of: 0x0A) else { return nil }
        let head = bytes[expectedHeader.count..<newline].split(separator: 0x09, omittingEmptySubsequences: false)
        guard head.count == 5, let started = Int64(String(decoding: head[0], as: UTF8.self)),
              String(decoding: head[1], as: UTF8.self) == fingerprint, String(decoding: head[2], as: UTF8.self) == baseStamp,
              let count = Int(String(decoding: head[3], as: UTF8.self)), String(decoding: head[4], as: UTF8.self) == directoryStamp
        else { return nil }
        // Line starts, then the lines split among threads.
        var starts: [Int] = []
        starts.reserveCapacity(count + 1)
        var i = newline + 1
        while i < bytes.count {
            starts.append(i)
            guard let end = bytes[i...].firstIndex(of: 0x0A) else { return nil }
            i = end + 1
        }
        guard starts.count == count else { return nil }
        let lineStarts = starts
        let chunks = stride(from: 0, to: starts.count, by: 1024).map { ($0, min($0 + 1024, starts.count)) }
        // Per chunk: nil if a line is dirty, else the re-hashed lines (index, new bytes).
        let verdicts = bytes.withUnsafeBufferPointer { buffer -> [[(Int, [UInt8])]?] in
            nonisolated(unsafe) let b = buffer
            return ParallelMap.map(chunks, chunkSize: 1) { (from, to) -> [(Int, [UInt8])]? in
                var rehashed: [(Int, [UInt8])] = []
                for line in from..<to {
                    switch verifyLine(b, at: lineStarts[line], started: started, directory: directory) {
                    case .unchanged: continue
                    case .rehashed(let text): rehashed.append((line, text))
                    case .dirty: return nil
                    }
                }
                return rehashed
            }
        }
        var replacements: [Int: [UInt8]] = [:]
        for verdict in verdicts {
            guard let verdict else { return nil }
            for (line, text) in verdict { replacements[line] = text }
        }
        guard !replacements.isEmpty else { return CleanProof(count: count, rehashed: 0, refreshedIndex: nil) }
        var out = Array("\(header)\t\(version)\t\(scanStartedAt)\t\(fingerprint)\t\(baseStamp)\t\(count)\t\(directoryStamp)\n".utf8)
        out.reserveCapacity(bytes.count + 64)
        for (line, start) in lineStarts.enumerated() {
            if let text = replacements[line] {
                out.append(contentsOf: text)
            } else {
                let end = line + 1 < lineStarts.count ? lineStarts[line + 1] : bytes.count
                out.append(contentsOf: bytes[start..<end])
            }
        }
        return CleanProof(count: count, rehashed: replacements.count, refreshedIndex: out)
    }

    /// One index line: clean, and its file's stat unchanged and not racy, or
    /// re-hashed to the same content.
    private static func verifyLine(_ b: UnsafeBufferPointer<UInt8>, at start: Int, started: Int64, directory: Int32) -> LineVerdict {
        var i = start
        var fields: [(Int, Int)] = []
        fields.reserveCapacity(7)
        var fieldStart = i
        while i < b.count, b[i] != 0x0A {
            if b[i] == 0x09 {
                fields.append((fieldStart, i))
                fieldStart = i + 1
            }
            i += 1
        }
        fields.append((fieldStart, i))
        guard fields.count == 7, fields[6].1 - fields[6].0 == 1, b[fields[6].0] == 0x63 else { return .dirty }
        func number(_ f: (Int, Int)) -> Int64? {
            var n: Int64 = 0
            var negative = false
            var j = f.0
            if j < f.1, b[j] == 0x2D { negative = true; j += 1 }
            guard j < f.1, f.1 - j <= 18 else { return f.1 - j == 19 || f.1 - j == 20 ? bigNumber(f) : nil }
            while j < f.1 {
                let c = b[j]
                guard c >= 0x30, c <= 0x39 else { return nil }
                n = n * 10 + Int64(c - 0x30)
                j += 1
            }
            return negative ? -n : n
        }
        func bigNumber(_ f: (Int, Int)) -> Int64? {
            Int64(String(decoding: UnsafeBufferPointer(rebasing: b[f.0..<f.1]), as: UTF8.self))
        }
        guard let size = number(fields[1]), let mtime = number(fields[2]), let ctime = number(fields[3]),
              let inode = UInt64(String(decoding: UnsafeBufferPointer(rebasing: b[fields[4].0..<fields[4].1]), as: UTF8.self))
        else { return .dirty }
        // The name as a C string on the stack: no allocation per unchanged file.
        let nameLength = fields[0].1 - fields[0].0
        guard nameLength > 0, nameLength < 256 else { return .dirty }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: nameLength + 1) { name -> LineVerdict in
            for k in 0..<nameLength { name[k] = CChar(bitPattern: b[fields[0].0 + k]) }
            name[nameLength] = 0
            guard let stat = FileSystem.stat(directory: directory, cName: name.baseAddress!), stat.isRegularFile else { return .dirty }
            if stat.size == size, stat.mtimeNanoseconds == mtime, stat.ctimeNanoseconds == ctime, stat.inode == inode,
               !isRacy(mtime: mtime, ctime: ctime, scanStartedAt: started) {
                return .unchanged
            }
            // Touched or racy: same bytes as hashed before means same, valid content.
            guard let content = FileSystem.readFile(directory: directory, cName: name.baseAddress!),
                  Array(SHA256.contentHash(content).utf8) == Array(b[fields[5].0..<fields[5].1])
            else { return .dirty }
            let hash = String(decoding: UnsafeBufferPointer(rebasing: b[fields[5].0..<fields[5].1]), as: UTF8.self)
            let fileName = String(decoding: UnsafeBufferPointer(rebasing: b[fields[0].0..<fields[0].1]), as: UTF8.self)
            // The stat taken before reading: a change during the read shows next time.
            return .rehashed(Array("\(fileName)\t\(stat.size)\t\(stat.mtimeNanoseconds)\t\(stat.ctimeNanoseconds)\t\(stat.inode)\t\(hash)\tc\n".utf8))
        }
    }
}
