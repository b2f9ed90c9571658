import BooksyncCore

/// The records that differ from the base, in id order, without a list of the
/// whole collection: the files a scan without hashes found added (packed and
/// sorted in the scan, `LocalFiles.added`) merged with the others that differ:
/// changed, invalid, deleted (few, but for a push that rewrites or deletes
/// most of the collection). Clean records are not among them: they plan and
/// show nothing.
///
/// Against a remote listing, the records that differ there join them: each
/// listed at a revision the base does not hold, and each base record not
/// listed (deleted, or out of the scope). Every other record is clean on
/// both sides.
///
/// Push (`planPush`), `status` and pull classify these record by record
/// instead of classifying the whole collection at once, which for a first
/// push of a million records held more than the plan itself, and for a pull
/// of a million changes three times what the plan holds (the Benchmarks article).
struct DifferingRecords: Sendable {
    private let added: PackedRecordIDs
    /// Packed: in a pull of a million changes every listed id is here.
    private let rest: PackedRecordIDs

    init(scan: LocalScan, manifest: Manifest, listing: RemoteListing? = nil) {
        added = scan.files.added
        var rest = PackedRecordIDs()
        for id in scan.files.notCleanKeptByID { rest.append(id) }
        // Base records without a file, or (against a listing) not listed.
        for id in manifest.entries.keys where scan.files[id] == nil || listing.map({ !$0.revisions.contains(id) }) == true {
            rest.append(id)
        }
        if let listing {
            for (id, revision) in listing.revisions where !manifest.entries.holds(revision: revision, for: id) { rest.append(id) }
        }
        rest.sort()
        self.rest = rest
    }

    /// Calls `body` with each id once, in id order, for as long as it returns true.
    func walk(_ body: (RecordID) -> Bool) {
        var rest = self.rest.makeIterator()
        var added = self.added.makeIterator()  // decodes each packed id once
        var nextAdded = added.next(), nextRest = rest.next()
        var last: RecordID?
        while true {
            let id: RecordID
            if let candidate = nextAdded, nextRest.map({ candidate < $0 }) ?? true {
                id = candidate
                nextAdded = added.next()
            } else if let candidate = nextRest {
                id = candidate
                nextRest = rest.next()
            } else {
                return
            }
            // An id both sides differ on is in the list more than once, next to itself.
            if id == last { continue }
            last = id
            if !body(id) { return }
        }
    }
}
