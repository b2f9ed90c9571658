import BooksyncCore

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

/// A save of a record whose file an editor changed after the app read it,
/// merged three-way like a pull merges a remote change (DESIGN.md §3): the
/// version the app read is the base, the DTO's fields are the app's side, the
/// file on disk is the editor's. Pure: the store reads and writes around it.
enum SaveMerge {
    /// What the save writes, or why it cannot.
    enum Outcome: Equatable, Sendable {
        /// Both sides' changes together (just the app's when the editor's
        /// change and the app's are the same).
        case write(Fields)
        /// The editor and the app changed these paths differently.
        case conflicts([FieldPath])
        /// The editor removed the file the app read; the save would undo that.
        case deletedSinceRead
    }

    /// - Parameters:
    ///   - read: The fields the app read (nil: there was no file then).
    ///   - saved: The DTO's fields, with undeclared ones already taken from `read` when asked to keep them.
    ///   - onDisk: The file's fields now (nil: the file is gone).
    static func merge(read: Fields?, saved: Fields, onDisk: Fields?) -> Outcome {
        guard let onDisk else {
            // A record read and then removed by hand: saving would bring back what the
            // editor deleted, which the engine calls a delete/modify conflict.
            return read == nil ? .write(saved) : .deletedSinceRead
        }
        // A record that did not exist when read, created meanwhile by the editor and now
        // by the app: no base, so every difference conflicts (added on both sides).
        switch FieldMerge.merge(base: read, local: saved, remote: onDisk) {
        case .merged(let fields): return .write(fields)
        case .conflicts(let paths): return .conflicts(paths)
        }
    }
}
