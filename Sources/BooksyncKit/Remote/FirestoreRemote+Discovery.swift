import BooksyncCore

/// What lies below one collection of a database, found by
/// `FirestoreRemote.discover(_:)`: its own documents and, for every
/// subcollection path (collection ids from the collection down, as config.json
/// names them: `reviews`, `reviews/likes`, `notes/reviews`), how many
/// documents it holds. A path is there when it holds a document, whether or
/// not the documents on the way to it exist (Firestore keeps
/// `books/gone/notes/n1` when `books/gone` was deleted, or never written).
package struct DiscoveredCollection: Sendable, Equatable {
    /// The collection's path (`books`, or `users/u1/books`).
    package let path: String
    /// Its own (top-level) documents.
    package var documents = 0
    /// Documents by subcollection path.
    package var subcollections: [String: Int] = [:]

    package init(path: String, documents: Int = 0, subcollections: [String: Int] = [:]) {
        self.path = path
        self.documents = documents
        self.subcollections = subcollections
    }

    /// Every document below the collection, its subcollections' included.
    package var total: Int { subcollections.values.reduce(documents, +) }

    /// Counts one document by its path relative to the collection
    /// (`b1`, `b1/reviews/r1`): false when it is not a document path.
    package mutating func add(relativePath: Substring) -> Bool {
        let segments = relativePath.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count % 2 == 1, !segments.contains(where: \.isEmpty) else { return false }
        if segments.count == 1 {
            documents += 1
        } else {
            let path = stride(from: 1, to: segments.count, by: 2).map { String(segments[$0]) }.joined(separator: "/")
            subcollections[path, default: 0] += 1
        }
        return true
    }

    /// The subcollection paths booksync can sync, in config order, and those
    /// it cannot with the reason (`Subcollections.problem(withPath:)`: a
    /// collection id with `:`, or one that is not visible text).
    package var configurable: (paths: [String], refused: [(path: String, problem: String)]) {
        var paths: [String] = []
        var refused: [(path: String, problem: String)] = []
        for path in subcollections.keys.sorted(by: CanonicalJSON.utf8Less) {
            if let problem = Subcollections.problem(withPath: path) { refused.append((path, problem)) } else { paths.append(path) }
        }
        return (paths, refused)
    }
}

/// Discovery of a database's layout over the REST API (the manual's WholeProject article),
/// with a number of requests that does not grow with the number of parent
/// documents:
///
/// - Root collections: `POST …/documents:listCollectionIds`, paged (300 ids a
///   page). Firestore bills one document read per request (page).
/// - Everything below one collection: one names-only query (`select
///   __name__`) over *all descendants* of the database, of any collection id
///   (`"from": [{"allDescendants": true}]` without a `collectionId`, a kindless
///   query, as `firebase firestore:delete --recursive` lists what it deletes),
///   kept below the collection by a `__name__` range, in pages of 10,000
///   names ordered by name. Each name's path says which subcollection path it
///   is in, so subcollections are found at any depth, under documents that
///   do not exist too, with no request per document (`listCollectionIds` on
///   each document would cost a request, and a read, per document). Billed
///   like any query: one read per name returned, at least one per request.
extension FirestoreRemote {
    /// Collection ids per `listCollectionIds` page.
    static let collectionIDsPage = 300

    /// The collection ids directly below `documentPath` (relative to the
    /// database, `books/b1`), or below the database (the root collections)
    /// when nil, in the order Firestore gives them, every page followed.
    /// - Throws: `RemoteError` after retries, scrubbed of tokens.
    package func listCollectionIDs(below documentPath: String? = nil) async throws(RemoteError) -> [String] {
        let parent = documentPath.map { documentsRoot + "/" + $0 } ?? documentsRoot
        let url = endpoint.baseURL + URLPath.encode(parent) + ":listCollectionIds"
        let during = "list the collections of " + (documentPath ?? "\(target.project)/\(target.database)")
        var ids: [String] = []
        var pageToken: String?
        do throws(RemoteError) {
            repeat {
                var body: Fields = ["pageSize": .integer(Int64(Self.collectionIDsPage))]
                if let pageToken { body["pageToken"] = .string(pageToken) }
                let answer = try await client.send(HTTPRequest(method: "POST", url: url, body: Array(CanonicalJSON.encodeInline(.map(body)).utf8)),
                                                   during: during)
                guard case .map(let page) = answer else { throw RemoteError.malformedResponse(during: during, detail: "not a JSON object") }
                switch page["collectionIds"] {
                case .array(let items)?:
                    for item in items {
                        guard case .string(let id) = item else { throw RemoteError.malformedResponse(during: during, detail: "a collection id that is not a string") }
                        ids.append(id)
                    }
                case nil: break
                default: throw RemoteError.malformedResponse(during: during, detail: "collectionIds is not a list")
                }
                if case .string(let next)? = page["nextPageToken"], !next.isEmpty {
                    guard next != pageToken else { throw RemoteError.malformedResponse(during: during, detail: "the same page token twice") }
                    pageToken = next
                } else {
                    pageToken = nil
                }
            } while pageToken != nil
        } catch {
            throw error.redacted(await redaction())
        }
        return ids
    }

