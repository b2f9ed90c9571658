import BooksyncCore

/// A Firestore collection over the REST API v1: listing and reading here,
/// writes in FirestoreRemote+Writes.swift, every request through the
/// retrying `FirestoreHTTPClient`.
///
/// - Listing is a `:runQuery` ordered by name, in batches continued after the
///   last name seen; it selects only names and revisions (`select __name__`)
///   unless bodies are wanted. On the emulator this is several times faster
///   than paging through `GET …/books` (the contributor docs' Benchmarks article), and it needs a request per up to 5,000 documents (10,000 without
///   bodies) instead of per 300.
/// - Bodies come from `:batchGet` (answers in any order: keyed by name).
/// - Writes go through `:batchWrite` (or `:commit` when atomic), preconditions
///   in the JSON body, one request per call within Firestore's limits.
/// - Every request has a timeout and is retried with backoff for 429, 5xx,
///   ABORTED and network errors; 401 refreshes a command token once.
public struct FirestoreRemote: Sendable {
    /// The collection: project, database and path.
    public let target: FirestoreTarget
    /// Auth, retries, timeout and `--verbose` lines of every request.
    let client: FirestoreHTTPClient
    let rules: RecordRules
    /// Documents per listing query, with and without bodies; tests use fewer.
    var firstQueryBatch = Self.firstQueryBatch
    var queryBatch = Self.defaultQueryBatch
    var namesQueryBatch = Self.defaultNamesQueryBatch
    /// How long a scoped listing reads at one time (`defaultPinnedReadLimit`); tests use less.
    var pinnedReadLimit = Self.defaultPinnedReadLimit

    /// Documents per `documents.list` page, when that is used (the emulator caps pages at 150).
    static let pageSize = 300
    /// Documents per listing query with bodies: the first asks for as many as a
    /// `documents.list` page holds; later ones for as many as fit in about
    /// `queryTargetBytes` at the size seen so far (documents can be up to 1 MiB),
    /// at most `defaultQueryBatch`. Few large queries rather than many small
    /// ones: the emulator scans the whole collection for every query (a
    /// 100,000-document collection costs it about a second per query, however
    /// small its limit), so the number of queries, not their size, made a
    /// first pull of 100,000 documents slow there (5,000 per query instead of
    /// 2,000: 21 queries instead of 51). On Firestore each query is a round trip.
    static let firstQueryBatch = 300
    static let defaultQueryBatch = 5_000
    static let queryTargetBytes = 8 << 20
    /// How long, from its first request, a scoped listing's later pages read
    /// at its first answer's time: Firestore refuses a read time more than
    /// an hour old (`FAILED_PRECONDITION`, "The requested 'read_time' is too
    /// old" on the emulator).
    static let defaultPinnedReadLimit: Duration = .seconds(50 * 60)
    /// Documents per listing query of names and revisions only (~200 bytes each).
    static let defaultNamesQueryBatch = 10_000
    /// Documents per `:batchGet` request.
    static let fetchBatch = 200
    /// Requests in flight at once, when one call needs several.
    static let parallelRequests = 4

