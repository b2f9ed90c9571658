import BooksyncCore

extension SyncGather {
    /// Starts the gather stage of any three-way command: scans the files
    /// against `manifest` (the base, already narrowed to `scope`).
    init(_ collection: CollectionDirectory, manifest: Manifest, scope: RecordScope, scanning choices: ScanChoices) throws(BooksyncError) {
        let scan = try LocalScanner(for: collection, base: manifest, scope: scope, choices: choices).scan()
        self.init(collection: collection, manifest: manifest, scan: scan, scope: scope)
    }
}
