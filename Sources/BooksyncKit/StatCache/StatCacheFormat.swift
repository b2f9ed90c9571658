/// The one definition of the index's text format (see `StatCache`): the header
/// line and the entry line, written into and parsed from bytes in place.
///
/// Every reader goes through `parseHeader` and `parseLine` and every writer
/// through `appendHeader` and `appendLine`, so the decoder, the header peek
/// and the streaming clean proof cannot drift apart. Parsing yields byte
/// ranges and numbers, never intermediate strings: `status --offline` reads
/// every line of a 100,000-record index.
extension StatCache {
    static let tab: UInt8 = 0x09
    static let newline: UInt8 = 0x0A
    /// The flag of an entry whose hash equalled the base hash.
    static let cleanFlag = UInt8(ascii: "c")
    static let notCleanFlag = UInt8(ascii: "-")

    /// The header's fields; text fields as ranges of the parsed buffer.
    struct Header {
        var scanStartedAt: Int64
        var fingerprint: Range<Int>
        var baseStamp: Range<Int>
        var baseCount: Int64
        var directoryStamp: Range<Int>
        /// Where the first entry line starts.
        var end: Int

        /// True when the header's fingerprint is `fingerprint`.
        func fingerprint(_ b: UnsafeBufferPointer<UInt8>, is fingerprint: String) -> Bool {
            fingerprint.utf8.elementsEqual(UnsafeBufferPointer(rebasing: b[self.fingerprint]))
        }
    }

    /// One entry line's fields; the name and hash as ranges of the parsed buffer.
    struct Line {
        var name: Range<Int>
        var size: Int64
        var mtime: Int64
        var ctime: Int64
        var inode: UInt64
        var hash: Range<Int>
        var clean: Bool
        /// Where the next line starts.
        var end: Int
    }

    /// Walks tab-separated fields, each ending in the terminator the format puts there.
    private struct Fields {
        let b: UnsafeBufferPointer<UInt8>
        var i: Int

        /// The next field, consumed with its terminator; nil if the field ends
        /// otherwise (a tab where the line should end, a newline too early, or
        /// the end of the bytes).
        mutating func next(endingWith terminator: UInt8 = StatCache.tab) -> Range<Int>? {
            let start = i
            while i < b.count, b[i] != StatCache.tab, b[i] != StatCache.newline { i += 1 }
            guard i < b.count, b[i] == terminator else { return nil }
            i += 1
            return start..<(i - 1)
        }

        mutating func signed(endingWith terminator: UInt8 = StatCache.tab) -> Int64? {
            next(endingWith: terminator).flatMap { StatCache.signed(b, $0) }
        }

        mutating func unsigned() -> UInt64? { next().flatMap { StatCache.unsigned(b, $0) } }
    }

    /// The header line (`booksync-index`, version, then the five fields); nil
    /// if it is not exactly that.
    static func parseHeader(_ b: UnsafeBufferPointer<UInt8>) -> Header? {
        var f = Fields(b: b, i: 0)
        guard let magic = f.next(), header.utf8.elementsEqual(UnsafeBufferPointer(rebasing: b[magic])),
              let v = f.next(), version.utf8.elementsEqual(UnsafeBufferPointer(rebasing: b[v])),
              let started = f.signed(), let fingerprint = f.next(), let baseStamp = f.next(), let count = f.signed(),
              let directoryStamp = f.next(endingWith: newline)
        else { return nil }
        return Header(scanStartedAt: started, fingerprint: fingerprint, baseStamp: baseStamp, baseCount: count,
                      directoryStamp: directoryStamp, end: f.i)
    }

    /// The entry line starting at `start`; nil if it is damaged.
    static func parseLine(_ b: UnsafeBufferPointer<UInt8>, at start: Int) -> Line? {
        var f = Fields(b: b, i: start)
        guard let name = f.next(), let size = f.signed(), let mtime = f.signed(), let ctime = f.signed(),
              let inode = f.unsigned(), let hash = f.next(), let flag = f.next(endingWith: newline), flag.count == 1
        else { return nil }
        return Line(name: name, size: size, mtime: mtime, ctime: ctime, inode: inode, hash: hash,
                    clean: b[flag.lowerBound] == cleanFlag, end: f.i)
    }

    /// Writes the header line (see `StatCache` for the fields).
    static func appendHeader(scanStartedAt: Int64, fingerprint: String, baseStamp: FileStamp, baseCount: Int,
                             directoryStamp: FileStamp, to out: inout [UInt8]) {
        out.append(contentsOf: header.utf8)
        out.append(tab)
        out.append(contentsOf: version.utf8)
        out.append(tab)
        appendDecimal(scanStartedAt, to: &out)
        out.append(tab)
        out.append(contentsOf: fingerprint.utf8)
        out.append(tab)
        out.append(contentsOf: baseStamp.text.utf8)
        out.append(tab)
        appendDecimal(Int64(baseCount), to: &out)
        out.append(tab)
        out.append(contentsOf: directoryStamp.text.utf8)
        out.append(newline)
    }