    /// A remote for `target` at `endpoint`.
    /// - Parameters:
    ///   - target: The project, database and collection path.
    ///   - endpoint: Where Firestore answers (production or an emulator) and the tokens for it.
    ///   - rules: how documents become record files (the id field, the schema).
    ///   - transport: the HTTP seam (`URLSessionTransport.make()` in the app).
    ///   - retry: attempts, backoff and timeouts of every request.
    ///   - log: gets one line per request for `--verbose`, scrubbed of tokens.
    public init(
        target: FirestoreTarget, endpoint: FirestoreEndpoint, rules: RecordRules,
        transport: @escaping HTTPTransport, retry: RetryPolicy = RetryPolicy(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.target = target
        self.rules = rules
        client = FirestoreHTTPClient(endpoint: endpoint, transport: transport, retry: retry, log: log, usage: FirestoreUsage())
    }

    /// Where requests go and the token they carry.
    package var endpoint: FirestoreEndpoint { client.endpoint }

    /// Requests sent so far and the estimated billed reads of their answers,
    /// for `--verbose`'s closing line (shared by copies of this remote).
    package var usage: FirestoreUsage { client.usage }

    /// `firestore project/database collection`, with ` (emulator)` when the
    /// endpoint is the emulator, so a user sees which server a message is about.
    public var displayName: String {
        "firestore \(target.project)/\(target.database) \(target.collectionPath)" + (endpoint.isEmulator ? " (emulator)" : "")
    }

    /// This endpoint and collection, as a manifest records them.
    public var identity: TargetIdentity? {
        TargetIdentity(target: target, emulator: endpoint.isEmulator, baseURL: endpoint.baseURL)
    }

    var documentsRoot: String { target.documentsRoot }
    var collectionName: String { documentsRoot + "/" + target.collectionPath }

    func documentName(_ id: RecordID) -> String { collectionName + "/" + id.rawValue }

    // MARK: listing

    /// Revisions of every document by `:runQuery` batches of up to 10,000
    /// names (`documents.list` pages on a server without it); see
    /// `RemoteCollection.listRevisions`. `progress` gets each batch's count.
    /// - Throws: `RemoteError` after retries, scrubbed of tokens.
    @_spi(Remote) public func listRevisions(progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
        try await listRevisions(into: RemoteRevisions(), progress: progress)
    }

    /// `listRevisions(progress:)`, each answer set into `revisions` as it arrives.
    @_spi(Remote) public func listRevisions(into revisions: RemoteRevisions, progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> RemoteListing {
        let redact = await redaction()
        var all = RemoteListing(revisions: revisions)
        do {
            try await list(withBodies: false, progress: progress) { listing, _ in
                MallocArenas.returnFreePages()  // the previous answer's values, freed by now
                all.add(listing, redact: redact)
            }
        } catch {
            throw error.redacted(await redaction())
        }
        return all
    }

    /// Every document with its body: 300 in the first answer, then as many as
    /// fit in about 8 MiB (at most 5,000); `batch` and `progress` are called
    /// once per answer, in order.
    /// See `RemoteCollection.listDocuments`.
    /// - Throws: `RemoteError` after retries, scrubbed of tokens.
    @_spi(Remote) public func listDocuments(batch: @escaping @Sendable (RemoteListing, [RecordID: RemoteDocument]) -> Void,
                              progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) {
        let redact = await redaction()
        do {
            try await list(withBodies: true, progress: progress) { listing, documents in
                var listing = listing
                listing.unusable = listing.unusable.map { $0.redacted(redact) }
                batch(listing, documents)
            }
        } catch {
            throw error.redacted(await redaction())
        }
    }

    /// The whole collection, by `:runQuery`; a server that does not offer it
    /// (a gateway answering 404 or 501 UNIMPLEMENTED) is paged through
    /// `documents.list` instead, as the manual's Firestore article first described.
    /// Each answer's documents go to `each` as it arrives.
    private func list(withBodies: Bool, progress: @escaping @Sendable (Int) -> Void,
                      each: (RemoteListing, [RecordID: RemoteDocument]) -> Void) async throws(RemoteError) {
        var handedOn = false
        do {
            for scope in listingScopes {
                try await query(withBodies: withBodies, scope: scope, progress: progress) { listing, documents in
                    handedOn = true
                    each(listing, documents)
                }
            }
        } catch {
            // Refused before any answer: the server has no :runQuery.
            guard !handedOn, case .rejected(_, let status, let code, _) = error, Self.refusesQueries(error) else { throw error }
            // Subcollections are found by collection-group queries only; listing
            // the collection page by page would silently miss them.
            guard rules.subcollections.isEmpty else { throw error }
            // Nor can a page filter by the scope: listing every document would
            // take those outside it for the collection's (seed --delete would delete them).
            guard rules.scope == nil else { throw error }
            client.log(":runQuery refused (\(status) \(code)): listing page by page")
            try await page(withBodies: withBodies, progress: progress, each: each)
        }
    }

    /// Whether `error` is a server saying it has no `:runQuery` (a gateway
    /// answering 404 or 501 UNIMPLEMENTED), so listing goes page by page.
    static func refusesQueries(_ error: RemoteError) -> Bool {
        guard case .rejected(_, let status, let code, _) = error else { return false }
        return status == 404 || status == 501 || GRPCCode(name: code) == .unimplemented
    }

    /// `parent` and `collectionId` of a query over this collection.
    var queryScope: (parent: String, collectionID: String) {
        let slash = collectionName.lastIndex(of: "/")!  // documentsRoot has slashes
        return (String(collectionName[..<slash]), String(collectionName[collectionName.index(after: slash)...]))
    }

    /// Queries the whole collection in batches ordered by name, each continuing
    /// after the last document of the one before; names and revisions only
    /// (`select __name__`) unless `withBodies`. With `changedSince`, only the
    /// documents whose change field is at or after the mark, ordered by it.
    /// The first answer's listing carries the server's read time.
    /// `range` narrows the names further (a pathspec's); `limit` asks for one
    /// answer of at most that many documents instead of every page. The next
    /// answer is asked for once `each` has returned (it may wait).
    func query(withBodies: Bool, changedSince: ChangeMark? = nil, scope: ListingScope = .collection, range: NameRange? = nil, limit: Int? = nil,
               progress: @escaping @Sendable (Int) -> Void,
               each: (RemoteListing, [RecordID: RemoteDocument]) async -> Void) async throws(RemoteError) {
        let (parent, collectionID) = queryParent(scope)
        let url = endpoint.baseURL + URLPath.encode(parent) + ":runQuery"
        let what = scope.describe(target.collectionPath)
        let during = changedSince == nil ? "list \(what)" : "query the changes of \(what)"
        let range = range ?? (scope.isGroup ? nameRange : nil)
        var batch = limit ?? (withBodies ? firstQueryBatch : namesQueryBatch)
        let orderFields = scope.isGroup ? [] : rules.scope?.inequalityFields ?? []
        var after: QueryCursor?
        var first = true
        var order = ListingOrder()
        // In a scope's order names need not increase: each may come once.
        var seen = Set<String>()
        // In a scope's order a document edited between two pages can move
        // back past the cursor and be missed (then reported as having left
        // the scope, and as new on the next command), or forward onto a later
        // page. Later pages read at the first answer's time instead: one
        // snapshot, nothing moves. That is the answer's last read time, up to
        // which its documents are unchanged (the first one, kept for the
        // change mark, is the safe side there). Firestore reads at most an
        // hour back, so a listing that has run for `pinnedReadLimit` reads
        // its remaining pages at the present, where those moves can happen
        // again: then a page of only documents listed before is no server
        // going round in circles (the cursor must still advance).
        var pinned: String?
        let started = ContinuousClock.now
        var unpinned = false
        repeat {
            if pinned != nil, ContinuousClock.now - started > pinnedReadLimit { (pinned, unpinned) = (nil, true) }
            let request = Self.listQuery(collectionID, after: after, limit: batch, withBodies: withBodies, changedSince: changedSince,
                                         group: scope.isGroup, range: range, filter: scope.isGroup ? nil : rules.scope,
                                         documentsRoot: documentsRoot, readTime: pinned)
            let answer = try await client.sendMeasured(HTTPRequest(method: "POST", url: url, body: request), during: during,
                                                       entries: AnswerEntries(member: nil, placeholder: .map(["document": .map([:])])))
            let bytes = answer.bytes
            guard case .array(let items) = answer.value else { throw .malformedResponse(during: during, detail: "expected a JSON array") }
            var found = ListedDocuments(withBodies: withBodies)
            var count = 0
            // Documents in the answer, with those listed on an earlier page.
            var listed = 0
            var last: QueryCursor?
            for (index, item) in items.enumerated() {
                guard case .map(var entry) = item else { throw .malformedResponse(during: during, detail: "an entry that is not an object") }
                let refused = answer.refused[index]
                if let refused {
                    entry = ["document": .map(try refusedDocument(refused, at: ["document"], during: during))]
                    if let time = JSONParser.string(at: ["readTime"], in: refused.bytes) { entry["readTime"] = .string(time) }
                }
                if case .map(let error)? = entry["error"] {
                    let (code, message) = FirestoreHTTPClient.errorDetails(error)
                    throw .rejected(during: during, status: 200, code: code.isEmpty ? GRPCCode.unknown.name : code, message: message)
                }
                if first, case .string(let time)? = entry["readTime"] {
                    if found.listing.readTime == nil { found.listing.readTime = time }
                    if !orderFields.isEmpty { pinned = time }
                }
                guard case .map(let document)? = entry["document"] else { continue }  // readTime-only entries
                listed += 1
                // In a scope's order a page continues after the last document
                // whose values it has: one the parser refused (its values
                // unread) comes again on the next page, and is not handed on
                // twice; nor is one that moved forward since it was listed
                // (unpinned), though the page continues after it.
                let values = orderFields.map { Self.rawValue(of: document, at: $0) }
                func cursor(_ name: String) -> QueryCursor? {
                    values.contains(where: { $0 == nil }) ? nil
                        : QueryCursor(name: name, changeTime: changedSince.flatMap { Self.changeTime(of: document, field: $0.field) },
                                      orderValues: values.compactMap { $0 })
                }
                if !orderFields.isEmpty, case .string(let name)? = document["name"], !seen.insert(name).inserted {
                    last = cursor(name) ?? last
                    continue
                }
                let name = try found.add(document, remote: self, during: during, unreadable: refused?.reason)
                last = cursor(name) ?? last
                if orderFields.isEmpty { try order.accept(name, changeTime: last?.changeTime, during: during) }
                count += 1
            }
            if !orderFields.isEmpty {
                // A server going round in circles lists nothing new, or ends
                // where it did before; a page that is not full ends the listing anyway.
                if listed >= batch, count == 0, !unpinned || last == nil {
                    throw .malformedResponse(during: during, detail: "an answer listed only documents listed before")
                }
                if let last { try order.accept(cursor: last.orderValues + [.string(last.name)], during: during) }
            }
            first = false
            await each(found.listing, found.documents)
            progress(count)
            guard limit == nil, listed >= batch else { break }
            // A full page of documents the parser refused has no values to continue after.
            guard let last else {
                throw .malformedResponse(during: during, detail: "a full page of documents booksync cannot read, so the listing cannot go on past them")
            }
            if changedSince != nil, last.changeTime == nil {
                throw .malformedResponse(during: during, detail: "\(last.name) was returned without a timestamp in the change field")
            }
            after = last
            if withBodies { batch = min(queryBatch, max(1, Self.queryTargetBytes / max(1, bytes / max(1, listed)))) }
        } while true
    }

    /// Pages through `documents.list` to the end; names and revisions only
    /// (`mask.fieldPaths=__name__`) unless `withBodies`.
    private func page(withBodies: Bool, progress: @escaping @Sendable (Int) -> Void,
                      each: (RemoteListing, [RecordID: RemoteDocument]) -> Void) async throws(RemoteError) {
        var pageToken: String?
        let collectionURL = endpoint.baseURL + URLPath.encode(collectionName)
        let during = "list \(target.collectionPath)"
        var order = ListingOrder()
        repeat {
            var url = collectionURL + "?pageSize=\(Self.pageSize)" + (withBodies ? "" : "&mask.fieldPaths=__name__")
            if let pageToken { url += "&pageToken=" + URLPath.encodeQueryValue(pageToken) }
            let answer = try await client.sendMeasured(HTTPRequest(method: "GET", url: url), during: during,
                                                       entries: AnswerEntries(member: "documents", placeholder: .map([:])))
            guard case .map(let page) = answer.value else { throw .malformedResponse(during: during, detail: "not a JSON object") }
            var listed = 0
            if case .array(let items)? = page["documents"] {
                var found = ListedDocuments(withBodies: withBodies)
                for (index, item) in items.enumerated() {
                    guard case .map(var document) = item else { throw .malformedResponse(during: during, detail: "a document that is not an object") }
                    let refused = answer.refused[index]
                    if let refused { document = try refusedDocument(refused, at: [], during: during) }
                    try order.accept(try found.add(document, remote: self, during: during, unreadable: refused?.reason), during: during)
                }
                each(found.listing, found.documents)
                progress(items.count)
                listed = items.count
            }
            if case .string(let next)? = page["nextPageToken"], !next.isEmpty { pageToken = next } else { pageToken = nil }
            try order.accept(pageToken: pageToken, documents: listed, during: during)
        } while pageToken != nil
    }

    /// Where a listing query continues: after this document (and, for a
    /// change query, after its change time; in a scope's order, after its
    /// values of the scope's inequality fields, as the server sent them).
    struct QueryCursor: Equatable {
        let name: String
        let changeTime: String?
        var orderValues: [Value] = []
    }

    /// The body of one listing query: the collection in name order, `limit`
    /// documents after `after` (from the start if nil). With `changedSince`,
    /// only documents whose change field is at or after the mark, in order of
    /// that field, then name.
    /// With `group`, a collection-group query over every collection named
    /// `collectionID` (`allDescendants`, see `ListingScope`), which `range`
    /// (the collection's `__name__` range, or narrower) keeps below the collection.
    /// With `filter` (the collection's scope), only the documents that match,
    /// ordered first by the scope's inequality fields as Firestore requires
    /// (`ScopeExpression.inequalityFields`); names-only answers then also carry those fields,
    /// for the cursor. With `readTime`, the documents as they were then.
    static func listQuery(_ collectionID: String, after: QueryCursor?, limit: Int, withBodies: Bool, changedSince: ChangeMark? = nil,
                          group: Bool = false, range: NameRange? = nil, filter: ScopeExpression? = nil, documentsRoot: String = "",
                          readTime: String? = nil) -> [UInt8] {
        let byName = Value.map(["field": .map(["fieldPath": .string("__name__")]), "direction": .string("ASCENDING")])
        let orderFields = filter?.inequalityFields ?? []
        func ascending(_ path: String) -> Value { .map(["field": .map(["fieldPath": .string(path)]), "direction": .string("ASCENDING")]) }
        var query: [String: Value] = [
            "from": .array([Self.from(collectionID, group: group)]),
            "orderBy": .array(orderFields.map { ascending($0.description) } + [byName]),
            "limit": .integer(Int64(limit)),
        ]
        if !withBodies {
            // A field below another selected one comes with it: a path is not
            // asked for beside its own ancestor (`a` and `a.b`), which
            // a projection need not accept.
            let outermost = orderFields.filter { path in
                !orderFields.contains { $0.segments.count < path.segments.count && Array(path.segments.prefix($0.segments.count)) == $0.segments }
            }
            let selected = ["__name__"] + outermost.map(\.description)
            query["select"] = .map(["fields": .array(selected.map { .map(["fieldPath": .string($0)]) })])
        }
        var cursor: [Value] = after.map { $0.orderValues + [.map(["referenceValue": .string($0.name)])] } ?? []
        var filters = range?.filters ?? []
        if let filter { filters.append(filter.restFilter(documentsRoot: documentsRoot)) }
        if let changedSince {
            let field = FieldPathSyntax.quoted(changedSince.field)
            filters.append(.map(["fieldFilter": .map([
                "field": .map(["fieldPath": .string(field)]), "op": .string("GREATER_THAN_OR_EQUAL"),
                "value": .map(["timestampValue": .string(changedSince.time.rfc3339)]),
            ])]))
            query["orderBy"] = .array([ascending(field)] + orderFields.map { ascending($0.description) } + [byName])
            if let after { cursor.insert(.map(["timestampValue": .string(after.changeTime ?? "")]), at: 0) }
        }
        if let filter = Self.conjunction(filters) { query["where"] = filter }
        if !cursor.isEmpty { query["startAt"] = .map(["values": .array(cursor), "before": .bool(false)]) }
        var body: [String: Value] = ["structuredQuery": .map(query)]
        if let readTime { body["readTime"] = .string(readTime) }
        return Array(CanonicalJSON.encodeInline(.map(body)).utf8)
    }

    /// The value at `path` in a document as the server sent it (a REST
    /// value such as `{"integerValue": "4"}`), for a query cursor.
    static func rawValue(of document: [String: Value], at path: FieldPath) -> Value? {
        guard case .map(var fields)? = document["fields"] else { return nil }
        for (index, segment) in path.segments.enumerated() {
            guard let value = fields[segment] else { return nil }
            if index == path.segments.count - 1 { return value }
            guard case .map(let wrapper) = value, case .map(let map)? = wrapper["mapValue"], case .map(let inner)? = map["fields"] else { return nil }
            fields = inner
        }
        return nil
    }

    /// The `timestampValue` of `field` in a document as the server sent it, if it is a timestamp.
    static func changeTime(of document: [String: Value], field: String) -> String? {
        guard case .map(let fields)? = document["fields"], case .map(let value)? = fields[field],
              case .string(let time)? = value["timestampValue"] else { return nil }
        return time
    }

    // MARK: bodies

    /// Bodies by `:batchGet`, 200 ids per request and up to 4 requests in
    /// flight; `progress` is called (from those tasks) with each request's id
    /// count. Ids Firestore reports missing are absent from the result.
    /// - Throws: `RemoteError` for the first request that fails after retries
    ///   (no further request starts), or for an answer that cannot be read.
    @_spi(Remote) public func fetch(_ ids: [RecordID], progress: @escaping @Sendable (Int) -> Void) async throws(RemoteError) -> [RecordID: RemoteDocument] {
        let batches = stride(from: 0, to: ids.count, by: Self.fetchBatch).map { Array(ids[$0..<min($0 + Self.fetchBatch, ids.count)]) }
        let results: [[RecordID: RemoteDocument]]
        do {
            results = try await BoundedTaskGroup.map(batches, limit: Self.parallelRequests, cancelled: client.cancelled()) { (batch) throws(RemoteError) -> [RecordID: RemoteDocument] in
                let documents = try await self.fetchBatch(batch)
                progress(batch.count)
                return documents
            }
        } catch {
            throw error.redacted(await redaction())
        }
        return results.reduce(into: [:]) { all, part in all.merge(part) { a, _ in a } }
    }

    private func fetchBatch(_ ids: [RecordID]) async throws(RemoteError) -> [RecordID: RemoteDocument] {
        let during = "read \(ids.count) document\(ids.count == 1 ? "" : "s") of \(target.collectionPath)"
        let request = Value.map(["documents": .array(ids.map { .string(documentName($0)) })])
        let answer = try await client.sendMeasured(
            HTTPRequest(method: "POST", url: endpoint.baseURL + URLPath.encode(documentsRoot) + ":batchGet", body: Array(CanonicalJSON.encodeInline(request).utf8)),
            during: during, entries: AnswerEntries(member: nil, placeholder: .map(["found": .map([:])])))
        guard case .array(let items) = answer.value else { throw .malformedResponse(during: during, detail: "expected a JSON array") }
        var documents: [RecordID: RemoteDocument] = [:]
        for (index, item) in items.enumerated() {
            guard case .map(let entry) = item else { throw .malformedResponse(during: during, detail: "an entry is not an object") }
            if let refused = answer.refused[index] {
                let document = try decodeDocument(try refusedDocument(refused, at: ["found"], during: during), during: during, unreadable: refused.reason)
                documents[document.id] = document
            } else if case .map(let found)? = entry["found"] {
                let document = try decodeDocument(found, during: during)
                documents[document.id] = document
            } else if entry["missing"] == nil {
                throw .malformedResponse(during: during, detail: "an entry is neither found nor missing")
            }
        }
        return documents
    }
}

/// The seam's conformance is SPI with the seam: an app reaches Firestore
/// through `RecordStore.firestore` or the facade's SPI methods.
@_spi(Remote) extension FirestoreRemote: RemoteCollection {}
