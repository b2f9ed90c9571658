import BooksyncCore

/// A save of a record whose file an editor changed after the app read it,
/// merged three-way like a pull merges a remote change (the manual's ThreeWaySync article): the
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
