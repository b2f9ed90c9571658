import BooksyncCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `status --offline` on an unchanged tree, proved from the stat cache alone
/// (see `StatCache`): the fast path that skips the manifest and, while the
/// directory's own stamp holds, even the directory listing.
extension StatCache {
    /// What streaming verification proved.
    struct CleanProof {
        /// Record files, all clean.
        let count: Int
        /// Files that had to be read again (their stat had changed, their bytes
        /// had not); the index was rewritten with their new stat.
        let rehashed: Int
    }

    /// One line's verdict.
    private enum LineVerdict {
        case unchanged
        /// Stat changed, bytes still hash to the line's content hash: the
        /// parsed line and the stat its new line records.
        case rehashed(Line, FileStat)
        case dirty
    }

    /// Proves an unchanged, clean tree straight from the index file, streamed
    /// block by block (a million entries cost one block of memory): the header
    /// must name `baseStamp`, and every entry must be clean and trusted by a
    /// fresh `fstatat` in `directory`. Returns nil as soon as anything differs.
    /// Entries are checked on several threads.
    ///
    /// With a `directoryStamp` (the header must name it: no file was added,
    /// removed or renamed), an entry whose stat changed (a `touch`, a checkout)
    /// still passes if its bytes hash to its content hash, and the index is
    /// then rewritten with the new stats, headed by `scanStartedAt` (taken
    /// before any stat), through a temporary file beside it.
    /// Without one, the caller compares `count` with the record files it
    /// listed; the names must then be record file names and distinct (no two
    /// with the same 64-bit hash: a collision only gives up the proof), so
    /// equal counts mean equal sets. `blockSize` is the index reader's (tests
    /// make it small to cross blocks).
    static func verifiesClean(indexAt indexPath: String, fingerprint: String, baseStamp: FileStamp, directoryStamp: FileStamp?,
                              directory: Int32, scanStartedAt: Int64, blockSize: Int = 1 << 22) -> CleanProof? {
        guard let reader = LineBlockReader(path: indexPath, blockSize: blockSize) else { return nil }
        var expected = -1
        var started: Int64 = 0
        var count = 0
        var rehashed = 0
        var headerEnd = 0
        var writer: AtomicFileWriter?
        var refreshable = true
        var nameHashes: [Int] = []
        let gaveUp = Atomic<Bool>(false)
        while let ok = reader.next({ block -> Bool in
            var first = 0
            if reader.offset == 0 {
                guard let head = parseHeader(block), head.fingerprint(block, is: fingerprint),
                      baseStamp.isSpelled(by: UnsafeBufferPointer(rebasing: block[head.baseStamp])),
                      directoryStamp.map({ $0.isSpelled(by: UnsafeBufferPointer(rebasing: block[head.directoryStamp])) }) ?? true,
                      head.baseCount >= 0
                else { return false }
                expected = head.baseCount > Int64(Int32.max) ? -2 : Int(head.baseCount)
                started = head.scanStartedAt
                first = head.end
                headerEnd = head.end
            }
            guard expected >= 0 else { return false }
            var starts: [Int] = []
            starts.reserveCapacity(block.count / 64)
            var i = first
            while i < block.count {
                starts.append(i)
                // memchr: a generic search cost more than the rest of an unchanged line's check.
                guard let end = memchr(block.baseAddress! + i, Int32(newline), block.count - i) else { return false }
                i = block.baseAddress!.distance(to: end.assumingMemoryBound(to: UInt8.self)) + 1
            }
            count += starts.count
            guard count <= expected else { return false }
            if directoryStamp == nil, !hashNames(block, starts, into: &nameHashes) { return false }
            let lineStarts = starts
            let scanStart = started
            let rehash = directoryStamp != nil
            let chunks = stride(from: 0, to: starts.count, by: 1024).map { ($0, min($0 + 1024, lineStarts.count)) }
            // One dirty line anywhere decides it, so the first one stops every
            // thread: a tree with a few edits then pays one stat pass (the full
            // comparison's), not two.
            nonisolated(unsafe) let b = block
            let verdicts = ParallelMap.map(chunks, chunkSize: 1) { (from, to) -> ChunkVerdict? in
                verifyChunk(b, lines: lineStarts, from: from, to: to, started: scanStart, directory: directory,
                            rehash: rehash, gaveUp: gaveUp)
            }
            var anyRehashed = false
            for verdict in verdicts {
                guard let verdict else { return false }
                rehashed += verdict.rehashed
                anyRehashed = anyRehashed || verdict.text != nil
            }
            guard refreshable, writer != nil || anyRehashed, let directoryStamp else { return true }
            if writer == nil {
                // The first changed line: start the new index with the lines before this block.
                guard let created = try? AtomicFileWriter(replacing: indexPath) else {
                    refreshable = false
                    return true
                }
                var head: [UInt8] = []
                appendHeader(scanStartedAt: scanStartedAt, fingerprint: fingerprint, baseStamp: baseStamp, baseCount: expected,
                             directoryStamp: directoryStamp, to: &head)
                created.append(head)
                guard FileSystem.copy(indexPath, from: headerEnd, to: reader.offset, into: { created.append($0) }) else {
                    refreshable = false
                    return true
                }
                writer = created
            }
            for ((from, to), verdict) in zip(chunks, verdicts) {
                if let text = verdict?.text {
                    text.withUnsafeBufferPointer { writer!.append($0) }
                } else {
                    let end = to < lineStarts.count ? lineStarts[to] : block.count
                    writer!.append(UnsafeBufferPointer(rebasing: block[lineStarts[from]..<end]))
                }
            }
            return true
        }) {
            guard ok else { return nil }
        }
        guard !reader.failed, count == expected else { return nil }
        if directoryStamp == nil {
            nameHashes.sort()
            for k in nameHashes.indices.dropFirst() where nameHashes[k] == nameHashes[k - 1] { return nil }
        }
        // Best effort, like every index write.
        if let writer { try? writer.commit() }
        return CleanProof(count: count, rehashed: rehashed)
    }

