import BooksyncCore

/// The version of a record that a copy of it was read from (or saved as):
/// what `save(_:basedOn:)` and `delete(_:basedOn:)` of that copy merge
/// against. An app that keeps several copies of one record alive (a form's
/// copy while a list refreshes) keeps each copy's version with it, so a
/// stale copy never undoes what changed between its read and a later one.
/// Opaque; two versions are equal when they were taken from the same bytes.
public struct RecordVersion: Sendable, Equatable {
    let state: ReadVersion
}

/// A value with the version of the record it came from: what
/// `getVersioned`/`allVersioned` read.
public struct Versioned<Value: Sendable>: Sendable {
    /// The DTO read.
    public var value: Value
    /// The version to save the value's next change against; a save of the value hands back the next one.
    public var version: RecordVersion
}

/// What the app holds of one record, as far as the store knows: the base its
/// next `save` or `delete` of that record is merged (or checked) against.
///
/// After a read (`get`, `all`) that is the file as read; after a save it is
/// the fields the app saved, not what was written: when a save merged an
/// editor's change in, the app's DTO still lacks it, and the next save of
/// that DTO must not take it out again.
///
/// Kept as bytes (the file's, or the canonical bytes of the saved fields),
/// parsed only when the file has changed since: about the size of the files
/// the app has read, less than the DTOs it holds of them.
enum ReadVersion: Sendable, Equatable {
    /// There was no such file when the store looked (or the store deleted it).
    case absent
    /// Bytes that parse to the app's fields (always valid: a file that does not
    /// load is never remembered).
    case bytes([UInt8])

    /// True when the file on disk is exactly these bytes (or absent and
    /// absent): then it equals the base and the save writes the app's side.
    func matches(_ current: [UInt8]?) -> Bool {
        switch self {
        case .absent: current == nil
        case .bytes(let read): current == read
        }
    }

    /// True when `current` holds the same fields as this version: the same
    /// bytes, or a file that parses to the same fields (an editor's reformat,
    /// `booksync fmt`, changes no field, as the engine sees it too).
    func holdsSameFields(as current: [UInt8]?, rules: RecordRules) -> Bool {
        if matches(current) { return true }
        guard case .bytes(let read) = self, let current, case .success(let now) = rules.parse(current) else { return false }
        return (try? rules.parse(read).get()) == now
    }
}