    /// What lies below each of `collectionPaths`, in their order: up to
    /// `parallelRequests` collections listed at once (each pages one query
    /// after another), so a database of many root collections is not read
    /// one round trip after another. The first failure cancels the listings
    /// under way, as a failure stopped the listing one after another: their
    /// pages would be billed reads for nothing.
    /// - Parameters:
    ///   - collectionPaths: Collections relative to the database (`books`).
    ///   - progress: Gets each page's count, from any of the listings.
    /// - Throws: The first `RemoteError` to arrive (see `discover(_:progress:)`).
    package func discover(_ collectionPaths: [String], progress: @escaping @Sendable (Int) -> Void = { _ in }) async throws(RemoteError) -> [DiscoveredCollection] {
        try await BoundedTaskGroup.map(collectionPaths, limit: Self.parallelRequests, afterFailure: .cancelRest, cancelled: client.cancelled()) {
            (path) throws(RemoteError) -> DiscoveredCollection in
            try await discover(path, progress: progress)
        }
    }

    /// Every document below the collection `collectionPath` (relative to the
    /// database), by name only, counted by subcollection path (see the type's
    /// comment for the query). `progress` gets each page's count.
    /// - Throws: `RemoteError` after retries, scrubbed of tokens; a name that
    ///   is not below the collection, or out of order, is a malformed answer.
    package func discover(_ collectionPath: String, progress: @escaping @Sendable (Int) -> Void = { _ in }) async throws(RemoteError) -> DiscoveredCollection {
        let collection = documentsRoot + "/" + collectionPath
        let prefix = collection + "/"
        let url = endpoint.baseURL + URLPath.encode(documentsRoot) + ":runQuery"
        let during = "list everything below \(collectionPath)"
        let range = NameRange(lower: prefix + "\u{0}", upper: prefix + "\u{10FFFF}")
        var found = DiscoveredCollection(path: collectionPath)
        var after: String?
        var order = ListingOrder()
        do throws(RemoteError) {
            repeat {
                let body = Self.descendantsQuery(range: range, after: after, limit: namesQueryBatch)
                let answer = try await client.send(HTTPRequest(method: "POST", url: url, body: body), during: during)
                guard case .array(let items) = answer else { throw RemoteError.malformedResponse(during: during, detail: "expected a JSON array") }
                var count = 0
                var last: String?
                for item in items {
                    guard case .map(let entry) = item else { throw RemoteError.malformedResponse(during: during, detail: "an entry that is not an object") }
                    if case .map(let error)? = entry["error"] {
                        let (code, message) = FirestoreHTTPClient.errorDetails(error)
                        throw RemoteError.rejected(during: during, status: 200, code: code.isEmpty ? GRPCCode.unknown.name : code, message: message)
                    }
                    guard case .map(let document)? = entry["document"] else { continue }
                    guard case .string(let name)? = document["name"] else { throw RemoteError.malformedResponse(during: during, detail: "a document without a name") }
                    guard name.utf8.starts(with: prefix.utf8), found.add(relativePath: Substring(name.utf8.dropFirst(prefix.utf8.count))) else {
                        throw RemoteError.malformedResponse(during: during, detail: "\(name) is not a document below \(collectionPath)")
                    }
                    try order.accept(name, during: during)
                    last = name
                    count += 1
                }
                progress(count)
                guard count >= namesQueryBatch, let last else { break }
                after = last
            } while true
        } catch {
            throw error.redacted(await redaction())
        }
        return found
    }

    /// How many documents lie below the collection `collectionPath`, its
    /// subcollections' at any depth included: the `count()` of the kindless
    /// query `discover` lists (one read per 1,000 counted, at least one).
    package func descendantCount(_ collectionPath: String) async throws(RemoteError) -> Int {
        let prefix = documentsRoot + "/" + collectionPath + "/"
        let range = NameRange(lower: prefix + "\u{0}", upper: prefix + "\u{10FFFF}")
        var query: Fields = ["from": .array([.map(["allDescendants": .bool(true)])])]
        if let filter = Self.conjunction(range.filters) { query["where"] = filter }
        do {
            return try await aggregateCount(parent: documentsRoot, structuredQuery: query, during: "count everything below \(collectionPath)")
        } catch {
            throw error.redacted(await redaction())
        }
    }

    /// The documents of this collection and of its configured subcollection
    /// groups, counted as `status` counts them (one `count()` per listing
    /// scope). Equal to `descendantCount` when every document below the
    /// collection is in a configured path; larger or smaller when not (a
    /// group's count takes in same-named collections below unconfigured ones).
    package func configuredCount() async throws(RemoteError) -> Int {
        do {
            return try await count()
        } catch {
            throw error.redacted(await redaction())
        }
    }

    /// The body of one names-only query over every descendant in `range`,
    /// of any collection id, `limit` names after `after`.
    static func descendantsQuery(range: NameRange, after: String?, limit: Int) -> [UInt8] {
        var query: Fields = [
            "from": .array([.map(["allDescendants": .bool(true)])]),
            "select": .map(["fields": .array([.map(["fieldPath": .string("__name__")])])]),
            "orderBy": .array([.map(["field": .map(["fieldPath": .string("__name__")]), "direction": .string("ASCENDING")])]),
            "limit": .integer(Int64(limit)),
        ]
        if let filter = conjunction(range.filters) { query["where"] = filter }
        if let after { query["startAt"] = .map(["values": .array([.map(["referenceValue": .string(after)])]), "before": .bool(false)]) }
        return Array(CanonicalJSON.encodeInline(.map(["structuredQuery": .map(query)])).utf8)
    }

    /// What `discover` costs for a collection of `documents` documents in all,
    /// by the pricing rules `FirestoreUsage.cost` applies: requests of 10,000
    /// names until one comes back short, one read per name and at least one
    /// per request (a last, empty page when the count is a multiple of 10,000).
    package func discoveryCost(documents: Int) -> (requests: Int, billedReads: Int) {
        let requests = documents / namesQueryBatch + 1
        return (requests, documents + (documents % namesQueryBatch == 0 ? 1 : 0))
    }
}
