import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a pull is about to write into record files, recorded before it
/// writes them (`pull-journal` in the remote's sync state, local only).
///
/// A pull saves the manifest at most about once a second, so a pull killed
/// between two saves leaves files that hold newer remote versions than the
/// manifest names. Read against the old base, such a file looks like a local
/// edit: the next `sync` would push it over whatever the app wrote since
/// (an app that set the document back to its earlier value saw it replaced
/// by the pulled one), or report a conflict on a file nobody touched.
///
/// So each chunk's writes and removals are appended here before any of its
/// files is touched, and the journal is removed once a manifest that records
/// them is saved. The next command that takes the lock (or reads the base
/// without it) replays the journal: an entry whose file holds exactly what
/// the pull meant to write (or, for a removal, no file) records that remote
/// version as the base, as the killed pull would have; any other entry (not
/// yet written, or edited since) is dropped, which leaves the old base, as
/// before. Replaying is idempotent, so a kill during the replay is harmless.
///
/// One line per entry: `W TAB <file hash> TAB <revision> TAB <base pack line>`
/// for a write or merge (the file's canonical content hash, which differs
/// from the base copy's after a field merge), `D TAB - TAB - TAB <encoded id>`
/// for a removal. Not synced to disk: like the record files it protects, it
/// covers booksync being killed, not the machine losing power (the manual's Safety article).
struct PullJournal: Sendable {
    /// `pull-journal` in the sync state of the remote in use.
    let path: String

    init(paths: CollectionPaths) {
        path = paths.pullJournal
    }

    /// One planned change of a record file and the base change it brings.
    struct Entry: Sendable {
        /// The canonical content hash the file will have; nil: the file is removed.
        let fileHash: ContentHash?
        /// What the base records once the file holds it.
        let change: BaseChange
    }

    /// Whether a journal is there (a pull runs, or one was killed).
    var exists: Bool { FileSystem.exists(path) }

    /// The journal line of `entry`; nil for one that cannot be written as a
    /// line (a revision with a tab or line break), which then simply cannot
    /// be replayed: the old base stays, as without a journal.
    static func line(_ entry: Entry) -> [UInt8]? {
        switch (entry.fileHash, entry.change) {
        case (let hash?, .recorded(let base, _, let packLine)):
            guard !base.revision.utf8.contains(where: { $0 == tab || $0 == newline }) else { return nil }
            return Array("W\t\(hash.text)\t\(base.revision)\t".utf8) + packLine
        case (nil, .forgotten(let id)):
            return Array("D\t-\t-\t\(id.encodedName)\n".utf8)
        default:
            return nil
        }
    }

    /// Appends `entries` in one write, before their files are written. Never
    /// through a link: a planted `pull-journal` link is refused.
    func append(_ entries: [Entry]) throws(FileSystemError) {
        var bytes: [UInt8] = []
        for entry in entries { if let line = Self.line(entry) { bytes += line } }
        guard !bytes.isEmpty else { return }
        let fd = try FileSystem.openForAppending(path)
        defer { close(fd) }
        let failure = FileSystem.writeAll(bytes, to: fd)
        if failure != 0 { throw FileSystemError(path: path, operation: "append to", code: failure) }
    }

    /// Adds the journal to `.booksync/.gitignore` where an older booksync's
    /// `init` did not list it, so `git add -A` after a killed pull never
    /// commits it (a clone would replay it). Best effort: a journal that is
    /// committed is harmless, only noise.
    static func ensureIgnored(paths: CollectionPaths) {
        guard let bytes = try? FileSystem.readFilePrefix(paths.gitignore, count: 1 << 16), bytes.count < 1 << 16 else { return }
        let text = String(decoding: bytes, as: UTF8.self)
        guard !text.contains("/pull-journal") else { return }
        let lines = (text.isEmpty || text.hasSuffix("\n") ? "" : "\n") + "/pull-journal\n/remotes/*/pull-journal\n"
        try? FileSystem.writeAtomically(Array((text + lines).utf8), to: paths.gitignore)
    }

    /// Removes the journal once the manifest records everything in it.
    func remove() {
        unlink(path)
    }

    /// The base changes of the entries whose files hold what the journal
    /// says, in journal order (a later entry for the same record wins).
    /// Lines that cannot be read (cut short by the kill, damaged, planted)
    /// are skipped: at worst a file keeps looking edited, as without a journal.
    func confirmedChanges(paths: CollectionPaths, rules: RecordRules) -> [BaseChange] {
        guard let reader = LineBlockReader(path: path, maximumLine: Self.maximumLine) else { return [] }
        var changes: [BaseChange] = []
        while let _: Void = reader.next({ block in
            var start = 0
            while start < block.count, let end = block[start...].firstIndex(of: Self.newline) {
                if let entry = Self.entry(UnsafeBufferPointer(rebasing: block[start..<end]), rules: rules),
                   Self.fileHolds(entry, paths: paths, rules: rules) {
                    changes.append(entry.change)
                }
                start = end + 1
            }
        }) {}
        return changes
    }

