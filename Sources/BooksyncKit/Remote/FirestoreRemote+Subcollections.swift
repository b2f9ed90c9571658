import BooksyncCore

/// Subcollections over the REST API (the manual's CollectionFormat and Firestore articles): every configured
/// subcollection is listed by collection-group queries, never a request per
/// parent document.
///
/// A group query (`"allDescendants": true`, parent = the database's documents
/// root) over the collection id `reviews` finds every `reviews` collection in
/// the database, so it is scoped by a `__name__` range, from
/// `…/documents/books/\u{0}` to `…/documents/books/\u{10FFFF}`: exactly the
/// documents below `books` (every bound must be a document name, so the end
/// cannot be `books0`; and `\u{FFFF}` would miss ids starting with a
/// character outside the Basic Multilingual Plane, whose UTF-8 sorts after
/// it: probed on the emulator). What the range still lets in (a `reviews`
/// collection below an unconfigured one, `books/dune/notes/n1/reviews/x`)
/// is dropped by the record id check (`RecordID(path:subcollections:)`).
/// Each group is paged like the collection itself, so listing 10,000 books
/// with 3 reviews each takes the collection's pages plus the group's pages:
/// 1 + 3 requests of names, however many parents.
extension FirestoreRemote {
    /// What one listing query covers: the collection's own documents, or one
    /// collection group below it.
    struct ListingScope: Sendable, Equatable {
        /// The collection id queried: the collection's last segment, or a subcollection's.
        let groupID: String?
        /// The collection's own documents.
        static let collection = ListingScope(groupID: nil)
        /// The subcollections named `id` at any depth below the collection.
        static func group(_ id: String) -> ListingScope { ListingScope(groupID: id) }
        var isGroup: Bool { groupID != nil }

        /// `books`, or `books/*/reviews` for messages.
        func describe(_ collectionPath: String) -> String {
            groupID.map { collectionPath + " (subcollections named \($0))" } ?? collectionPath
        }
    }

    /// `__name__` bounds: of the documents below the collection, or of those
    /// a pathspec can select (`FirestoreRemote+Ranges.swift`).
    struct NameRange: Sendable, Equatable {
        let lower: String
        let upper: String
        /// Whether `upper` itself is in the range.
        var upperIncluded = true

        /// `__name__ >= lower AND __name__ <= upper` (or `< upper`), as filters.
        var filters: [Value] {
            [("GREATER_THAN_OR_EQUAL", lower), (upperIncluded ? "LESS_THAN_OR_EQUAL" : "LESS_THAN", upper)].map { op, bound in
                Value.map(["fieldFilter": .map([
                    "field": .map(["fieldPath": .string("__name__")]), "op": .string(op),
                    "value": .map(["referenceValue": .string(bound)]),
                ])])
            }
        }
    }

    /// The scopes a full listing queries: the collection, then one group per
    /// distinct collection id the configured subcollection paths end in
    /// (`Subcollections.groupIDs`): 500 paths ending in `reviews` cost one
    /// query and their documents, not 500 queries.
    var listingScopes: [ListingScope] {
        [.collection] + rules.subcollections.groupIDs.map(ListingScope.group)
    }

    /// Every document below the collection, by name.
    var nameRange: NameRange {
        NameRange(lower: collectionName + "/\u{0}", upper: collectionName + "/\u{10FFFF}")
    }

    /// The `parent` and `collectionId` of a query in `scope`.
    func queryParent(_ scope: ListingScope) -> (parent: String, collectionID: String) {
        guard let group = scope.groupID else { return queryScope }
        return (documentsRoot, group)
    }

    /// The `from` clause: one collection, or a collection group.
    static func from(_ collectionID: String, group: Bool) -> Value {
        var from: Fields = ["collectionId": .string(collectionID)]
        if group { from["allDescendants"] = .bool(true) }
        return .map(from)
    }

    /// One filter as it is, several under a composite `AND`; nil for none.
    static func conjunction(_ filters: [Value]) -> Value? {
        switch filters.count {
        case 0: nil
        case 1: filters[0]
        default: .map(["compositeFilter": .map(["op": .string("AND"), "filters": .array(filters)])])
        }
    }

    /// The record id of a document name in our collection (a configured
    /// subcollection's included), or why it cannot be one; nil for a document
    /// a collection-group query found outside the configured paths (not ours).
    func recordID(fromName name: String) -> Result<RecordID, UnusableRemoteDocument>? {
        let prefix = collectionName + "/"
        guard name.hasPrefix(prefix) else {
            return .failure(UnusableRemoteDocument(name: name, message: "document is not in collection \(target.collectionPath)"))
        }
        let raw = String(name.dropFirst(prefix.count))
        do {
            return .success(try rules.recordID(raw))
        } catch {
            switch error {
            case .unconfiguredSubcollection, .notDocumentPath: return nil
            default: return .failure(UnusableRemoteDocument(name: raw, message: error.message))
            }
        }
    }
}
