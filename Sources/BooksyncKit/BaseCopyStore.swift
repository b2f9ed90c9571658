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
/// Reads load the pack once and keep it while the file is unchanged.
public final class BaseCopyStore: Sendable {
    let paths: CollectionPaths
    let rules: RecordRules
    private let loaded = Mutex<LoadedPack?>(nil)

    private struct LoadedPack {
        let stamp: [Int64]
        let bytes: [UInt8]
        let index: [String: [BasePack.Entry]]
    }

    /// The pack is compacted once it has grown to this many times its size
    /// after the last compaction (and by at least `compactionSlack` bytes).
    static let compactionGrowth = 2
    static let compactionSlack = 1 << 20

    init(paths: CollectionPaths, rules: RecordRules) {
        self.paths = paths
        self.rules = rules
    }

    var packPath: String { paths.base + "/pack" }
    /// `base/.gitattributes`: git merges the pack by keeping the lines of both sides.
    static let gitAttributes = "pack merge=union\n"

    /// The fields of the base copy with content hash `hash`; nil if there is none.
    /// Safe from any thread; the pack is read again only when it changed on disk.
    /// - Parameter hash: The manifest's hash for `id`; nil (no base) gives nil.
    public func fields(_ id: RecordID, hash: String?) -> Fields? {
        guard let hash else { return nil }
        if let pack = currentPack(), let fields = BasePack.fields(of: id, hash: hash, in: pack.bytes, index: pack.index, rules: rules) {
            return fields
        }
        guard let bytes = try? FileSystem.readFile(paths.baseFile(id.fileName)),
              let fields = try? JSONParser.parseObject(bytes),
              SHA256.contentHash(rules.canonicalBytes(fields)) == hash else { return nil }
        return fields
    }

    private func currentPack() -> LoadedPack? {
        guard let stat = try? FileSystem.stat(packPath) else { return nil }
        let stamp = [stat.size, stat.mtimeNanoseconds, stat.ctimeNanoseconds, Int64(bitPattern: stat.inode)]
        return loaded.withLock { cache in
            if let cache, cache.stamp == stamp { return cache }
            guard let bytes = try? FileSystem.readFile(packPath) else { return nil }
            cache = LoadedPack(stamp: stamp, bytes: bytes, index: BasePack.index(bytes))
            return cache
        }
    }

    /// Appends lines to the pack in one write and syncs them to disk, so the
    /// manifest saved next never names a copy that is not there. A pack that
    /// ends in a line cut short (a killed append) gets a line break first.
    func append(_ lines: [UInt8]) throws(FileSystemError) {
        guard !lines.isEmpty else { return }
        let path = packPath
        // Appending through a planted link would write base copies into any file: never follow one.
        let fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard fd >= 0 else {
            let code = errno
            throw FileSystem.refusedKind(path, code: code, operation: "append to") ?? FileSystemError(path: path, operation: "open", code: code)
        }
        defer { close(fd) }
        try FileSystem.requireOwnRegularFile(fd, path: path, operation: "append to")
        let size = try FileSystem.stat(descriptor: fd).size
        var bytes: [UInt8] = []
        if size == 0 {
            // Two branches that both synced both appended: git's union merge keeps
            // both sides' lines, which is exactly right for this file.
            try? FileSystem.writeAtomically(Array(Self.gitAttributes.utf8), to: paths.base + "/.gitattributes")
            bytes = Self.header(compactedSize: Self.headerLength + lines.count)
        } else {
            var last: UInt8 = 0
            if pread(fd, &last, 1, off_t(size - 1)) == 1, last != BasePack.newline { bytes.append(BasePack.newline) }
        }
        bytes += lines
        let failure = FileSystem.writeAll(bytes, to: fd)
        if failure != 0 { throw FileSystemError(path: path, operation: "append to", code: failure) }
        if fsync(fd) != 0 { throw FileSystemError(path: path, operation: "sync", code: errno) }
    }

    /// Rewrites the pack with only the copies `manifest` names, once stale
    /// copies have made it grow enough to be worth it. Call after the manifest
    /// is saved; the rewrite is atomic.
    func compactIfGrown(manifest: Manifest) throws(FileSystemError) {
        guard let stat = try? FileSystem.stat(packPath) else { return }
        // A header that cannot be read (its first append was cut short) counts as never compacted.
        let compactedSize = Self.compactedSize(packPath) ?? 0
        guard stat.size > Int64(Self.compactionGrowth * compactedSize + Self.compactionSlack) else { return }
        guard let pack = currentPack() else { return }
        let body = BasePack.compacted(pack.bytes, index: pack.index, current: manifest.entries.mapValues(\.hash)).bytes
        try FileSystem.writeAtomically(Self.header(compactedSize: Self.headerLength + body.count) + body, to: packPath, durable: true)
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
