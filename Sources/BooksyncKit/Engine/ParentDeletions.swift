import BooksyncCore

/// A document deleted by a sync that still has subcollection records
/// (the manual's CollectionFormat article): Firestore keeps a document's subcollections when the
/// document is deleted, and booksync never deletes them implicitly either,
/// so it says so instead of leaving them orphaned in silence.
public struct ParentDeletion: Sendable, Equatable {
    /// The deleted document (`dune`).
    public let parent: RecordID
    /// The subcollection records below it that remain (`dune/reviews/r1`, …),
    /// at any depth, as far as this directory knows them.
    public let remainingChildren: Int
}

extension SyncReport {
    /// The deletions in `events` (pulled or pushed, done or planned) whose
    /// documents still have subcollection records among `known` that the same
    /// sync does not delete, sorted by parent.
    /// - Parameter known: every record id the directory knows after the sync:
    ///   the base's and the local files'.
    static func parentDeletions(events: some Sequence<SyncEvent>, known: [some Sequence<RecordID>], subcollections: Subcollections) -> [ParentDeletion] {
        guard !subcollections.isEmpty else { return [] }
        var deleted: Set<RecordID> = []
        for event in events {
            switch event.kind {
            case .pulled(.delete), .pushed(.delete): deleted.insert(event.id)
            default: break
            }
        }
        guard !deleted.isEmpty else { return [] }
        var seen: Set<RecordID> = []
        var counts: [RecordID: Int] = [:]
        for ids in known {
            for id in ids where !id.isTopLevel && !deleted.contains(id) && seen.insert(id).inserted {
                var ancestor = id.parent
                while let current = ancestor {
                    if deleted.contains(current) { counts[current, default: 0] += 1 }
                    ancestor = current.parent
                }
            }
        }
        return counts.map { ParentDeletion(parent: $0.key, remainingChildren: $0.value) }.sorted { $0.parent < $1.parent }
    }
}