    /// Writes one entry line; `name` and `hash` as bytes, so a line copied
    /// from an index needs no string.
    static func appendLine(name: some Collection<UInt8>, size: Int64, mtime: Int64, ctime: Int64, inode: UInt64,
                           hash: some Collection<UInt8>, clean: Bool, to out: inout [UInt8]) {
        out.append(contentsOf: name)
        out.append(tab)
        appendDecimal(size, to: &out)
        out.append(tab)
        appendDecimal(mtime, to: &out)
        out.append(tab)
        appendDecimal(ctime, to: &out)
        out.append(tab)
        appendDecimal(inode, negative: false, to: &out)
        out.append(tab)
        out.append(contentsOf: hash)
        out.append(tab)
        out.append(clean ? cleanFlag : notCleanFlag)
        out.append(newline)
    }

    /// Writes one entry line for a cache entry.
    static func appendLine(name: String, _ entry: Entry, to out: inout [UInt8]) {
        appendLine(name: name.utf8, size: entry.size, mtime: entry.mtime, ctime: entry.ctime, inode: entry.inode,
                   hash: entry.hash.text.utf8, clean: entry.clean, to: &out)
    }

    // MARK: Numbers

    /// Decimal digits of an unsigned number, no sign, no leading `+`; nil on
    /// anything else or on overflow (a damaged index is rebuilt, never trusted).
    static func unsigned(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> UInt64? {
        guard !r.isEmpty, r.count <= 20 else { return nil }
        var n: UInt64 = 0
        if r.count < 20 {
            // At most 19 digits cannot overflow: no overflow checks per digit
            // (every index line has four numbers, read for every file).
            for j in r {
                let digit = b[j] &- 0x30
                guard digit < 10 else { return nil }
                n = n &* 10 &+ UInt64(digit)
            }
            return n
        }
        for j in r {
            let digit = b[j] &- 0x30
            guard digit < 10 else { return nil }
            let (times10, o1) = n.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(digit))
            guard !o1, !o2 else { return nil }
            n = sum
        }
        return n
    }

    /// `unsigned` with an optional `-`: file times before 1970 are negative.
    static func signed(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Int64? {
        let negative = !r.isEmpty && b[r.lowerBound] == 0x2D
        guard let magnitude = unsigned(b, negative ? r.dropFirst() : r), magnitude <= UInt64(Int64.max) else { return nil }
        return negative ? -Int64(magnitude) : Int64(magnitude)
    }

    private static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        appendDecimal(value.magnitude, negative: value < 0, to: &out)
    }

    private static func appendDecimal(_ magnitude: UInt64, negative: Bool, to out: inout [UInt8]) {
        if negative { out.append(0x2D) }
        // At most 20 digits, written backwards into a stack buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var n = magnitude
            var k = 20
            repeat {
                k -= 1
                digits[k] = 0x30 + UInt8(n % 10)
                n /= 10
            } while n > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[k..<20]))
        }
    }
}

extension StatCache {
    /// The text fields of an index file's header that decide which proof applies.
    struct HeaderStamps: Equatable {
        var baseStamp: FileStamp
        var directoryStamp: FileStamp
    }

    /// The stamps in the header of the index at `path`, reading only its first
    /// line; nil when it is missing or its header is damaged.
    static func header(ofIndexAt path: String) -> HeaderStamps? {
        guard let reader = LineBlockReader(path: path, blockSize: 1 << 12, maximumLine: 1 << 16) else { return nil }
        return reader.next { b -> HeaderStamps? in
            guard let end = b.firstIndex(of: newline), let head = parseHeader(UnsafeBufferPointer(rebasing: b[...end])) else { return nil }
            return HeaderStamps(baseStamp: FileStamp(text: String(decoding: UnsafeBufferPointer(rebasing: b[head.baseStamp]), as: UTF8.self)),
                                directoryStamp: FileStamp(text: String(decoding: UnsafeBufferPointer(rebasing: b[head.directoryStamp]), as: UTF8.self)))
        } ?? nil
    }

    /// True when every entry line of the index at `path` ends in the clean
    /// flag: a quick look that only finds line ends, no fields.
    static func allEntriesClean(indexAt path: String) -> Bool {
        guard let reader = LineBlockReader(path: path) else { return false }
        var sawHeader = false
        while let clean = reader.next({ b -> Bool in
            var i = 0
            if !sawHeader {
                guard let end = b.firstIndex(of: newline) else { return false }
                i = end + 1
                sawHeader = true
            }
            while i < b.count {
                guard let end = b[i...].firstIndex(of: newline), end >= i + 2, b[end - 1] == cleanFlag, b[end - 2] == tab else { return false }
                i = end + 1
            }
            return true
        }) {
            guard clean else { return false }
        }
        return !reader.failed
    }
}
