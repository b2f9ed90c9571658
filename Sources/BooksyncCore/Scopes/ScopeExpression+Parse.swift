extension ScopeExpression {
    /// The longest scope text read (bytes): a scope is one line a person writes.
    package static let maximumLength = 4_096
    /// The deepest nesting of parentheses.
    package static let maximumDepth = 16
    /// The most comparisons in one scope (Firestore takes at most 30
    /// disjunctions in a query; this bounds what booksync even reads).
    package static let maximumComparisons = 100

    /// Parses a scope as `--where` and config `"scope"` spell it.
    /// - Throws: `ScopeSyntaxError` with the column where the text stopped
    ///   making sense and what was expected there.
    package static func parse(_ text: String) throws(ScopeSyntaxError) -> ScopeExpression {
        let bytes = Array(text.utf8)
        guard bytes.count <= maximumLength else {
            throw ScopeSyntaxError(column: 1, message: "the scope is \(bytes.count) bytes long; at most \(maximumLength)")
        }
        var parser = ScopeParser(bytes: bytes)
        let expression = try parser.parseOr(depth: 0)
        parser.skipSpaces()
        guard parser.index == bytes.count else {
            throw parser.error("expected 'and', 'or' or the end of the scope, found \(parser.found())")
        }
        return expression
    }
}

/// A recursive-descent reader of scope text, byte by byte (UTF-8).
private struct ScopeParser {
    let bytes: [UInt8]
    var index = 0
    var comparisons = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func parseOr(depth: Int) throws(ScopeSyntaxError) -> ScopeExpression {
        var parts = [try parseAnd(depth: depth)]
        while try keyword("or") { parts.append(try parseAnd(depth: depth)) }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    mutating func parseAnd(depth: Int) throws(ScopeSyntaxError) -> ScopeExpression {
        var parts = [try parseTerm(depth: depth)]
        while try keyword("and") { parts.append(try parseTerm(depth: depth)) }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    mutating func parseTerm(depth: Int) throws(ScopeSyntaxError) -> ScopeExpression {
        skipSpaces()
        if peek() == UInt8(ascii: "(") {
            guard depth < ScopeExpression.maximumDepth else {
                throw error("parentheses nested more than \(ScopeExpression.maximumDepth) deep")
            }
            index += 1
            let inner = try parseOr(depth: depth + 1)
            skipSpaces()
            guard peek() == UInt8(ascii: ")") else { throw error("expected ')' or 'and' or 'or', found \(found())") }
            index += 1
            return inner
        }
        return try parseComparison()
    }

    mutating func parseComparison() throws(ScopeSyntaxError) -> ScopeExpression {
        comparisons += 1
        guard comparisons <= ScopeExpression.maximumComparisons else {
            throw error("more than \(ScopeExpression.maximumComparisons) comparisons")
        }
        let path = try parseFieldPath()
        skipSpaces()
        let operatorStart = index
        let op = try parseOperator()
        skipSpaces()
        let valueStart = index
        guard index < bytes.count else { throw error("expected a value after '\(op.rawValue)', found the end of the scope") }
        let value: Value
        do {
            (value, index) = try JSONParser.parseValue(in: bytes, at: index)
        } catch {
            throw ScopeSyntaxError(column: error.position.column, message: "expected a JSON value or a tagged value: \(error.message)")
        }
        try check(op, value, at: valueStart, operatorAt: operatorStart)
        return .comparison(path, op, value)
    }

    /// Firestore's rules for the value an operator takes, checked before a query is sent.
    func check(_ op: ScopeOperator, _ value: Value, at offset: Int, operatorAt operatorOffset: Int) throws(ScopeSyntaxError) {
        if op.takesList {
            guard case .array(let items) = value, !items.isEmpty, items.count <= op.maximumListCount else {
                throw error("'\(op.rawValue)' takes a list of 1 to \(op.maximumListCount) values, like [\"a\", \"b\"]", at: offset)
            }
            // Firestore's IN matches nothing for a null (the emulator answers none), so none is listed.
            if items.contains(where: Self.isNullOrNaN) {
                throw error("'\(op.rawValue)' cannot list null or NaN; compare with == null or == {\"$double\": \"NaN\"}", at: offset)
            }
        }
        if op.isRange {
            switch value {
            case .integer, .double, .string, .timestamp, .bool, .bytes, .reference: break
            default: throw error("'\(op.rawValue)' orders numbers, strings, timestamps, booleans, bytes or references", at: offset)
            }
            if Self.isNullOrNaN(value) { throw error("'\(op.rawValue)' cannot compare with NaN; use == or !=", at: offset) }
        }
        if op == .arrayContains, case .array = value {
            throw error("'array-contains' takes one value (Firestore has no arrays in arrays); 'array-contains-any' takes a list", at: operatorOffset)
        }
    }

    static func isNullOrNaN(_ value: Value) -> Bool {
        if case .null = value { return true }
        if case .double(let d) = value, d.isNaN { return true }
        return false
    }

    /// `a.b`, `` `a b`.c ``: simple names or backtick-quoted ones (`\` escapes `` ` `` and `\`).
    mutating func parseFieldPath() throws(ScopeSyntaxError) -> FieldPath {
        skipSpaces()
        var segments: [String] = []
        while true {
            if peek() == UInt8(ascii: "`") {
                index += 1
                var segment: [UInt8] = []
                while true {
                    guard let byte = peek() else { throw error("expected a closing backtick, found the end of the scope") }
                    index += 1
                    if byte == UInt8(ascii: "`") { break }
                    if byte == UInt8(ascii: "\\") {
                        guard let next = peek(), next == UInt8(ascii: "`") || next == UInt8(ascii: "\\") else {
                            throw error("in a quoted name, '\\' escapes only a backtick or a backslash")
                        }
                        index += 1
                        segment.append(next)
                        continue
                    }
                    segment.append(byte)
                }
                guard !segment.isEmpty else { throw error("a quoted field name may not be empty", at: index - 2) }
                segments.append(String(decoding: segment, as: UTF8.self))
            } else {
                let start = index
                while let byte = peek(), Self.isNameByte(byte, first: index == start) { index += 1 }
                guard index > start else {
                    throw error(segments.isEmpty ? "expected a field name, found \(found())" : "expected a field name after '.', found \(found())")
                }
                segments.append(String(decoding: bytes[start..<index], as: UTF8.self))
            }
            guard peek() == UInt8(ascii: ".") else { break }
            index += 1
        }
        guard segments.count <= FirestoreLimits.maximumDepth else { throw error("a field path of more than \(FirestoreLimits.maximumDepth) names") }
        return FieldPath(segments)
    }

    static func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"): true
        case UInt8(ascii: "0")...UInt8(ascii: "9"): !first
        default: false
        }
    }

