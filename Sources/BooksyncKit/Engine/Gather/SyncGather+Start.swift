import BooksyncCore

/// How the gather stage's scan looks at the files: what it keeps for the
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

extension SyncGather {
    /// Starts the gather stage of any three-way command: scans the files
    /// against `manifest` (the base, already narrowed to `scope`).
    init(_ collection: CollectionDirectory, manifest: Manifest, scope: RecordScope, scanning choices: ScanChoices) throws(BooksyncError) {
        let scan = try collection.scanFiles(base: manifest, scope: scope, choices: choices)
        self.init(collection: collection, manifest: manifest, scan: scan, scope: scope)
    }
}

extension CollectionDirectory {
    /// Scans the record files, reading only those the stat cache cannot vouch
    /// for: the one place a `LocalScanner` is set up for a command.
    /// - Parameters:
    ///   - base: What the files are compared with (nil: nothing, every file counts as new).
    ///   - scope: Only the records in scope are examined (pathspecs).
    ///   - trustsIndex: False when every file must be read and hashed (`verify`).
    func scanFiles(base: Manifest?, scope: RecordScope = .everything, choices: ScanChoices = ScanChoices(),
                   trustsIndex: Bool = true) throws(BooksyncError) -> LocalScan {
        var scanner = LocalScanner(paths: paths, rules: rules, fingerprint: configFingerprint)
        scanner.trustsIndex = trustsIndex
        scanner.writeIndex = choices.writeIndex
        // Set after writeIndex: a scoped scan never writes the index.
        scanner.scope = scope
        scanner.keepsHashes = choices.keepHashes
        scanner.base = base
        scanner.baseStamp = choices.baseStamp
        if choices.keepChangedRecords { scanner.keepRecordsChangedFrom = base }
        return try scanner.scan()
    }

    /// Scans the record files (see `scanFiles`); for tests and tools that
    /// look at a collection's files without running a command.
    package func scanLocal(base: Manifest? = nil, baseStamp: FileStamp = .unknown, keepHashes: Bool = true,
                          scope: RecordScope = .everything) async throws(BooksyncError) -> LocalScan {
        try scanFiles(base: base, scope: scope, choices: ScanChoices(keepHashes: keepHashes, baseStamp: baseStamp))
    }
}
