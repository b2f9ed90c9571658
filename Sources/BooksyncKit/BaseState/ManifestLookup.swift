import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A few records' base entries, found in a canonical manifest.json by binary
/// search instead of reading all of it: a status that a watcher told which
/// ten files changed looks up ten entries among a million in about twenty
/// small reads each.
///
/// Only for a manifest known to be canonical (`Manifest.encode`: one record
/// a line, sorted by the id's UTF-8 bytes), which the caller knows from an
/// earlier full read of the same file (same stamp). Anything unexpected
/// gives `unknown`, and the caller reads the manifest whole.
final class ManifestLookup {
    /// What the manifest says of one id.
    enum Found: Equatable {
        case entry(BaseEntry)
        case absent
        /// The file is not as expected; read it whole instead.
        case unknown
    }

    private let descriptor: Int32
    /// Where the record lines start and end: after `  "records": {` and
    /// before `  }` (each line ends with its newline).
    private let start: Int
    private let end: Int

    /// Opens the manifest at `path`; nil when it cannot be read or does not
    /// start and end as a canonical manifest does.
    init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        var s = CStat()
        let size = fstat(fd, &s) == 0 ? Int(s.st_size) : 0
        let head = Self.read(fd, at: 0, count: min(size, 1 << 16))
        let opening = Array("\n  \"records\": {\n".utf8)
        let closing = Array("  }\n}\n".utf8)
        let empty = Array("\n  \"records\": {}\n}\n".utf8)
        if let at = Self.find(opening, in: head), Self.read(fd, at: size - closing.count, count: closing.count) == closing,
           at + opening.count <= size - closing.count {
            start = at + opening.count
            end = size - closing.count
        } else if size >= empty.count, Self.read(fd, at: size - empty.count, count: empty.count) == empty {
            // No records: every id is absent.
            start = size
            end = size
        } else {
            close(fd)
            return nil
        }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    /// The base entry of `id`.
    func find(_ id: RecordID) -> Found {
        let target = Array(id.rawValue.utf8)
        var low = start
        var high = end
        while low < high {
            let middle = low + (high - low) / 2
            guard let line = line(atOrAfter: middle) else { return .unknown }
            guard line.start < high else {
                high = middle
                continue
            }
            guard let (key, entry) = Self.parse(line.bytes) else { return .unknown }
            if key.lexicographicallyPrecedes(target) {
                low = line.start + line.bytes.count
            } else if key == target {
                return .entry(entry)
            } else {
                high = middle
            }
        }
        return .absent
    }

    /// The first line starting at or after `offset`, with its newline; its
    /// start is `end` when there is none before it.
    private func line(atOrAfter offset: Int) -> (start: Int, bytes: [UInt8])? {
        var lineStart = offset
        if offset > start {
            // The line starts after the first newline at or after offset - 1.
            var at = offset - 1
            while true {
                guard at < end else { return (end, []) }
                let chunk = Self.read(descriptor, at: at, count: min(4096, end - at))
                guard !chunk.isEmpty else { return nil }
                if let newline = chunk.firstIndex(of: 0x0A) {
                    lineStart = at + newline + 1
                    break
                }
                at += chunk.count
            }
        }
        guard lineStart < end else { return (end, []) }
        var bytes: [UInt8] = []
        var at = lineStart
        while at < end {
            let chunk = Self.read(descriptor, at: at, count: min(4096, end - at))
            guard !chunk.isEmpty else { return nil }
            if let newline = chunk.firstIndex(of: 0x0A) {
                bytes += chunk[...newline]
                return (lineStart, bytes)
            }
            bytes += chunk
            at += chunk.count
        }
        return nil
    }

    /// The id's UTF-8 bytes and the entry of a record line
    /// (`    "id": {"hash": "sha256:…", "revision": "…"},`).
    private static func parse(_ line: [UInt8]) -> ([UInt8], BaseEntry)? {
        var body = line.dropLast()  // the newline
        if body.last == UInt8(ascii: ",") { body = body.dropLast() }
        guard case .map(let object)? = try? JSONParser.parse([UInt8(ascii: "{")] + body + [UInt8(ascii: "}")], decodeTags: false),
              object.count == 1, let (key, value) = object.first, case .map(let fields) = value, fields.count == 2,
              case .string(let hash)? = fields["hash"], case .string(let revision)? = fields["revision"]
        else { return nil }
        return (Array(key.utf8), BaseEntry(hash: ContentHash(text: hash), revision: revision))
    }

    private static func read(_ fd: Int32, at offset: Int, count: Int) -> [UInt8] {
        guard offset >= 0, count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        return got > 0 ? Array(bytes[0..<got]) : []
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] && haystack[i..<(i + needle.count)].elementsEqual(needle) {
            return i
        }
        return nil
    }
}