    /// Appends a hash of the name of each line at `starts`; false when one is
    /// not a record file name.
    private static func hashNames(_ b: UnsafeBufferPointer<UInt8>, _ starts: [Int], into hashes: inout [Int]) -> Bool {
        for start in starts {
            guard let tab = b[start...].firstIndex(of: Self.tab) else { return false }
            let name = UnsafeBufferPointer(rebasing: b[start..<tab])
            guard RecordID.isRecordFileName(String(decoding: name, as: UTF8.self)) else { return false }
            var hasher = Hasher()
            hasher.combine(bytes: UnsafeRawBufferPointer(name))
            hashes.append(hasher.finalize())
        }
        return true
    }

    /// What verifying a run of lines found, when none was dirty.
    private struct ChunkVerdict: Sendable {
        /// Lines whose stat had changed but whose bytes had not.
        var rehashed = 0
        /// The run's lines as the new index has them, when one was rehashed
        /// (nil: the run is unchanged, copied as it was).
        var text: [UInt8]?
    }

    /// Verifies the lines `from..<to` of a block (see `verifyLine`); nil when
    /// one is dirty, or is rehashed while `rehash` is false, or another thread
    /// gave up. One scratch buffer reads every touched file of the run and the
    /// rewritten lines go into one array: nothing is allocated per file.
    private static func verifyChunk(_ b: UnsafeBufferPointer<UInt8>, lines: [Int], from: Int, to: Int, started: Int64,
                                    directory: Int32, rehash: Bool, gaveUp: borrowing Atomic<Bool>) -> ChunkVerdict? {
        var verdict = ChunkVerdict()
        var scratch: ReadScratch?
        for line in from..<to {
            if line & 63 == 0, gaveUp.load(ordering: .relaxed) { return nil }
            let start = lines[line]
            let end = line + 1 < lines.count ? lines[line + 1] : b.count
            switch verifyLine(b, at: start, started: started, directory: directory, scratch: &scratch) {
            case .unchanged:
                verdict.text?.append(contentsOf: UnsafeBufferPointer(rebasing: b[start..<end]))
            case .rehashed(let parsed, let stat) where rehash:
                if verdict.text == nil {
                    // The first rehashed line of the run: the lines before it as they were.
                    let runEnd = to < lines.count ? lines[to] : b.count
                    var text: [UInt8] = []
                    text.reserveCapacity((runEnd - lines[from]) + (runEnd - lines[from]) / 8)
                    text.append(contentsOf: UnsafeBufferPointer(rebasing: b[lines[from]..<start]))
                    verdict.text = text
                }
                verdict.rehashed += 1
                appendLine(name: UnsafeBufferPointer(rebasing: b[parsed.name]), size: stat.size, mtime: stat.mtimeNanoseconds,
                           ctime: stat.ctimeNanoseconds, inode: stat.inode, hash: UnsafeBufferPointer(rebasing: b[parsed.hash]),
                           clean: true, to: &verdict.text!)
            case .rehashed, .dirty:
                gaveUp.store(true, ordering: .relaxed)
                return nil
            }
        }
        return verdict
    }

