extension ScopeExpression {
    /// Whether a record's fields match, as Firestore's query would decide:
    /// `validate` and `status` use it to tell local records outside the scope.
    ///
    /// Firestore's rules, checked against the emulator's own answers by
    /// `ScopeEndToEndTests`: a missing field matches no comparison (not even
    /// `!=` or `not-in`); numbers compare by value whatever their type (`1 ==
    /// 1.0`); a range (`<`, `>=`, …) matches only values of the value's own
    /// kind (numbers with numbers, strings with strings), never NaN; `==
    /// null` and `== NaN` match exactly those; `!=` and `not-in` skip null.
    ///
    /// And a document without a field of one of the scope's inequalities
    /// matches nothing, even through another branch of an `or`: Firestore
    /// orders such a query by those fields (`inequalityFields`), and
    /// ordering by a field leaves out every document that lacks it.
    package func matches(_ fields: Fields) -> Bool {
        inequalityFields.allSatisfy { $0.value(in: fields) != nil } && isSatisfied(by: fields)
    }

    /// The comparisons alone, without the rule on inequality fields.
    private func isSatisfied(by fields: Fields) -> Bool {
        switch self {
        case .and(let parts): parts.allSatisfy { $0.isSatisfied(by: fields) }
        case .or(let parts): parts.contains { $0.isSatisfied(by: fields) }
        case .comparison(let path, let op, let value): Self.compare(path.value(in: fields), op, value)
        }
    }

    /// The fields of the scope's inequalities (`<`, `<=`, `>`, `>=`, `!=`,
    /// `not-in`, with `!= null` and `!= NaN`), each once, sorted: a query
    /// with the scope must be ordered by them before the document name, as
    /// Firestore orders it implicitly (it refuses an order by name alone).
    package var inequalityFields: [FieldPath] {
        let paths = comparisons.filter { $0.op.isRange || $0.op == .notEqual || $0.op == .notIn }.map(\.path)
        return Set(paths).sorted { $0.description < $1.description }
    }

    private static func compare(_ field: Value?, _ op: ScopeOperator, _ value: Value) -> Bool {
        guard let field else { return false }
        switch op {
        case .equal:
            return FirestoreOrder.equal(field, value)
        case .notEqual:
            if case .null = field { return false }
            return !FirestoreOrder.equal(field, value)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let order = FirestoreOrder.compareSameKind(field, value) else { return false }
            switch op {
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            default: return order >= 0
            }
        case .in:
            guard case .array(let candidates) = value else { return false }
            return candidates.contains { FirestoreOrder.equal(field, $0) }
        case .notIn:
            guard case .array(let candidates) = value else { return false }
            if case .null = field { return false }
            return !candidates.contains { FirestoreOrder.equal(field, $0) }
        case .arrayContains:
            guard case .array(let items) = field else { return false }
            return items.contains { FirestoreOrder.equal($0, value) }
        case .arrayContainsAny:
            guard case .array(let items) = field, case .array(let candidates) = value else { return false }
            return items.contains { item in candidates.contains { FirestoreOrder.equal(item, $0) } }
        }
    }
}

/// Firestore's equality and order of values, as far as a scope needs them.
package enum FirestoreOrder {
    /// Equal as Firestore compares: numbers by value (`1 == 1.0`, `-0.0 == 0.0`,
    /// NaN equal to NaN), arrays element by element, maps key by key.
    package static func equal(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.integer, .integer), (.integer, .double), (.double, .integer), (.double, .double):
            return compareNumbers(a, b) == 0
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (.map(let x), .map(let y)):
            return x.count == y.count && x.allSatisfy { key, value in y[key].map { equal(value, $0) } ?? false }
        default:
            return a == b
        }
    }

    /// -1, 0 or 1 when both values are of one kind that orders (numbers,
    /// strings by UTF-8 bytes, timestamps, booleans, bytes, references);
    /// nil for values of different kinds and for NaN, which a range never matches.
    package static func compareSameKind(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case (.integer, .integer), (.integer, .double), (.double, .integer), (.double, .double):
            if case .double(let d) = a, d.isNaN { return nil }
            if case .double(let d) = b, d.isNaN { return nil }
            return compareNumbers(a, b)
        case (.string(let x), .string(let y)):
            return x.utf8.elementsEqual(y.utf8) ? 0 : (x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : 1)
        case (.timestamp(let x), .timestamp(let y)):
            return x == y ? 0 : (x < y ? -1 : 1)
        case (.bool(let x), .bool(let y)):
            return x == y ? 0 : (!x ? -1 : 1)
        case (.bytes(let x), .bytes(let y)):
            return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        case (.reference(let x), .reference(let y)):
            let (xs, ys) = (x.split(separator: "/").map(String.init), y.split(separator: "/").map(String.init))
            if xs == ys { return 0 }
            return xs.lexicographicallyPrecedes(ys) { $0.utf8.lexicographicallyPrecedes($1.utf8) } ? -1 : 1
        default:
            return nil
        }
    }

    /// Two numbers by value, exactly: an integer beyond 2⁵³ against a double
    /// is not rounded to one first (Firestore compares them exactly).
    private static func compareNumbers(_ a: Value, _ b: Value) -> Int {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.integer(let x), .double(let y)): return compare(integer: x, double: y)
        case (.double(let x), .integer(let y)): return -compare(integer: y, double: x)
        default:
            let x = number(a), y = number(b)
            if x.isNaN || y.isNaN { return x.isNaN && y.isNaN ? 0 : (x.isNaN ? -1 : 1) }  // NaN first, as Firestore orders
            return x == y ? 0 : (x < y ? -1 : 1)
        }
    }

    /// An integer against a double (not NaN) without rounding the integer:
    /// beyond ±2⁶³ the double wins outright; else compare whole parts as
    /// integers, then the fraction.
    private static func compare(integer x: Int64, double y: Double) -> Int {
        if y.isNaN { return 1 }  // NaN first, as Firestore orders
        if y >= 9_223_372_036_854_775_808.0 { return -1 }
        if y < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = y.rounded(.down)
        let w = Int64(whole)
        if x != w { return x < w ? -1 : 1 }
        return y > whole ? -1 : 0
    }

    private static func number(_ value: Value) -> Double {
        switch value {
        case .integer(let i): Double(i)
        case .double(let d): d
        default: .nan
        }
    }
}
