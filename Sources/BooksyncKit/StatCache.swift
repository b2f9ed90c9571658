import BooksyncCore

/// The stat cache (`.booksync/index`): for each record file, the stat fields seen
/// when it was last hashed and the content hash of the valid record it held.
///
/// A file whose size, mtime, ctime and inode are unchanged is not read again,
/// like git's index. The format is line-oriented text because it loads ten
/// times faster than JSON for 100,000 entries:
///
///     booksync-index<TAB>1<TAB><scan start ns><TAB><config fingerprint>
///     <file name><TAB><size><TAB><mtime ns><TAB><ctime ns><TAB><inode><TAB><sha256:…>
///
/// Racily clean files: file times are coarse (ticks of several milliseconds),
/// so a file changed in the same tick as it was hashed keeps an identical stat.
/// An entry is trusted only if the file's mtime and ctime are older than the
/// start of the scan that wrote it, less a safety margin; otherwise it is
/// re-hashed, and the index is rewritten with the new scan's start time, so the
/// entry settles once the file is older than the margin.
struct StatCache: Sendable {
    static let header = "booksync-index"
    static let version = "1"
    /// Wider than any file-system clock tick booksync expects (ext4, APFS, tmpfs).
    static let racyMarginNanoseconds: Int64 = 100_000_000

    struct Entry: Sendable, Equatable {
        let size: Int64
        let mtime: Int64
        let ctime: Int64
        let inode: UInt64
        let hash: String
    }

    /// When the scan that produced these entries started (CLOCK_REALTIME, ns).
    var scanStartedAt: Int64
    /// Identifies the rules the hashes were computed under (config.json's hash),
    /// so changing the schema invalidates the cache.
    var fingerprint: String
    var entries: [String: Entry]

    /// The cached hash for a file, if its stat proves it unchanged since it was hashed.
    func trustedHash(fileName: String, stat: FileStat) -> String? {
        guard let entry = entries[fileName], entry.size == stat.size, entry.mtime == stat.mtimeNanoseconds,
              entry.ctime == stat.ctimeNanoseconds, entry.inode == stat.inode,
              !isRacy(entry)
        else { return nil }
        return entry.hash
    }

    func isRacy(_ entry: Entry) -> Bool {
        max(entry.mtime, entry.ctime) >= scanStartedAt - Self.racyMarginNanoseconds
    }

    func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(64 + entries.count * 120)
        out.append(contentsOf: "\(Self.header)\t\(Self.version)\t\(scanStartedAt)\t\(fingerprint)\n".utf8)
        for name in entries.keys.sorted(by: CanonicalJSON.utf8Less) {
            let e = entries[name]!
            out.append(contentsOf: "\(name)\t\(e.size)\t\(e.mtime)\t\(e.ctime)\t\(e.inode)\t\(e.hash)\n".utf8)
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
                  b[i - 1] == 0x0A
            else { return nil }
            var entries: [String: Entry] = [:]
            entries.reserveCapacity(b.count / 100)
            while i < b.count {
                guard let name = field(), let sizeField = field(), let size = number(sizeField),
                      let mtimeField = field(), let mtime = number(mtimeField), let ctimeField = field(), let ctime = number(ctimeField),
                      let inodeField = field(), let inode = unsigned(inodeField), let hash = field(), b[i - 1] == 0x0A
                else { return nil }
                entries[text(name)] = Entry(size: size, mtime: mtime, ctime: ctime, inode: inode, hash: text(hash))
            }
            return StatCache(scanStartedAt: started, fingerprint: fingerprint, entries: entries)
        }
    }
}