    /// One index line: clean, and its file's stat unchanged and not racy, or
    /// re-hashed to the same content (then its new stat, taken before reading).
    private static func verifyLine(_ b: UnsafeBufferPointer<UInt8>, at start: Int, started: Int64, directory: Int32,
                                   scratch: inout ReadScratch?) -> LineVerdict {
        guard let line = parseLine(b, at: start), line.clean else { return .dirty }
        // The name as a C string on the stack: no allocation per unchanged file.
        let nameLength = line.name.count
        guard nameLength > 0, nameLength < 256 else { return .dirty }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: nameLength + 1) { name -> LineVerdict in
            for k in 0..<nameLength { name[k] = CChar(bitPattern: b[line.name.lowerBound + k]) }
            name[nameLength] = 0
            // A file with other hard links is left to the full scan, which lists
            // it for a watched status (its other names are not watched).
            guard let stat = FileSystem.stat(directory: directory, cName: name.baseAddress!), stat.isRegularFile, stat.linkCount == 1
            else { return .dirty }
            if stat.size == line.size, stat.mtimeNanoseconds == line.mtime, stat.ctimeNanoseconds == line.ctime,
               stat.inode == line.inode, !isRacy(mtime: line.mtime, ctime: line.ctime, scanStartedAt: started) {
                return .unchanged
            }
            // Touched or racy: same bytes as hashed before means same, valid content.
            guard let known = ContentDigest(contentHashBytes: UnsafeBufferPointer(rebasing: b[line.hash])) else { return .dirty }
            if scratch == nil { scratch = ReadScratch() }
            guard let digest = scratch!.readExactly(directory: directory, cName: name.baseAddress!, size: stat.size, SHA256.contentDigest),
                  digest == known
            else { return .dirty }
            // The stat taken before reading: a change during the read shows next time.
            return .rehashed(line, stat)
        }
    }
}

extension CollectionDirectory {
    /// `status --offline` on an unchanged tree, proved from the stat cache alone:
    /// the manifest is the one the cache was written against, every record file
    /// is trusted by its stat (or, touched, still hashes to its content hash)
    /// and was clean, and there are as many as the base has records. When the
    /// directory itself is unchanged too, not even its listing is read. Nil when
    /// anything is different (then the full comparison runs).
    func quickCleanStatus() -> SyncStatus? {
        // The proof stats index entries by their names in the collection
        // directory and compares the directory's own stamp: a file added in a
        // subcollection folder changes neither, and a name with a '/' would be
        // resolved through folders unchecked. With subcollections the full
        // scan decides (still from the stat cache, file by file).
        guard rules.subcollections.isEmpty else { return nil }
        let stamp = manifestFile.stamp()
        guard stamp.isKnown, let header = StatCache.header(ofIndexAt: paths.index),
              let directory = try? FileSystem.openDirectory(paths.root)
        else { return nil }
        defer { FileSystem.closeDirectory(directory) }
        let now = WallClock.nowNanoseconds()
        if let rootStat = try? FileSystem.stat(descriptor: directory) {
            let directoryStamp = StatCache.stamp(of: rootStat, scanStartedAt: now)
            if directoryStamp.isKnown, header.directoryStamp == directoryStamp {
                // Same directory: the index alone decides, and a listing could not do better.
                guard let proof = StatCache.verifiesClean(
                    indexAt: paths.index, fingerprint: configFingerprint, baseStamp: stamp, directoryStamp: directoryStamp,
                    directory: directory, scanStartedAt: now)
                else { return nil }
                return SyncStatus(records: [], unusableFiles: [], unusableRemote: [], recordCount: proof.count, remoteCount: nil,
                                  filesRead: proof.rehashed)
            }
        }
        // An entry the last scan found not clean proves nothing is to be
        // proved: give up before listing or stat-ing anything, so a tree with
        // a few edits pays one stat pass (the full comparison's), not two.
        guard header.baseStamp == stamp, StatCache.allEntriesClean(indexAt: paths.index),
              let records = FileSystem.countEntries(paths.root, where: RecordID.isRecordFileName),
              let proof = StatCache.verifiesClean(
                  indexAt: paths.index, fingerprint: configFingerprint, baseStamp: stamp, directoryStamp: nil,
                  directory: directory, scanStartedAt: now),
              proof.count == records
        else { return nil }
        return SyncStatus(records: [], unusableFiles: [], unusableRemote: [], recordCount: records, remoteCount: nil, filesRead: 0)
    }
}
