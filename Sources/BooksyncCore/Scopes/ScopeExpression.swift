/// A scope by query (`--where`, config `"scope"`): the documents a collection
/// directory mirrors, in Firestore's filter language on one line
/// (the manual's WholeProject article).
///
/// `rating >= 4 and (genre == "sf" or tags array-contains "classic")`: a
/// comparison is `FIELD OP VALUE`, comparisons are joined by `and` / `or`
/// with parentheses (`and` binds tighter), a field is a dotted path with
/// backticks around a name that is not letters, digits and `_` (as
/// Firestore and `diff` spell it), and a value is a JSON literal or a
/// record file's tagged value (`{"$timestamp": "2026-01-01T00:00:00Z"}`).
package indirect enum ScopeExpression: Sendable, Equatable, CustomStringConvertible {
    /// `FIELD OP VALUE`.
    case comparison(FieldPath, ScopeOperator, Value)
    /// Every part matches (at least two parts).
    case and([ScopeExpression])
    /// Any part matches (at least two parts).
    case or([ScopeExpression])

    /// The expression as it parses back: canonical spacing, values as record
    /// files write them, parentheses only where `or` sits inside `and`.
    /// Text from a config file: show it through the terminal's escaping.
    package var description: String {
        switch self {
        case .comparison(let path, let op, let value): "\(path) \(op.rawValue) \(CanonicalJSON.encodeInline(value))"
        case .and(let parts): parts.map { if case .or = $0 { "(\($0))" } else { $0.description } }.joined(separator: " and ")
        case .or(let parts): parts.map(\.description).joined(separator: " or ")
        }
    }

    /// The expression with references under `documentsRoot` written as record
    /// files hold them (relative), so the matcher compares like with like;
    /// the query writes them back in full (`restFilter`).
    package func shorteningReferences(under documentsRoot: String) -> ScopeExpression {
        switch self {
        case .comparison(let path, let op, let value): .comparison(path, op, value.shorteningReferences(under: documentsRoot))
        case .and(let parts): .and(parts.map { $0.shorteningReferences(under: documentsRoot) })
        case .or(let parts): .or(parts.map { $0.shorteningReferences(under: documentsRoot) })
        }
    }

    /// Every comparison in the expression, in order.
    package var comparisons: [(path: FieldPath, op: ScopeOperator, value: Value)] {
        switch self {
        case .comparison(let path, let op, let value): [(path, op, value)]
        case .and(let parts), .or(let parts): parts.flatMap(\.comparisons)
        }
    }
}

/// The comparison operators of a scope, spelled as Firestore's SDKs spell them.
package enum ScopeOperator: String, Sendable, Equatable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case `in` = "in"
    case notIn = "not-in"
    case arrayContains = "array-contains"
    case arrayContainsAny = "array-contains-any"

    /// The operator of the REST API's `FieldFilter`.
    package var restName: String {
        switch self {
        case .equal: "EQUAL"
        case .notEqual: "NOT_EQUAL"
        case .less: "LESS_THAN"
        case .lessOrEqual: "LESS_THAN_OR_EQUAL"
        case .greater: "GREATER_THAN"
        case .greaterOrEqual: "GREATER_THAN_OR_EQUAL"
        case .in: "IN"
        case .notIn: "NOT_IN"
        case .arrayContains: "ARRAY_CONTAINS"
        case .arrayContainsAny: "ARRAY_CONTAINS_ANY"
        }
    }

    /// Whether the operator orders values (`<`, `<=`, `>`, `>=`).
    package var isRange: Bool { [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(self) }

    /// Whether the value is a list of candidates (`in`, `not-in`, `array-contains-any`).
    package var takesList: Bool { [.in, .notIn, .arrayContainsAny].contains(self) }

    /// The most values Firestore takes in the list (30; 10 for `not-in`).
    package var maximumListCount: Int { self == .notIn ? 10 : 30 }
}

/// Why a scope's text cannot be used: where it stopped and what was expected there.
package struct ScopeSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The column (from 1, in Unicode scalars) where the problem is.
    package let column: Int
    /// The problem, e.g. "expected an operator (== != < <= > >= in not-in array-contains array-contains-any), found 'is'".
    package let message: String

    /// A problem at `column`.
    package init(column: Int, message: String) {
        self.column = column
        self.message = message
    }

    /// "column 12: expected …".
    package var description: String { "column \(column): \(message)" }
}
