import Synchronization
import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The base copies on disk: `base/pack` (see `BasePack`), plus one file per
/// record (`base/<id>.json`) as written by earlier versions, still read.
///
/// A copy is only believed when its content hashes to the manifest's hash for
/// that record, so a stale, duplicate or damaged copy can never pose as the base.
///
/// Memory stays flat however large the pack: a lookup holds an index of 16
/// bytes per line (the first eight bytes of the line's content hash and the
/// line's offset), built by streaming the pack once and kept while the file is
/// unchanged, and reads the one line it needs. Compaction streams the pack.
package final class BaseCopyStore: Sendable {
    let paths: CollectionPaths
    let rules: RecordRules
    private let loaded = Mutex<PackIndex?>(nil)

    /// Where each line of one version of the pack is, by content hash.
    private struct PackIndex {
        let stamp: [Int64]
        /// Sorted by key, then by offset (file order).
        let lines: [IndexedLine]

        /// The offsets of the lines whose hash starts with `key`, last line first.
        func offsets(for key: UInt64) -> [Int] {
            var low = 0, high = lines.count
            while low < high {
                let middle = (low + high) / 2
                if lines[middle].key < key { low = middle + 1 } else { high = middle }
            }
            var found: [Int] = []
            while low < lines.count, lines[low].key == key {
                found.append(lines[low].offset)
                low += 1
            }
            return found.reversed()
        }
    }

    private struct IndexedLine {
        let key: UInt64
        let offset: Int
    }

    /// The pack is compacted once it has grown to this many times its size
    /// after the last compaction (and by at least `compactionSlack` bytes).
    static let compactionGrowth = 2
    static let compactionSlack = 1 << 20
    /// The longest pack line read: a copy of a 1 MiB Firestore document with
    /// every byte escaped, and more. A longer line is ignored, never believed.
    static let maximumLine = 64 << 20

    init(paths: CollectionPaths, rules: RecordRules) {
        self.paths = paths
        self.rules = rules
    }

    var packPath: String { paths.base + "/pack" }
    /// `base/.gitattributes`: git merges the pack by keeping the lines of both sides.
    static let gitAttributes = "pack merge=union\n"

    /// The fields of the base copy with content hash `hash`; nil if there is none.
    /// Safe from any thread; the pack is indexed again only when it changed on disk.
    /// - Parameters:
    ///   - id: The record.
    ///   - hash: The manifest's hash for `id`; nil (no base) gives nil.
    package func fields(_ id: RecordID, hash: ContentHash?) -> Fields? {
        guard let hash else { return nil }
        if let fields = packedFields(id, hash: hash) { return fields }
        // Earlier versions kept no subcollection records, so path ids have no per-record file.
        guard id.isTopLevel, let bytes = try? FileSystem.readFile(paths.baseFile(id.fileName)),
              let fields = try? JSONParser.parseObject(bytes),
              SHA256.contentHash(rules.canonicalBytes(fields, id: id)) == hash else { return nil }
        return fields
    }

    /// The copy from the pack: the last line with `id` and `hash` whose record
    /// hashes to `hash`. Offsets are read through the descriptor the index was
    /// checked against, so a pack replaced meanwhile is never misread.
    private func packedFields(_ id: RecordID, hash: ContentHash) -> Fields? {
        guard let digest = ContentDigest(contentHash: hash) else { return nil }
        let fd = open(packPath, FileSystem.readFlags)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let stat = try? FileSystem.stat(descriptor: fd), stat.isRegularFile else { return nil }
        let stamp = [stat.size, stat.mtimeNanoseconds, stat.ctimeNanoseconds, Int64(bitPattern: stat.inode)]
        guard let index = currentIndex(stamp: stamp) else { return nil }
        let name = id.encodedName
        for offset in index.offsets(for: digest.leadingWord) {
            guard let line = Self.line(fd, at: offset) else { continue }
            let fields = line.withUnsafeBufferPointer { line -> Fields? in
                guard let parts = BasePack.parts(of: line),
                      line[parts.name].elementsEqual(name.utf8), line[parts.hash].elementsEqual(hash.text.utf8) else { return nil }
                return BasePack.verifiedFields(json: UnsafeBufferPointer(rebasing: line[parts.json]), hash: hash, rules: rules, id: id)
            }
            if let fields { return fields }
        }
        return nil
    }

    private func currentIndex(stamp: [Int64]) -> PackIndex? {
        loaded.withLock { cache in
            if let cache, cache.stamp == stamp { return cache }
            guard let lines = Self.indexLines(packPath) else { return nil }
            cache = PackIndex(stamp: stamp, lines: lines)
            return cache
        }
    }

    /// Every complete copy line's hash key and offset, sorted; nil when the
    /// pack cannot be read. A line cut short (no LF) is left out.
    private static func indexLines(_ path: String) -> [IndexedLine]? {
        guard let reader = LineBlockReader(path: path, maximumLine: maximumLine) else { return nil }
        var lines: [IndexedLine] = []
        while let _: Void = reader.next({ block in
            let start = reader.offset
            forEachLine(block) { line, at in
                guard let parts = BasePack.parts(of: line),
                      let digest = ContentDigest(contentHashBytes: UnsafeBufferPointer(rebasing: line[parts.hash])) else { return }
                lines.append(IndexedLine(key: digest.leadingWord, offset: start + at))
            }
        }) {}
        lines.sort { ($0.key, $0.offset) < ($1.key, $1.offset) }
        return lines
    }

    /// Calls `body` with each complete line of `block` (LF excluded) and its offset in the block.
    private static func forEachLine(_ block: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, Int) -> Void) {
        var start = 0
        while start < block.count, let end = block[start...].firstIndex(of: BasePack.newline) {
            body(UnsafeBufferPointer(rebasing: block[start..<end]), start)
            start = end + 1
        }
    }

    /// The line at `offset` without its LF; nil when there is no complete line there.
    private static func line(_ fd: Int32, at offset: Int) -> [UInt8]? {
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 14)
        var position = offset
        while line.count <= maximumLine {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, $0.count, off_t(position)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return nil }
            if let end = chunk[..<n].firstIndex(of: BasePack.newline) {
                line += chunk[..<end]
                return line
            }
            line += chunk[..<n]
            position += n
            if chunk.count < 1 << 20 { chunk = [UInt8](repeating: 0, count: chunk.count * 4) }
        }
        return nil
    }

    /// Appends lines to the pack and syncs them to disk, so the manifest
    /// saved next never names a copy that is not there. A pack that ends in a
    /// line cut short (a killed append) gets a line break first. The lines
    /// (about `BaseState.pendingCopiesLimit`) are written as they are, not
    /// copied behind a header; a kill between the two writes leaves a new
    /// pack's header alone, which only makes its next compaction later.
    func append(_ lines: [UInt8]) throws(FileSystemError) {
        guard !lines.isEmpty else { return }
        let path = packPath
        // Appending through a planted link would write base copies into any file: never follow one.
        let fd = try FileSystem.openForAppending(path)
        defer { close(fd) }
        let size = try FileSystem.stat(descriptor: fd).size
        var lead: [UInt8] = []
        if size == 0 {
            // Two branches that both synced both appended: git's union merge keeps
            // both sides' lines, which is exactly right for this file.
            try? FileSystem.writeAtomically(Array(Self.gitAttributes.utf8), to: paths.base + "/.gitattributes")
            lead = Self.header(compactedSize: Self.headerLength + lines.count)
        } else {
            var last: UInt8 = 0
            if pread(fd, &last, 1, off_t(size - 1)) == 1, last != BasePack.newline { lead.append(BasePack.newline) }
        }
        for bytes in [lead, lines] where !bytes.isEmpty {
            let failure = FileSystem.writeAll(bytes, to: fd)
            if failure != 0 { throw FileSystemError(path: path, operation: "append to", code: failure) }
        }
        if fsync(fd) != 0 { throw FileSystemError(path: path, operation: "sync", code: errno) }
    }

    /// Rewrites the pack with only the copies `manifest` names, once stale
    /// copies have made it grow enough to be worth it. Call after the manifest
    /// is saved; the rewrite is atomic, and streams: lines are kept in file
    /// order, one per record (the first whose hash the manifest names), and
    /// what is held is one bit per manifest entry.
    func compactIfGrown(manifest: Manifest) throws(FileSystemError) {
        guard let stat = try? FileSystem.stat(packPath) else { return }
        // A header that cannot be read (its first append was cut short) counts as never compacted.
        let compactedSize = Self.compactedSize(packPath) ?? 0
        guard stat.size > Int64(Self.compactionGrowth * compactedSize + Self.compactionSlack) else { return }
        guard let reader = LineBlockReader(path: packPath, maximumLine: Self.maximumLine) else { return }
        let writer = try AtomicFileWriter(replacing: packPath, durable: true)
        writer.append(Self.header(compactedSize: 0))
        let entries = manifest.entries
        var kept = [UInt64](repeating: 0, count: (entries.slotCount + 63) / 64)
        var keptWithoutSlot = Set<RecordID>()
        while let _: Void = reader.next({ block in
            Self.forEachLine(block) { line, at in
                guard let parts = BasePack.parts(of: line),
                      // A path id's name (`dune/reviews/r1`) is no file name: decode it as the path it is.
                      let id = RecordID.fromEncodedName(String(decoding: line[parts.name], as: UTF8.self)),
                      let current = entries[id]?.hash, line[parts.hash].elementsEqual(current.text.utf8) else { return }
                if let slot = entries.slot(of: id) {
                    let bit: UInt64 = 1 << UInt64(slot & 63)
                    guard kept[slot >> 6] & bit == 0 else { return }
                    kept[slot >> 6] |= bit
                } else {
                    guard keptWithoutSlot.insert(id).inserted else { return }
                }
                writer.append(UnsafeBufferPointer(rebasing: block[at...].prefix(line.count + 1)))
            }
        }) {}
        // A pack that could not be read to the end is left as it is: compacting
        // it would drop the copies after the failure.
        guard !reader.failed else { return }
        writer.patch(Self.header(compactedSize: writer.size), at: 0)
        try writer.commit()
    }

    /// The first line: what the file is, and its size right after the last
    /// compaction (fixed width, so the header's own length never changes).
    static func header(compactedSize: Int) -> [UInt8] {
        let digits = String(compactedSize)
        return Array("# booksync base copies: id<TAB>content hash<TAB>record; size when compacted: \(String(repeating: "0", count: max(0, 12 - digits.count)) + digits)\n".utf8)
    }

    static let headerLength = header(compactedSize: 0).count

    static func compactedSize(_ path: String) -> Int? {
        let fd = open(path, FileSystem.readFlags)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard (try? FileSystem.stat(descriptor: fd))?.isRegularFile == true else { return nil }
        var buffer = [UInt8](repeating: 0, count: 160)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0, let end = buffer[..<n].firstIndex(of: BasePack.newline),
              let colon = buffer[..<end].lastIndex(of: UInt8(ascii: ":")) else { return nil }
        return Int(String(decoding: buffer[(colon + 1)..<end], as: UTF8.self).trimmingWhitespace)
    }
}