    /// The content hashes of the files the journaled writes put in each
    /// folder (absolute; only folders reached without a link): what a killed
    /// pull was writing, so that a swap file holding exactly that is known
    /// for its download, not a file it swapped out of place.
    func plannedWrites(paths: CollectionPaths, rules: RecordRules) -> [String: Set<ContentHash>] {
        guard let reader = LineBlockReader(path: path, maximumLine: Self.maximumLine) else { return [:] }
        var planned: [String: Set<ContentHash>] = [:]
        while let _: Void = reader.next({ block in
            var start = 0
            while start < block.count, let end = block[start...].firstIndex(of: Self.newline) {
                if let entry = Self.entry(UnsafeBufferPointer(rebasing: block[start..<end]), rules: rules), let hash = entry.fileHash,
                   let id = entry.change.id, let file = try? paths.recordFile(id) {
                    planned[FileSystem.split(file).directory, default: []].insert(hash)
                }
                start = end + 1
            }
        }) {}
        return planned
    }

    /// The entry of one line (without its LF), with its base copy checked
    /// against its hash; nil for a line that is not one.
    static func entry(_ line: UnsafeBufferPointer<UInt8>, rules: RecordRules) -> Entry? {
        var fields: [Range<Int>] = []
        var start = 0
        while fields.count < 3, let tab = line[start...].firstIndex(of: Self.tab) {
            fields.append(start..<tab)
            start = tab + 1
        }
        guard fields.count == 3 else { return nil }
        let text = { (range: Range<Int>) in String(decoding: UnsafeBufferPointer(rebasing: line[range]), as: UTF8.self) }
        let rest = UnsafeBufferPointer(rebasing: line[start...])
        switch text(fields[0]) {
        case "D":
            guard let id = RecordID.fromEncodedName(text(start..<line.count)), configured(id, rules) else { return nil }
            return Entry(fileHash: nil, change: .forgotten(id))
        case "W":
            guard let parts = BasePack.parts(of: rest),
                  let id = RecordID.fromEncodedName(String(decoding: UnsafeBufferPointer(rebasing: rest[parts.name]), as: UTF8.self)),
                  configured(id, rules) else {
                return nil
            }
            let baseHash = ContentHash(text: String(decoding: UnsafeBufferPointer(rebasing: rest[parts.hash]), as: UTF8.self))
            guard BasePack.verifiedFields(json: UnsafeBufferPointer(rebasing: rest[parts.json]), hash: baseHash, rules: rules, id: id) != nil else {
                return nil
            }
            let revision = text(fields[2])
            guard !revision.isEmpty else { return nil }
            return Entry(fileHash: ContentHash(text: text(fields[1])),
                         change: .recorded(BaseEntry(hash: baseHash, revision: revision), id, packLine: Array(rest) + [newline]))
        default:
            return nil
        }
    }

    /// Whether `id` is a record of the collection as config.json has it now
    /// (a subcollection removed since the pull is no longer synced).
    private static func configured(_ id: RecordID, _ rules: RecordRules) -> Bool {
        id.isTopLevel || (try? RecordID(path: id.rawValue, subcollections: rules.subcollections)) != nil
    }

    /// Whether the record's file is as `entry` planned: no file for a
    /// removal, or a valid record whose canonical content hash is the
    /// planned one. Never follows a link (a link is not the planned file).
    static func fileHolds(_ entry: Entry, paths: CollectionPaths, rules: RecordRules) -> Bool {
        guard let id = entry.change.id, let file = try? paths.recordFile(id) else { return false }
        guard let expected = entry.fileHash else { return !FileSystem.exists(file) }
        guard let bytes = try? FileSystem.readFile(file) else { return false }
        if SHA256.contentHash(bytes) == expected { return true }
        guard case .success(let fields) = rules.parse(bytes) else { return false }
        return SHA256.contentHash(rules.canonicalBytes(fields, id: id)) == expected
    }

    /// The longest line read back: as long as the base pack's.
    static let maximumLine = BaseCopyStore.maximumLine + 4096
    private static let tab = UInt8(ascii: "\t")
    private static let newline = UInt8(ascii: "\n")
}
