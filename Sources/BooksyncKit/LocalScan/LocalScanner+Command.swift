import BooksyncCore

/// How a command's scan looks at the files: what it keeps for the
/// command's later stages, and whether it may update the stat cache.
struct ScanChoices: Sendable {
    /// False for a dry run, which writes nothing, not even the stat cache.
    var writeIndex = true
    /// Keep the hashes of changed files: false when no remote content will be
    /// compared with them (push, offline status).
    var keepHashes = true
    /// Keep the parsed records that differ from the base, for push to send
    /// without a second read.
    var keepChangedRecords = false
    /// The manifest's stamp, taken before the base was read, so the stat
    /// cache can remember which records were clean (`.unknown`: it does not).
    var baseStamp = FileStamp.unknown
}

extension LocalScanner {
    /// A scanner for `collection`'s record files as a command scans them,
    /// reading only those the stat cache cannot vouch for: the one place a
    /// `LocalScanner` is set up for a command.
    /// - Parameters:
    ///   - base: What the files are compared with (nil: nothing, every file counts as new).
    ///   - scope: Only the records in scope are examined (pathspecs).
    ///   - trustsIndex: False when every file must be read and hashed (`verify`).
    init(for collection: CollectionDirectory, base: Manifest?, scope: RecordScope = .everything,
         choices: ScanChoices = ScanChoices(), trustsIndex: Bool = true) {
        self.init(paths: collection.paths, rules: collection.rules, fingerprint: collection.configFingerprint)
        self.trustsIndex = trustsIndex
        self.scope = scope
        // A scoped scan never writes the index (whether or not `scope`'s
        // observer runs in an initializer).
        writeIndex = choices.writeIndex && scope.isEverything
        keepsHashes = choices.keepHashes
        self.base = base
        baseStamp = choices.baseStamp
        if choices.keepChangedRecords { keepRecordsChangedFrom = base }
    }
}
