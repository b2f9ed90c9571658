import BooksyncCore

extension RecordRules {
    /// Replaces the record file at `path` with `fields` when the file is still
    /// what `isExpected` wants (`FileSystem.replace(_:with:ifCurrent:)`),
    /// keeping the file's `$schema` hint first (`EditorSchemaHint`): a pull,
    /// merge, resolve or save changes the record, never the editor's pointer.
    /// A save that changed only the hint since it was read also counts as
    /// changed, so no edit is lost.
    /// - Parameters:
    ///   - canonical: `canonicalBytes(fields, id:)` when the caller has them already.
    /// - Returns: False when the file was not what `isExpected` wants (nothing written).
    package func replaceFile(_ path: String, id: RecordID?, with fields: Fields, canonical: [UInt8]? = nil,
                             ifCurrent isExpected: ([UInt8]?) -> Bool) throws(FileSystemError) -> Bool {
        let hint = hint(inFile: try? FileSystem.readFile(path))
        let bytes = hint == nil ? (canonical ?? canonicalBytes(fields, id: id)) : fileBytes(fields, id: id, hint: hint)
        return try FileSystem.replace(path, with: bytes, ifCurrent: { current in isExpected(current) && self.hint(inFile: current) == hint })
    }
}
