import BooksyncCore

extension StatCache {
    /// The previous index, read alongside the directory listing instead of
    /// into a table: the scan writes the index in listing order, and a
    /// directory lists in the same order while it is unchanged (ext4 by name
    /// hash, APFS by name, tmpfs by creation), so the entry for the next file
    /// is nearly always the next line.
    ///
    /// A name not found next is looked for at most `lookahead` lines ahead;
    /// lines passed over wait in a table for their file (a file added or
    /// removed shifts the order by one). Memory is the table, not the index:
    /// bounded by `pendingLimit`, past which entries are simply not found and
    /// their files hashed again. Only cost, never correctness, depends on the order.
    final class Stream {
        let scanStartedAt: Int64
        let baseStamp: FileStamp
        let baseCount: Int64
        let directoryStamp: FileStamp
        private let reader: LineBlockReader
        private var block: [UInt8]
        private var position: Int
        private var pending: [String: Entry] = [:]
        /// Entry lines read so far.
        private(set) var lines = 0
        /// True once a line did not parse: the rest of the index is not used.
        private(set) var damaged = false
        static let lookahead = 4096
        static let pendingLimit = 1 << 17

        /// The index at `path` when its header is intact and names `fingerprint`.
        init?(path: String, fingerprint: String) {
            guard let reader = LineBlockReader(path: path), let first = reader.next({ Array($0) }) else { return nil }
            let header = first.withUnsafeBufferPointer { b -> (Header, FileStamp, FileStamp)? in
                guard let head = parseHeader(b), head.fingerprint(b, is: fingerprint) else { return nil }
                return (head, FileStamp(text: String(decoding: UnsafeBufferPointer(rebasing: b[head.baseStamp]), as: UTF8.self)),
                        FileStamp(text: String(decoding: UnsafeBufferPointer(rebasing: b[head.directoryStamp]), as: UTF8.self)))
            }
            guard let (head, baseStamp, directoryStamp) = header else { return nil }
            self.reader = reader
            block = first
            position = head.end
            scanStartedAt = head.scanStartedAt
            self.baseStamp = baseStamp
            baseCount = head.baseCount
            self.directoryStamp = directoryStamp
        }

        /// The entry of `name`, if the index has one (each is given out once).
        func entry(for name: String) -> Entry? {
            if let entry = pending.removeValue(forKey: name) { return entry }
            var passed = 0
            while passed < Self.lookahead, pending.count < Self.pendingLimit, let (lineName, entry) = nextLine() {
                if lineName == name { return entry }
                pending[lineName] = entry
                passed += 1
            }
            return nil
        }

        /// Reads to the end; the number of entry lines, or nil if the index is damaged.
        func finish() -> Int? {
            while nextLine() != nil {}
            return damaged || reader.failed ? nil : lines
        }

        private func nextLine() -> (String, Entry)? {
            guard !damaged else { return nil }
            if position == block.count {
                guard let next = reader.next({ Array($0) }) else { return nil }
                block = next
                position = 0
            }
            let parsed = block.withUnsafeBufferPointer { b -> (String, Entry, Int)? in
                guard let line = parseLine(b, at: position) else { return nil }
                func text(_ r: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self) }
                return (text(line.name), Entry(size: line.size, mtime: line.mtime, ctime: line.ctime, inode: line.inode,
                                               hash: ContentHash(text: text(line.hash)), clean: line.clean), line.end)
            }
            guard let (name, entry, end) = parsed else {
                damaged = true
                return nil
            }
            position = end
            lines += 1
            return (name, entry)
        }
    }
}
