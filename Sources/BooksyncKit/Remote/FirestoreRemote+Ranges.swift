import BooksyncCore

/// Listing only the names a folder or glob pathspec can select (the manual's Scopes article):
/// one `__name__` range per id prefix (`RecordScope.listingPrefixes`), so `status 'b1*'` in a collection of 100,000 reads the names from `b1` to
/// `b2`, not 100,000 (each listed name is a billed read).
///
/// Firestore orders document names segment by segment, each segment by its
/// UTF-8 bytes, a shorter path before its descendants (probed on the
/// emulator). So the names whose path relative to the collection starts with
/// `dune` run from `…/books/dune` up to, not including, `…/books/dunf`; and
/// those below `dune/reviews/` from `…/dune/reviews/\u{0}` to `…/dune/reviews\u{0}/\u{0}`.
/// Every bound must be a document name, hence the `/\u{0}` after a
/// collection path. A range may hold more than the pattern selects (`dune*`
/// also holds `dunes/reviews/r1`); the scope narrows what was listed.
extension FirestoreRemote {
    /// The range of the document names below `collectionName` whose relative
    /// path starts with the raw `prefix`; nil when there is none narrower than
    /// everything (a prefix of only U+10FFFF characters).
    static func nameRange(below collectionName: String, prefix: String) -> NameRange? {
        var segments = prefix.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let partial = segments.removeLast()
        func name(_ path: [String]) -> String {
            collectionName + "/" + path.map(boundSegment).joined(separator: "/") + (path.count % 2 == 0 ? "/\u{0}" : "")
        }
        if !partial.isEmpty, let next = successor(partial) {
            return NameRange(lower: name(segments + [partial]), upper: name(segments + [next]), upperIncluded: false)
        }
        // Everything below the path `segments` (a folder, `dune/`).
        guard let last = segments.popLast() else { return nil }
        return NameRange(lower: name(segments + [last]), upper: name(segments + [last + "\u{0}"]), upperIncluded: false)
    }

    /// A bound's segment as Firestore takes it: `.`, `..` and `__…__` are
    /// refused as resource ids (the successor of `-` is `.`), so `\u{0}` is
    /// appended. No valid id lies between the two, so the range holds the same ids.
    static func boundSegment(_ segment: String) -> String {
        let reserved = segment == "." || segment == ".."
            || (segment.utf8.count >= 4 && segment.hasPrefix("__") && segment.hasSuffix("__"))
        return reserved ? segment + "\u{0}" : segment
    }

    /// The least string greater than every string that starts with `text`:
    /// its last character that is not U+10FFFF, plus one, with what followed
    /// dropped (a bound between ids, so it need not be one).
    static func successor(_ text: String) -> String? {
        var scalars = Array(text.unicodeScalars)
        while let last = scalars.popLast() {
            guard last.value < 0x10FFFF else { continue }
            // No surrogates; and no `/`, which no id holds: after `.` comes `0`.
            let next = last.value == 0xD7FF ? 0xE000 : last.value == 0x2E ? 0x30 : last.value + 1
            scalars.append(Unicode.Scalar(next)!)
            var out = String.UnicodeScalarView()
            out.append(contentsOf: scalars)
            return String(out)
        }
        return nil
    }

    /// Revisions of the documents whose ids start with one of `prefixes`, by
    /// one range query per prefix and scope (a prefix with a `/` cannot be a
    /// document of the collection itself, so only the subcollection groups
    /// are asked). Falls back to every name where no range fits, or on a
    /// server without `:runQuery`. See `RemoteCollection.listRevisions(prefixes:progress:)`.
    @_spi(Remote) public func listRevisions(prefixes: [String], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
        var ranges: [(prefix: String, range: NameRange)] = []
        for prefix in prefixes {
            guard let range = Self.nameRange(below: collectionName, prefix: prefix) else { return try await listRevisions(progress: progress) }
            ranges.append((prefix, range))
        }
        let redact = await redaction()
        var all = RemoteListing()
        var handedOn = false
        do {
            for (prefix, range) in ranges {
                for scope in listingScopes where scope.isGroup || !prefix.utf8.contains(UInt8(ascii: "/")) {
                    try await query(withBodies: false, scope: scope, range: range, progress: progress) { listing, _ in
                        handedOn = true
                        all.add(listing, redact: redact)
                    }
                }
            }
        } catch {
            guard !handedOn, Self.refusesQueries(error) else { throw error.redacted(await redaction()) }
            return try await listRevisions(progress: progress)
        }
        return all
    }

    /// The documents whose ids start with one of `prefixes`, with bodies, by
    /// one range query per prefix and scope, as `listRevisions(prefixes:progress:)`
    /// lists their names; every document where no range fits, or on a server
    /// without `:runQuery`. See `RemoteCollection.listDocuments(prefixes:batch:progress:)`.
    @_spi(Remote) public func listDocuments(prefixes: [String], batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                              progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
        var ranges: [(prefix: String, range: NameRange)] = []
        for prefix in prefixes {
            guard let range = Self.nameRange(below: collectionName, prefix: prefix) else {
                return try await listDocuments(batch: batch, progress: progress)
            }
            ranges.append((prefix, range))
        }
        let redact = await redaction()
        var handedOn = false
        do {
            for (prefix, range) in ranges {
                for scope in listingScopes where scope.isGroup || !prefix.utf8.contains(UInt8(ascii: "/")) {
                    try await query(withBodies: true, scope: scope, range: range, progress: progress) { listing, documents in
                        handedOn = true
                        var listing = listing
                        listing.unusable = listing.unusable.map { $0.redacted(redact) }
                        batch(listing, documents)
                    }
                }
            }
        } catch {
            guard !handedOn, Self.refusesQueries(error) else { throw error.redacted(await redaction()) }
            try await listDocuments(batch: batch, progress: progress)
        }
    }

    /// Whether the collection and its configured subcollections hold no
    /// document: a one-document query per scope, stopping at the first found.
    @_spi(Remote) public func isEmpty() async throws(RemoteError) -> Bool {
        var found = false
        do {
            for scope in listingScopes where !found {
                try await query(withBodies: false, scope: scope, limit: 1, progress: { _ in }) { listing, _ in
                    found = found || !listing.revisions.isEmpty || !listing.unusable.isEmpty
                }
            }
        } catch {
            guard Self.refusesQueries(error) else { throw error.redacted(await redaction()) }
            let listing = try await listRevisions(progress: { _ in })
            return listing.revisions.isEmpty && listing.unusable.isEmpty
        }
        return !found
    }
}

extension RemoteListing {
    /// One answer of a listing added to what the answers before it gave:
    /// its revisions, its unusable names scrubbed of secrets, the first read time.
    mutating func add(_ answer: RemoteListing, redact: SecretRedaction) {
        revisions.merge(answer.revisions) { _, new in new }
        unusable += answer.unusable.map { $0.redacted(redact) }
        readTime = readTime ?? answer.readTime
    }
}
