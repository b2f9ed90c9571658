/// The `"scope"` of config.json: the query a scoped collection mirrors
/// (the manual's WholeProject article). Read from a file that may come from a stranger's
/// clone, so it is parsed with the expression's own bounds (length,
/// nesting, comparisons) and every part of it is shown escaped.
extension CollectionConfig {
    /// The scope in `top["scope"]`: nil when absent or null.
    /// - Throws: `StateFileError` with the column the expression stopped at.
    static func decodeScope(_ top: Fields, changeField: String?, subcollections: Subcollections, idField: IDField) throws(StateFileError) -> ScopeExpression? {
        switch top["scope"] {
        case nil, .null?:
            return nil
        case .string(let text)?:
            let scope: ScopeExpression
            do {
                scope = try ScopeExpression.parse(text)
            } catch {
                throw StateFileError(message: "scope: \(error)")
            }
            if let problem = problem(scope: scope, changeField: changeField, subcollections: subcollections, idField: idField) {
                throw StateFileError(message: "scope: \(problem)")
            }
            return scope
        case .some:
            throw StateFileError(message: "scope must be a query such as \"rating >= 4 and genre == \\\"sf\\\"\", or null for none")
        }
    }

    /// Why `scope` cannot be this collection's scope, or nil.
    ///
    /// - The change field: the server sets it on every write and record
    ///   files leave it out, so booksync could not tell whether a local
    ///   record matches.
    /// - Subcollections: their documents are read by collection-group
    ///   queries, which a scope on the parent's fields cannot narrow, so a
    ///   scoped collection would still mirror every subcollection document.
    /// - The id field: a document without it (an app's) is a record whose id
    ///   comes from its name, which the query cannot see; narrow by id with a
    ///   pathspec instead.
    /// - Names Firestore reserves (`__name__`, any `__x__`): it refuses them in a filter.
    package static func problem(scope: ScopeExpression, changeField: String?, subcollections: Subcollections, idField: IDField) -> String? {
        let fields = Set(scope.comparisons.map(\.path.field))
        if let reserved = fields.sorted().first(where: { $0.count >= 4 && $0.hasPrefix("__") && $0.hasSuffix("__") }) {
            return "'\(reserved)' is a name Firestore reserves; a scope cannot compare it"
        }
        if let id = ["id", idField.fieldName].compactMap({ $0 }).first(where: fields.contains) {
            return "'\(id)' holds the record id, which documents an app wrote may not store (their id is their name); "
                + "narrow by id with a pathspec instead"
        }
        if let changeField, scope.comparisons.contains(where: { $0.path.field == changeField }) {
            return "'\(changeField)' is the change field, which the server sets and record files leave out; a scope cannot use it"
        }
        if !subcollections.isEmpty {
            return "a scope cannot be combined with subcollections yet: their documents are read by collection-group queries, "
                + "which a scope on the parent documents does not narrow"
        }
        return nil
    }
}
