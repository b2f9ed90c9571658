import BooksyncCore

/// The change-field path (the manual's Firestore article, "What a command costs"): one query for the
/// documents changed since a mark and one `count()`, instead of listing
/// every name. For an unchanged collection of 100,000 documents that is
/// 1 + 100 billed reads instead of 100,000.
extension FirestoreRemote {
    /// The documents whose change field is at or after `mark`, with bodies
    /// (batches like a first pull's listing), and with `counting` the
    /// collection's count, asked at the same time; nil when the collection
    /// has no change field, or `mark` is for another field.
    /// - Throws: `RemoteError` after retries, scrubbed of tokens.
    @_spi(Remote) public func changes(since mark: ChangeMark, counting: Bool, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteChanges? {
        guard let field = rules.changeField, mark.isFor(field: field, scope: rules.scope) else { return nil }
        let redact = await redaction()
        async let counted = counting ? countResult().map(Optional.some) : .success(nil)
        var changes = RemoteChanges(documents: [:], count: nil, readTime: nil)
        do {
            // One query per scope (the collection, each subcollection group), not per parent.
            for scope in listingScopes {
                try await query(withBodies: true, changedSince: mark, scope: scope, progress: progress) { listing, documents in
                    changes.documents.merge(documents) { _, new in new }
                    changes.unusable += listing.unusable.map { $0.redacted(redact) }
                    changes.readTime = changes.readTime ?? listing.readTime
                }
            }
            changes.count = try await counted.get()
        } catch {
            throw error.redacted(await redaction())
        }
        return changes
    }

    /// The same query and count as `changes(since:counting:progress:)`, each
    /// answer's documents handed to `batch` as it arrives; the next answer is
    /// asked for once `batch` returns, so a caller that waits there holds
    /// a bounded number of answers. The result holds the count, the read
    /// time and the unusable names, no documents.
    /// - Throws: `RemoteError` after retries, scrubbed of tokens.
    @_spi(Remote) public func changes(since mark: ChangeMark, counting: Bool, batch: (RemoteListing, [RecordID: RemoteDocument]) async -> Void,
                        progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteChanges? {
        guard let field = rules.changeField, mark.isFor(field: field, scope: rules.scope) else { return nil }
        let redact = await redaction()
        async let counted = counting ? countResult().map(Optional.some) : .success(nil)
        var summary = RemoteChanges(documents: [:], count: nil, readTime: nil)
        do {
            for scope in listingScopes {
                try await query(withBodies: true, changedSince: mark, scope: scope, progress: progress) { listing, documents in
                    var listing = listing
                    listing.unusable = listing.unusable.map { $0.redacted(redact) }
                    summary.unusable += listing.unusable
                    summary.readTime = summary.readTime ?? listing.readTime
                    await batch(listing, documents)
                }
            }
            summary.count = try await counted.get()
        } catch {
            throw error.redacted(await redaction())
        }
        return summary
    }

    /// `count()`, scrubbed of tokens; see `RemoteCollection.documentCount`.
    @_spi(Remote) public func documentCount() async throws(RemoteError) -> Int? {
        do {
            return try await count()
        } catch {
            throw error.redacted(await redaction())
        }
    }

    /// `count()` as a value, so it can run beside the query.
    private func countResult() async -> Result<Int, RemoteError> {
        do {
            return .success(try await count())
        } catch {
            return .failure(error)
        }
    }

    /// The number of documents in the collection and its configured
    /// subcollection groups (`:runAggregationQuery` with `count`, one per
    /// scope; billed one read per 1,000 counted). A group's count also takes
    /// in same-named collections below unconfigured ones: then the count does
    /// not add up, and the caller falls back to the full listing (correct,
    /// only dearer).
    func count() async throws(RemoteError) -> Int {
        var total = 0
        for scope in listingScopes { total += try await count(scope) }
        return total
    }

    private func count(_ scope: ListingScope) async throws(RemoteError) -> Int {
        let (parent, collectionID) = queryParent(scope)
        let during = "count \(scope.describe(target.collectionPath))"
        var structuredQuery: Fields = ["from": .array([Self.from(collectionID, group: scope.isGroup)])]
        if scope.isGroup, let filter = Self.conjunction(nameRange.filters) { structuredQuery["where"] = filter }
        if !scope.isGroup, let filter = rules.scope { structuredQuery["where"] = filter.restFilter(documentsRoot: documentsRoot) }
        return try await aggregateCount(parent: parent, structuredQuery: structuredQuery, during: during)
    }

    /// The `count()` of a query under `parent` (`:runAggregationQuery`).
    func aggregateCount(parent: String, structuredQuery: Fields, during: String) async throws(RemoteError) -> Int {
        let query = Value.map(["structuredAggregationQuery": .map([
            "structuredQuery": .map(structuredQuery),
            "aggregations": .array([.map(["alias": .string("n"), "count": .map([:])])]),
        ])])
        let body = try await client.send(
            HTTPRequest(method: "POST", url: endpoint.baseURL + URLPath.encode(parent) + ":runAggregationQuery",
                        body: Array(CanonicalJSON.encodeInline(query).utf8)),
            during: during)
        guard case .array(let items) = body else { throw .malformedResponse(during: during, detail: "expected a JSON array") }
        for item in items {
            guard case .map(let entry) = item else { continue }
            if case .map(let error)? = entry["error"] {
                let (code, message) = FirestoreHTTPClient.errorDetails(error)
                throw .rejected(during: during, status: 200, code: code.isEmpty ? GRPCCode.unknown.name : code, message: message)
            }
            guard case .map(let result)? = entry["result"], case .map(let fields)? = result["aggregateFields"],
                  case .map(let n)? = fields["n"] else { continue }
            switch n["integerValue"] {
            case .string(let text)?: if let value = Int(text), value >= 0 { return value }
            case .integer(let value)?: if value >= 0 { return Int(value) }
            default: break
            }
            throw .malformedResponse(during: during, detail: "the count is not a non-negative integer")
        }
        throw .malformedResponse(during: during, detail: "no count in the answer")
    }
}

/// Firestore's field path syntax for one top-level field: a simple name
/// (`updatedAt`) as it is, anything else in backticks with `` ` `` and `\`
/// escaped by a backslash (`` `updated-at` ``).
enum FieldPathSyntax {
    static func quoted(_ name: String) -> String {
        // The one notation booksync writes, also for conflicts and diffs.
        FieldPath(field: name).description
    }
}
