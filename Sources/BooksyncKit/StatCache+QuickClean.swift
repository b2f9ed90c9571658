import BooksyncCore
import Synchronization

/// `status --offline` on an unchanged tree, proved from the stat cache alone
/// (see `StatCache`): the fast path that skips the manifest and, while the
/// directory's own stamp holds, even the directory listing.
extension StatCache {
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
        let parsed = bytes.withUnsafeBufferPointer { b -> Header? in
            guard let head = parseHeader(b), head.fingerprint(b, is: fingerprint),
                  baseStamp.utf8.elementsEqual(UnsafeBufferPointer(rebasing: b[head.baseStamp])),
                  directoryStamp.utf8.elementsEqual(UnsafeBufferPointer(rebasing: b[head.directoryStamp])),
                  // A damaged count must not size an allocation: the proof needs one
                  // line (at least one byte) per counted entry.
                  head.baseCount >= 0, head.baseCount <= Int64(b.count - head.end)
            else { return nil }
            return head
        }
        guard let head = parsed else { return nil }
        let count = Int(head.baseCount)
        // Line starts, then the lines split among threads.
        var starts: [Int] = []
        starts.reserveCapacity(count + 1)
        var i = head.end
        while i < bytes.count {
            starts.append(i)
            guard let end = bytes[i...].firstIndex(of: newline) else { return nil }
            i = end + 1
        }
        guard starts.count == count else { return nil }
        let lineStarts = starts
        let started = head.scanStartedAt
        let chunks = stride(from: 0, to: starts.count, by: 1024).map { ($0, min($0 + 1024, starts.count)) }
        // Per chunk: nil if a line is dirty, else the re-hashed lines (index, new bytes).
        // One dirty line anywhere decides it, so the first one stops every
        // thread: a tree with a few edits then pays one stat pass (the full
        // comparison's), not two.
        let gaveUp = Atomic<Bool>(false)
        let verdicts = bytes.withUnsafeBufferPointer { buffer -> [[(Int, [UInt8])]?] in
            nonisolated(unsafe) let b = buffer
            return ParallelMap.map(chunks, chunkSize: 1) { (from, to) -> [(Int, [UInt8])]? in
                var rehashed: [(Int, [UInt8])] = []
                for line in from..<to {
                    if line & 63 == 0, gaveUp.load(ordering: .relaxed) { return nil }
                    switch verifyLine(b, at: lineStarts[line], started: started, directory: directory) {
                    case .unchanged: continue
                    case .rehashed(let text): rehashed.append((line, text))
                    case .dirty:
                        gaveUp.store(true, ordering: .relaxed)
                        return nil
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
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 64)
        appendHeader(scanStartedAt: scanStartedAt, fingerprint: fingerprint, baseStamp: baseStamp, baseCount: count,
                     directoryStamp: directoryStamp, to: &out)
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
        guard let line = parseLine(b, at: start), line.clean else { return .dirty }
        // The name as a C string on the stack: no allocation per unchanged file.
        let nameLength = line.name.count
        guard nameLength > 0, nameLength < 256 else { return .dirty }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: nameLength + 1) { name -> LineVerdict in
            for k in 0..<nameLength { name[k] = CChar(bitPattern: b[line.name.lowerBound + k]) }
            name[nameLength] = 0
            guard let stat = FileSystem.stat(directory: directory, cName: name.baseAddress!), stat.isRegularFile else { return .dirty }
            if stat.size == line.size, stat.mtimeNanoseconds == line.mtime, stat.ctimeNanoseconds == line.ctime,
               stat.inode == line.inode, !isRacy(mtime: line.mtime, ctime: line.ctime, scanStartedAt: started) {
                return .unchanged
            }
            // Touched or racy: same bytes as hashed before means same, valid content.
            let hash = UnsafeBufferPointer(rebasing: b[line.hash])
            guard let content = FileSystem.readFile(directory: directory, cName: name.baseAddress!),
                  SHA256.contentHash(content).utf8.elementsEqual(hash)
            else { return .dirty }
            // The stat taken before reading: a change during the read shows next time.
            var text: [UInt8] = []
            appendLine(name: UnsafeBufferPointer(rebasing: b[line.name]), size: stat.size, mtime: stat.mtimeNanoseconds,
                       ctime: stat.ctimeNanoseconds, inode: stat.inode, hash: hash, clean: true, to: &text)
            return .rehashed(text)
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
        let stamp = manifestStamp()
        guard stamp != "-", let bytes = try? FileSystem.readFile(paths.index),
              let directory = try? FileSystem.openDirectory(paths.root)
        else { return nil }
        defer { FileSystem.closeDirectory(directory) }
        let now = WallClock.nowNanoseconds()
        if let rootStat = try? FileSystem.stat(descriptor: directory) {
            let directoryStamp = StatCache.stamp(of: rootStat, scanStartedAt: now)
            if directoryStamp != "-", StatCache.directoryStamp(of: bytes) == directoryStamp {
                // Same directory: the index alone decides, and a listing could not do better.
                guard let proof = StatCache.verifiesClean(
                    bytes, fingerprint: configFingerprint, baseStamp: stamp, directoryStamp: directoryStamp,
                    directory: directory, scanStartedAt: now)
                else { return nil }
                if let refreshed = proof.refreshedIndex {
                    // Best effort, like every index write.
                    try? FileSystem.writeAtomically(refreshed, to: paths.index)
                }
                return SyncStatus(records: [], unusableFiles: [], unusableRemote: [], recordCount: proof.count, remoteCount: nil,
                                  filesRead: proof.rehashed)
            }
        }
        // An entry the last scan found not clean proves nothing is to be
        // proved: give up before listing or stat-ing anything, so a tree with
        // a few edits pays one stat pass (the full comparison's), not two.
        guard let cache = StatCache.decode(bytes, fingerprint: configFingerprint), cache.baseStamp == stamp,
              cache.entries.values.allSatisfy(\.clean),
              let names = try? FileSystem.listDirectory(paths.root)
        else { return nil }
        let records = names.filter(RecordID.isRecordFileName)
        guard records.count == cache.baseCount else { return nil }
        let gaveUp = Atomic<Bool>(false)
        let verdicts = ParallelMap.map(records, chunkSize: 2048) { name -> Bool in
            guard !gaveUp.load(ordering: .relaxed),
                  let entry = cache.entries[name], entry.clean,
                  let stat = try? FileSystem.stat(directory: directory, name: name), stat.isRegularFile,
                  cache.trusts(entry, stat)
            else {
                gaveUp.store(true, ordering: .relaxed)
                return false
            }
            return true
        }
        guard !verdicts.contains(false) else { return nil }
        return SyncStatus(records: [], unusableFiles: [], unusableRemote: [], recordCount: records.count, remoteCount: nil, filesRead: 0)
    }
}
