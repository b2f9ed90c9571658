/// Where the base's knowledge of the remote ends, for a collection with a
/// change field (config `"changeField"`, the manual's Firestore article, "What a command costs"): every
/// document whose change field is older than `time` is reflected in the base,
/// so `status` and `pull` only query the documents changed since (`field >=
/// time`) and count the collection, instead of listing every name.
///
/// Kept in the manifest (`"changesSince"`), so a fresh clone of a committed
/// collection reads only the changes too.
///
/// Why the mark is the server's read time minus a minute, not the newest
/// change-field value seen: the field holds the time the server *processed*
/// the write request (REQUEST_TIME, milliseconds), which comes before the
/// commit. A write processed before a query's read time can commit after it
/// (the emulator showed 0.3 s between the two), so it would be invisible to
/// that query and yet carry an older value than the newest one it returned.
/// Every write processed more than `margin` before a read was committed by
/// then. The price: documents written in the minute before a sync are read
/// again by later commands until the next sync moves the mark.
public struct ChangeMark: Sendable, Equatable {
    /// The change field this mark was taken with; a mark for another field is ignored.
    public let field: String
    /// Documents whose change field is at or after this time may not be in the base.
    public let time: Timestamp
    /// The scope (config `"scope"`, as `ScopeExpression.description` writes
    /// it) the mark was taken under; nil for the whole collection. A mark
    /// taken under another scope says nothing about documents that match
    /// this one and were not changed since, so it is not used.
    public let scope: String?

    /// A mark, as read back from a manifest.
    public init(field: String, time: Timestamp, scope: String? = nil) {
        self.field = field
        self.time = time
        self.scope = scope
    }

    /// Whether the mark was taken with `field` under `scope`, so a change
    /// query with them finds every document the base does not reflect.
    package func isFor(field: String, scope: ScopeExpression?) -> Bool {
        self.field == field && self.scope == scope?.description
    }

    /// How long before a read the mark is put: meant to be longer than a
    /// write request takes from processing to commit (an assumption, not a
    /// documented bound: the emulator showed 0.3 s).
    package static let margin: Int64 = 60 * Timestamp.microsPerSecond

    /// The mark after a sync that read the remote at the server time
    /// `readTime` and left the base behind the remote for some documents
    /// (conflicts, invalid documents): those must stay after the mark, or the
    /// next query would not return them and they would look unchanged.
    /// - Parameters:
    ///   - field: The change field (config.json `"changeField"`).
    ///   - scope: The collection's scope the listing was read under, if any:
    ///     a mark holds only for the same scope.
    ///   - readTime: The server's read time of the first request of the listing or query.
    ///   - unrecorded: The change-field value of each document the base does
    ///     not match after the sync; nil for one without a timestamp there
    ///     (or that was never read), which no query finds: then there is no mark.
    /// - Returns: nil when no mark is safe (no read time, or an unrecorded
    ///   document without a change time): the next command lists every name.
    package static func after(field: String, scope: ScopeExpression? = nil, readTime: String?, unrecorded: [String?]) -> ChangeMark? {
        guard let readTime, let read = Timestamp(serverTime: readTime) else { return nil }
        var time = Timestamp(microsecondsSinceEpoch: max(Timestamp.minimum.microsecondsSinceEpoch, read.microsecondsSinceEpoch - margin))
        for value in unrecorded {
            guard let value, let changed = Timestamp(serverTime: value) else { return nil }
            time = min(time, changed)
        }
        return ChangeMark(field: field, time: time, scope: scope?.description)
    }
}

extension Timestamp {
    /// A time the server wrote (`readTime`, a `timestampValue`), whose
    /// fraction may have nanosecond digits: truncated to microseconds, which
    /// only moves it earlier. nil when it is not an RFC 3339 time.
    package init?(serverTime text: String) {
        var bytes = Array(text.utf8)
        if let dot = bytes.firstIndex(of: 0x2E) {
            var end = dot + 1
            while end < bytes.count, bytes[end] >= 0x30, bytes[end] <= 0x39 { end += 1 }
            if end - dot - 1 > 6 { bytes.removeSubrange((dot + 7)..<end) }
        }
        guard let time = try? Timestamp(rfc3339: String(decoding: bytes, as: UTF8.self)) else { return nil }
        self = time
    }
}
