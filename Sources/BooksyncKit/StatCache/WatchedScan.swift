import BooksyncCore

/// What the last full `status --offline` found, kept beside the watcher's
/// socket with the watcher's token from before it looked: the next status
/// asks the watcher what changed since that token, and needs to look only
/// at those files and at the ones this scan found differing.
///
/// Kept in the watcher's private folder (`WatcherSocket`), never in the
/// collection, so a cloned repository cannot plant one; and it is only
/// believed while the watcher vouches for its token, the manifest has the
/// stamp it had, and config.json the same fingerprint.
struct WatchedScan: Equatable {
    /// One file that differed from the base (or could not be a record).
    struct Differing: Equatable {
        /// The file's path relative to the collection directory.
        let fileName: String
        /// True for a name that cannot be a record (`UnusableFile`).
        let unusable: Bool
        /// Whether the file was there (false for a record deleted locally).
        let present: Bool
        /// A clean record file listed because it has other hard links.
        var linked = false
        /// Why an unusable name cannot be a record, as the scan said it (a
        /// folder's reason cannot be worked out again from its name alone).
        var message = ""
    }

    /// The watcher's token from before the scan started.
    var token: ChangeJournal.Token
    /// The manifest the scan compared with, and its stamp then.
    var manifest: String
    var manifestStamp: FileStamp
    /// Whether that manifest was read as canonical (so `ManifestLookup` works on it).
    var canonicalManifest: Bool
    /// config.json's fingerprint then.
    var fingerprint: String
    /// How many record files the scan found.
    var recordCount: Int
    var differing: [Differing]

    /// Most differing files kept: past that the next status scans anyway.
    static let maximumDiffering = 10_000
    private static let magic = "booksync-watched-scan 1"

    /// The record's bytes: NUL-terminated fields (a file name can hold a newline).
    func encoded() -> [UInt8] {
        var fields = [Self.magic, token.description, manifest, manifestStamp.text, canonicalManifest ? "1" : "0", fingerprint,
                      String(recordCount)]
        for file in differing {
            fields += [(file.unusable ? "u" : file.linked ? "l" : "r") + (file.present ? "1" : "0"), file.fileName, file.message]
        }
        var out: [UInt8] = []
        for field in fields {
            out += field.utf8
            out.append(0)
        }
        return out
    }

    /// The record in `bytes`; nil when damaged (the next status scans).
    static func decode(_ bytes: [UInt8]) -> WatchedScan? {
        var fields = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count >= 8, fields.removeLast().isEmpty, fields[0] == magic, let token = ChangeJournal.Token(fields[1]),
              let count = Int(fields[6]), (fields.count - 7) % 3 == 0
        else { return nil }
        var differing: [Differing] = []
        var i = 7
        while i < fields.count {
            let kind = fields[i]
            guard kind.utf8.count == 2, let first = kind.first, "url".contains(first), kind.last == "1" || kind.last == "0" else { return nil }
            differing.append(Differing(fileName: fields[i + 1], unusable: first == "u", present: kind.last == "1", linked: first == "l",
                                       message: fields[i + 2]))
            i += 3
        }
        return WatchedScan(token: token, manifest: fields[2], manifestStamp: FileStamp(text: fields[3]), canonicalManifest: fields[4] == "1",
                           fingerprint: fields[5], recordCount: count, differing: differing)
    }
}
