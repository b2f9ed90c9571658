import BooksyncCore

extension RecordRules {
    /// Replaces the record file at `path` with `fields` when the file is still
    /// what `isExpected` wants (`FileSystem.replace(_:with:ifCurrent:)`),
    /// keeping the file's `$schema` hint first (`EditorSchemaHint`): a pull or
    /// a merge changes the record, never the editor's pointer.
    ///
    /// The hint is learnt from the file the replace displaces, which the
    /// guarded swap reads anyway: reading the file first would cost a pull an
    /// open per record (<doc:Benchmarks>). A file that had a hint is then written once more
    /// with it, only if it still holds what was just written (a save made in
    /// between stays); the newest hint is the one kept.
    /// - Parameters:
    ///   - path: The record file.
    ///   - id: The record, whose schema orders the fields; nil for the collection's own.
    ///   - fields: The record's new fields.
    ///   - canonical: `canonicalBytes(fields, id:)` when the caller has them already.
    ///   - isExpected: Whether the file's current bytes (nil: no file) may be replaced.
    /// - Returns: False when the file was not what `isExpected` wants (nothing written).
    package func replaceFile(_ path: String, id: RecordID?, with fields: Fields, canonical: [UInt8]? = nil,
                             ifCurrent isExpected: ([UInt8]?) -> Bool) throws(FileSystemError) -> Bool {
        let plain = canonical ?? canonicalBytes(fields, id: id)
        var displacedHint: String?
        let replaced = try FileSystem.replace(path, with: plain, ifCurrent: { current in
            guard isExpected(current) else { return false }
            displacedHint = hint(inFile: current)
            return true
        })
        guard replaced, let displacedHint else { return replaced }
        _ = try FileSystem.replace(path, with: fileBytes(fields, id: id, hint: displacedHint), ifCurrent: { $0 == plain })
        return true
    }
}
