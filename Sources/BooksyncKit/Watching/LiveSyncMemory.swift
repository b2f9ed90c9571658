import BooksyncCore

/// What a live sync remembers from round to round, so a long watch stays
/// quiet and safe: the deletions it made (the mass-delete guard adds them
/// up), and what it already told (a failure, a conflict or an invalid
/// document is reported once while it repeats, not at every poll).
struct RoundMemory {
    /// Deletions made since the watch started, per direction.
    private(set) var deletes: [SyncPhase: Int] = [:]
    /// Each direction's last failure, as its sentence.
    private var failures: [SyncPhase: String] = [:]
    /// Each direction's findings of its last round that stay until someone
    /// acts: conflicts, invalid files and documents, refused writes.
    private var lingering: [SyncPhase: Set<String>] = [:]

    /// Whether `error` is not the failure `phase` reported last (then it is remembered).
    mutating func isNewFailure(_ phase: SyncPhase, _ error: BooksyncError) -> Bool {
        let text = error.description
        defer { failures[phase] = text }
        return failures[phase] != text
    }

    /// Takes in a round that ran: counts its deletions, forgets its
    /// direction's failure, and returns it without the lingering findings
    /// its direction's previous round already reported.
    mutating func succeeded(_ report: SyncReport) -> SyncReport {
        let phase = report.command
        failures[phase] = nil
        deletes[phase, default: 0] += report.events.filter(\.kind.isDeletion).count
        let before = lingering[phase] ?? []
        var now = Set<String>()
        var shown = report
        shown.events = SyncEvents()
        shown.events += report.events.filter { event in
            guard event.kind.lingers else { return true }
            let key = "\(event.id.rawValue)\u{0}\(String(describing: event.kind))"
            now.insert(key)
            return !before.contains(key)
        }
        shown.unusableFiles = report.unusableFiles.filter { file in
            let key = "file\u{0}\(file.fileName)\u{0}\(file.message)"
            now.insert(key)
            return !before.contains(key)
        }
        shown.unusableRemote = report.unusableRemote.filter { document in
            let key = "remote\u{0}\(document.name)\u{0}\(document.message)"
            now.insert(key)
            return !before.contains(key)
        }
        lingering[phase] = now
        return shown
    }
}

extension SyncEventKind {
    /// A deletion the mass-delete guard counts: a pushed delete, or a pulled one.
    var isDeletion: Bool {
        switch self {
        case .pushed(.delete), .pulled(.delete): true
        default: false
        }
    }

    /// A finding that stays, round after round, until someone acts on it.
    var lingers: Bool {
        switch self {
        case .conflict, .pulled(.conflict), .remoteChangedSincePull, .invalidLocal, .invalidRemote, .rejected: true
        default: false
        }
    }
}

/// The base as a poll's change query needs it — the change mark, the size,
/// and each changed document's base revision — read again only when the
/// manifest file changed, and the watch's own mark, which moves on when a
/// poll found only documents the base already holds (the watch's own
/// pushes, read back for a minute by the change mark's margin) without a
/// pull to rewrite the manifest.
///
/// The manifest's entries are not held between polls (about 70 MB at a
/// million records, on top of what each round loads): a changed document's
/// revision is found by binary search in the file (`ManifestLookup`).
struct BaseSummary {
    /// What a poll needs of the manifest as a whole.
    struct Head {
        let changesSince: ChangeMark
        let count: Int
        /// Written as booksync writes it, so `ManifestLookup` can search it.
        let canonical: Bool
    }

    private var stamp: FileStamp?
    private var head: Head?
    /// A mark later than the manifest's, learned by polls that found nothing new.
    private var ownMark: ChangeMark?

    /// The base recorded against `remote`, when it has a change mark; nil
    /// otherwise (or when it cannot be read: the pull then says why).
    mutating func base(_ collection: CollectionDirectory, remote: any RemoteCollection) -> Head? {
        guard let stat = try? FileSystem.stat(collection.paths.manifest) else { return nil }
        let current = FileStamp(stat)
        if current != stamp {
            stamp = current
            var canonical = false
            head = (try? collection.manifestFile.load(for: remote, canonical: &canonical)).flatMap { manifest in
                manifest.changesSince.map { Head(changesSince: $0, count: manifest.entries.count, canonical: canonical) }
            }
        }
        return head
    }

    /// The mark to ask from: the manifest's, or the watch's own when later.
    func mark(of base: Head) -> ChangeMark {
        guard let own = ownMark, own.field == base.changesSince.field, own.scope == base.changesSince.scope, own.time > base.changesSince.time else { return base.changesSince }
        return own
    }

    /// Whether `found` holds nothing the base (the manifest at `manifestPath`)
    /// does not: every document at its base revision, no unusable one, the
    /// count (if asked) the base's. Then the mark moves on as a pull's would
    /// (`ChangeMark.after`). A manifest that cannot be searched gives false:
    /// the pull decides.
    mutating func holdsEverything(_ found: RemoteChanges, base: Head, manifestPath: String, field: String) -> Bool {
        guard found.unusable.isEmpty, found.count.map({ $0 == base.count }) ?? true else { return false }
        if !found.documents.isEmpty {
            guard base.canonical, let lookup = ManifestLookup(path: manifestPath) else { return false }
            for (id, document) in found.documents {
                guard case .entry(let entry) = lookup.find(id), entry.revision == document.revision else { return false }
            }
        }
        if !found.documents.isEmpty, let next = ChangeMark.after(field: field, readTime: found.readTime, unrecorded: []),
           next.time > mark(of: base).time {
            ownMark = ChangeMark(field: next.field, time: next.time, scope: base.changesSince.scope)
        }
        return true
    }
}
