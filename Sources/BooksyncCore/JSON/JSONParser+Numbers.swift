/// Numbers (integers stay integers, doubles keep their kind) and tagged values.
extension JSONGrammar {
    mutating func parseNumber() throws(JSONSyntaxError) -> Value {
        let start = index
        var isInteger = true
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), first >= 0x30, first <= 0x39 else {
            if peek() == UInt8(ascii: "I") { throw error("-Infinity is not JSON; write {\"$double\": \"-Infinity\"}", at: start) }
            throw error("expected a digit after '-'")
        }
        if first == 0x30 {
            index += 1
            if let d = peek(), d >= 0x30, d <= 0x39 { throw error("leading zeros are not allowed in numbers", at: start) }
        } else {
            skipDigits()
        }
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let d = peek(), d >= 0x30, d <= 0x39 else { throw error("expected a digit after '.'") }
            skipDigits()
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if let s = peek(), s == UInt8(ascii: "+") || s == UInt8(ascii: "-") { index += 1 }
            guard let d = peek(), d >= 0x30, d <= 0x39 else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
        if let n = peek(), isIdentifierByte(n) || n == UInt8(ascii: ".") {
            throw error("unexpected '\(describe(at: index))' in a number")
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        // A literal is quoted shortened: a file of huge numbers must not print megabytes of messages.
        let shown = TerminalEscaping.abbreviate(text)
        if isInteger {
            guard let v = Int64(text) else {
                let asDouble = shown == text ? " (\(text).0)" : " (add .0)"
                return try valueError("integer \(shown) does not fit in 64 bits; write it as a double\(asDouble) or a string", at: start)
            }
            return .integer(v)
        }
        guard let v = Double(text), v.isFinite else {
            return try valueError("number \(shown) is too large for a double", at: start)
        }
        if v == 0 {
            // A nonzero literal that rounds to zero would silently lose its
            // value, like one too large for a double: refused alike.
            if text.utf8.prefix(while: { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }).contains(where: { $0 >= 0x31 && $0 <= 0x39 }) {
                return try valueError("number \(shown) is too small for a double (it would become 0.0; the smallest is 5e-324)", at: start)
            }
            // -0.0 is read as 0.0 (see `Value`): Firestore's REST API cannot take a negative zero back.
            return .double(0)
        }
        return .double(v)
    }

    mutating func skipDigits() {
        while let d = peek(), d >= 0x30, d <= 0x39 { index += 1 }
    }

    // MARK: tagged values

    mutating func decodeTagged(_ tag: String, _ payload: Value, at offset: Int) throws(JSONSyntaxError) -> Value {
        do {
            return try TaggedValue.decode(tag: tag, payload: payload)
        } catch {
            return try valueError(error.message, at: offset)
        }
    }
}
