import BooksyncCore

/// Proof that a paged listing moves forward, so a server that never ends
/// (a `nextPageToken` forever, pages that alternate between two sets of
/// names) is a malformed answer, named, not a command that requests forever
/// and then reports a wrong listing.
///
/// Listings come in document-name order, and Firestore orders names by
/// their path segments, each compared by its UTF-8 bytes: every name must
/// come strictly after the one before, across pages too. A change query is
/// ordered by its change time first, so there the pair (time, name) must
/// increase. Page tokens of `documents.list` must never repeat, and a run
/// of empty pages is bounded. What is held stays small: the last name and
/// a hash per page token.
struct ListingOrder {
    private var last: (time: Timestamp?, segments: [Substring])?
    private var lastName = ""
    private var tokens = Set<Int>()
    private var emptyPages = 0

    /// Empty pages in a row a listing may send before it counts as endless.
    static let maximumEmptyPages = 64

    /// Accepts the next listed name (with its change time in a change query).
    mutating func accept(_ name: String, changeTime: String? = nil, during: String) throws(RemoteError) {
        let time = changeTime.flatMap { try? Timestamp(rfc3339: $0) }
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        if let last, !Self.isOrdered(last, (time, segments)) {
            throw .malformedResponse(during: during, detail: "\(TerminalEscaping.abbreviate(name)) came after \(TerminalEscaping.abbreviate(lastName)); a listing's names must increase")
        }
        last = (time, segments)
        lastName = name
    }

    /// Accepts where the next answer of a query ordered by a scope's fields
    /// continues (its cursor's values): it must never come back, or the
    /// server is sending the same answers again.
    mutating func accept(cursor: [Value], during: String) throws(RemoteError) {
        guard tokens.insert(CanonicalJSON.encodeInline(.array(cursor)).hashValue).inserted else {
            throw .malformedResponse(during: during, detail: "a query's answer ended where an earlier one did")
        }
    }

    /// Accepts a page's `nextPageToken` (nil: the last page); `documents` is
    /// how many the page listed.
    mutating func accept(pageToken: String?, documents: Int, during: String) throws(RemoteError) {
        emptyPages = documents == 0 ? emptyPages + 1 : 0
        guard let pageToken else { return }
        if emptyPages > Self.maximumEmptyPages {
            throw .malformedResponse(during: during, detail: "\(emptyPages) empty pages in a row, each with a next page")
        }
        guard tokens.insert(pageToken.hashValue).inserted else {
            throw .malformedResponse(during: during, detail: "a page token came back a second time")
        }
    }

    /// True when `next` comes strictly after `previous`.
    private static func isOrdered(_ previous: (time: Timestamp?, segments: [Substring]), _ next: (time: Timestamp?, segments: [Substring])) -> Bool {
        if let before = previous.time, let after = next.time, before != after { return before < after }
        return previous.segments.lexicographicallyPrecedes(next.segments, by: segmentPrecedes)
    }

    /// Firestore's order of two path segments: numeric ids (`__id42__`, the
    /// legacy form) first, by their number; other ids by their UTF-8 bytes.
    /// The emulator lists `__id9__` before `__id10__`, as the client SDKs order them.
    static func segmentPrecedes(_ a: Substring, _ b: Substring) -> Bool {
        switch (numericID(a), numericID(b)) {
        case let (x?, y?): return x < y
        case (_?, nil): return true
        case (nil, _?): return false
        case (nil, nil): return a.utf8.lexicographicallyPrecedes(b.utf8)
        }
    }

    /// The number of a numeric id `__id<n>__` (`-?` digits within 64 bits).
    private static func numericID(_ segment: Substring) -> Int64? {
        guard segment.hasPrefix("__id"), segment.hasSuffix("__"), segment.utf8.count > 6 else { return nil }
        return Int64(segment.dropFirst(4).dropLast(2))
    }
}
