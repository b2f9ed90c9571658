import BooksyncCore

extension ScopeExpression {
    /// The scope as a `StructuredQuery.where` of the REST API: a
    /// `fieldFilter` per comparison, a `compositeFilter` (`AND`, `OR`) per
    /// join. `== null`, `!= null`, `== NaN` and `!= NaN` become the
    /// `unaryFilter`s Firestore requires for them (it refuses a
    /// `fieldFilter` on null or NaN).
    /// - Parameter documentsRoot: `projects/P/databases/D/documents`, for reference values.
    package func restFilter(documentsRoot: String) -> Value {
        switch self {
        case .and(let parts): Self.composite("AND", parts, documentsRoot)
        case .or(let parts): Self.composite("OR", parts, documentsRoot)
        case .comparison(let path, let op, let value):
            Self.comparisonFilter(path, op, value, documentsRoot: documentsRoot)
        }
    }

    private static func composite(_ op: String, _ parts: [ScopeExpression], _ root: String) -> Value {
        .map(["compositeFilter": .map(["op": .string(op), "filters": .array(parts.map { $0.restFilter(documentsRoot: root) })])])
    }

    private static func comparisonFilter(_ path: FieldPath, _ op: ScopeOperator, _ value: Value, documentsRoot: String) -> Value {
        let field: Value = .map(["fieldPath": .string(path.description)])
        if op == .equal || op == .notEqual {
            let unary: String? = switch value {
            case .null: op == .equal ? "IS_NULL" : "IS_NOT_NULL"
            case .double(let d) where d.isNaN: op == .equal ? "IS_NAN" : "IS_NOT_NAN"
            default: nil
            }
            if let unary { return .map(["unaryFilter": .map(["op": .string(unary), "field": field])]) }
        }
        return .map(["fieldFilter": .map([
            "field": field, "op": .string(op.restName), "value": FirestoreValueCodec.encode(value, documentsRoot: documentsRoot),
        ])])
    }
}
