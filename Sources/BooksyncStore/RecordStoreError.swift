import BooksyncCodable
import BooksyncCore
@_spi(Remote) import BooksyncKit

/// Everything a `RecordStore` can fail with, each case a sentence that names
/// the record or file (`description`), so an app can show it as it is.
///
/// Errors of the layers underneath are wrapped, never passed through raw:
/// the engine's `BooksyncError` (locks, I/O, the remote, the mass-delete
/// guard), the schema's diagnostics, the decoder's `RecordDecodingError`, and
/// Swift's `EncodingError` rendered with its coding path.
public enum RecordStoreError: Error, Sendable, CustomStringConvertible {
    /// The string cannot be a record id (empty, `..`, `/`, too long, `__x__`).
    case invalidID(String, reason: String)
    /// `save(_:)` of a DTO whose encoding has no string `id`: the store cannot tell which record it is.
    case missingID(type: String)
    /// `save(_:id:)` of a DTO whose own `id` field says another record.
    case conflictingID(type: String, given: String, field: String)
    /// The DTO could not be encoded into record fields.
    case notEncodable(type: String, id: String?, reason: String)
    /// `save` refused a DTO whose fields break the collection's schema or
    /// Firestore's limits: the same check a hand-edited file gets. Nothing was written.
    case refused(id: String, file: String, problems: [RecordDiagnostic])
    /// The file changed on disk (an editor saved it) between the store's read
    /// and its write or removal: the editor's file was left in place and
    /// nothing of it was lost.
    case changedOnDisk(file: String)
    /// The file was edited after the store read the record, and the edit and
    /// the save changed `paths` differently (empty: a `delete`, which would
    /// lose the edit). Nothing was written; both versions are intact.
    case editedSinceRead(id: String, file: String, paths: [String])
    /// The file was removed after the store read the record: the save would
    /// bring back what was deleted, so nothing was written.
    case deletedSinceRead(id: String, file: String)
    /// A record file (most likely edited by hand) is not a valid record.
    case invalidFile(file: String, problems: [RecordDiagnostic])
    /// A valid record file does not decode into the DTO type; the decoder's
    /// error names the file, the field and what is wrong.
    case notDecodable(type: String, RecordDecodingError)
    /// The collection, its files, its lock or the remote failed (the engine's error).
    case collection(BooksyncError)

    /// The sentence, with every scalar a terminal would act on (from file
    /// names, ids, field names or values of a cloned collection) written visibly.
    public var description: String {
        TerminalEscaping.escapeMessage(sentence)
    }

    private var sentence: String {
        switch self {
        case .invalidID(let id, let reason):
            return "'\(id)' cannot be a record id: \(reason)"
        case .missingID(let type):
            return "\(type) has no string field 'id', so the store cannot tell which record it is; declare `var id: String` or save it with save(_:id:)"
        case .conflictingID(let type, let given, let field):
            return "cannot save \(type) as record '\(given)': its own id field says '\(field)'"
        case .notEncodable(let type, let id, let reason):
            return "cannot encode \(type)\(id.map { " for record '\($0)'" } ?? ""), nothing was written: \(reason)"
        case .refused(let id, let file, let problems):
            return "refused to save record '\(id)' to \(file), nothing was written: \(Self.sentence(problems))"
        case .changedOnDisk(let file):
            return "\(file) changed on disk while the store was writing it; the file on disk was kept and nothing was written: read the record again and retry"
        case .editedSinceRead(let id, let file, let paths) where paths.isEmpty:
            return "\(file) was edited since the store read record '\(id)', so it was not deleted and the edit is kept: read the record again and delete it if it should still go"
        case .editedSinceRead(let id, let file, let paths):
            return "\(file) was edited since the store read record '\(id)', and the edit changed \(paths.joined(separator: ", ")) as this save does; nothing was written: read the record again and apply the change to it"
        case .deletedSinceRead(let id, let file):
            return "\(file) was deleted since the store read record '\(id)'; nothing was written: read it again (it is gone) and save it to create it anew"
        case .invalidFile(let file, let problems):
            return "\(file) is not a valid record: \(Self.sentence(problems)); fix the file (booksync validate shows every problem)"
        case .notDecodable(let type, let error):
            return "\(error) (reading record '\(error.recordID)' as \(type))"
        case .collection(let error):
            return error.description
        }
    }

    /// The diagnostics joined into one clause: `3:7: expected ','; field 'title' is required`.
    static func sentence(_ problems: [RecordDiagnostic]) -> String {
        problems.map(\.description).joined(separator: "; ")
    }
}