    mutating func parseOperator() throws(ScopeSyntaxError) -> ScopeOperator {
        // Longest spelling first: `<=` before `<`, `array-contains-any` before `array-contains`.
        for op in ScopeOperator.allCases.sorted(by: { $0.rawValue.utf8.count > $1.rawValue.utf8.count }) {
            let spelling = Array(op.rawValue.utf8)
            guard bytes[index...].starts(with: spelling) else { continue }
            let end = index + spelling.count
            // A word operator ends at a space or where the value starts.
            if let last = spelling.last, Self.isNameByte(last, first: false), end < bytes.count, Self.isNameByte(bytes[end], first: false) || bytes[end] == UInt8(ascii: "-") {
                continue
            }
            index = end
            return op
        }
        let spellings = ScopeOperator.allCases.map(\.rawValue).joined(separator: " ")
        throw error("expected an operator (\(spellings)), found \(found())")
    }

    /// Consumes `and` / `or` (any case) followed by a space, `(` or the end
    /// (which the next term then reports as missing).
    mutating func keyword(_ word: String) throws(ScopeSyntaxError) -> Bool {
        skipSpaces()
        let spelling = Array(word.utf8)
        guard index + spelling.count <= bytes.count,
              zip(bytes[index..<index + spelling.count], spelling).allSatisfy({ $0 | 0x20 == $1 }) else { return false }
        let end = index + spelling.count
        guard end == bytes.count || bytes[end] == UInt8(ascii: " ") || bytes[end] == UInt8(ascii: "(") || bytes[end] == UInt8(ascii: "\t") else {
            return false
        }
        index = end
        return true
    }

    mutating func skipSpaces() {
        while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
    }

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    /// What stands at the current position, for a message.
    func found() -> String {
        guard index < bytes.count else { return "the end of the scope" }
        var end = index
        while end < bytes.count, end - index < 20, bytes[end] != UInt8(ascii: " ") { end += 1 }
        return "'" + TerminalEscaping.abbreviate(String(decoding: bytes[index..<max(end, index + 1)], as: UTF8.self)) + "'"
    }

    func error(_ message: String, at offset: Int? = nil) -> ScopeSyntaxError {
        let at = min(offset ?? index, bytes.count)
        return ScopeSyntaxError(column: String(decoding: bytes[..<at], as: UTF8.self).unicodeScalars.count + 1, message: message)
    }
}
