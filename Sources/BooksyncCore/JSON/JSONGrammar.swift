/// The grammar over one buffer: positions, errors, white space, objects and
/// arrays here; strings and numbers in JSONParser+Strings.swift and
/// JSONParser+Numbers.swift. `JSONParser` (JSONParser.swift) is its public face.
struct JSONGrammar {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0
    var decodeTags = true
    /// Value errors met so far when collecting them (`JSONParser.parseRecord`);
    /// nil: the first one is thrown.
    var valueErrors: [JSONSyntaxError]?
    /// The top-level key whose value is being parsed, while collecting.
    var topLevelKey = ""
    var unreadableFields: Set<String> = []

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    // MARK: positions and errors

    func position(of offset: Int) -> SourcePosition {
        var line = 1
        var lineStart = 0
        let end = min(offset, bytes.count)
        for i in 0..<end where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        var column = 1
        for i in lineStart..<end where bytes[i] & 0xC0 != 0x80 { column += 1 }
        return SourcePosition(line: line, column: column)
    }

    func error(_ message: String, at offset: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(position: position(of: offset ?? index), message: message)
    }

    /// An error in a value the grammar accepts: thrown, or, while collecting,
    /// recorded with null returned in the value's place so parsing goes on.
    /// Only called with the index past the value, so the text stays in step.
    mutating func valueError(_ message: @autoclosure () -> String, at offset: Int) throws(JSONSyntaxError) -> Value {
        guard valueErrors != nil else { throw error(message(), at: offset) }
        record(message, at: offset)
        // Depth 1: the value of a top-level field itself (not something inside it).
        if depth == 1 { unreadableFields.insert(topLevelKey) }
        return .null
    }

    /// A duplicate or equivalent key: thrown, or recorded while collecting;
    /// the first value stays and the repeated one is parsed and dropped.
    mutating func keyError(_ message: @autoclosure () -> String, at offset: Int) throws(JSONSyntaxError) {
        guard valueErrors != nil else { throw error(message(), at: offset) }
        record(message, at: offset)
        _ = try parseValue()
    }

    /// Keeps a collected error, up to `JSONParser.maximumValueErrors` and a
    /// note that more follow: each position is a scan from the start of the
    /// text, and a hostile file could hold a million bad numbers.
    mutating func record(_ message: () -> String, at offset: Int) {
        let count = valueErrors!.count
        if count < JSONParser.maximumValueErrors {
            valueErrors!.append(error(message(), at: offset))
        } else if count == JSONParser.maximumValueErrors {
            valueErrors!.append(error("more value errors follow; only the first \(count) are listed", at: offset))
        }
    }

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipBOM() {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// Whitespace, or a clear error for the comments people try to write.
    mutating func skipWhitespaceRejectingComments() throws(JSONSyntaxError) {
        skipWhitespace()
        if peek() == UInt8(ascii: "/"), index + 1 < bytes.count,
           bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "*") {
            throw error("comments are not allowed in JSON")
        }
    }

    // MARK: grammar

    mutating func parseDocument() throws(JSONSyntaxError) -> Value {
        skipBOM()
        try skipWhitespaceRejectingComments()
        guard index < bytes.count else { throw error("the file is empty; expected a JSON value") }
        let value = try parseValue()
        try skipWhitespaceRejectingComments()
        if index < bytes.count {
            throw error("unexpected '\(describe(at: index))' after the JSON value; a file holds exactly one value")
        }
        return value
    }

    func describe(at offset: Int) -> String {
        var end = offset + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[offset..<end]), as: UTF8.self)
        switch s {
        case "\n": return "\\n"
        case "\t": return "\\t"
        case "\r": return "\\r"
        default: return s
        }
    }

    mutating func parseValue() throws(JSONSyntaxError) -> Value {
        guard let c = peek() else { throw error("unexpected end of file; expected a value") }
        switch c {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "'"): throw error("strings must use double quotes, not single quotes")
        case UInt8(ascii: "N"), UInt8(ascii: "I"):
            throw error("NaN and Infinity are not JSON; write {\"$double\": \"NaN\"} or {\"$double\": \"Infinity\"}")
        case UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ","):
            throw error("expected a value before '\(describe(at: index))'")
        default:
            if c >= 0x80, !validUTF8Sequence(at: index) { throw error("invalid UTF-8 byte 0x\(Hex.string(UInt32(c), minimumDigits: 2, .upper))") }
            throw error("unexpected '\(describe(at: index))'; expected a value")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let start = index
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for b in expected {
            guard index < bytes.count, bytes[index] == b else {
                throw error("unexpected '\(describe(at: start))'; expected a value (did you mean '\(word)'?)", at: start)
            }
            index += 1
        }
        if let n = peek(), isIdentifierByte(n) {
            throw error("unexpected '\(describe(at: index))' after '\(word)'", at: index)
        }
    }

    func isIdentifierByte(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x5F
    }

    mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > JSONParser.maximumDepth {
            throw error("nesting deeper than \(JSONParser.maximumDepth) levels")
        }
    }

    /// Parses an object's members, handing each key (with the offset of its
    /// opening quote) to `member`, which must parse the value. Shared by the
    /// `Value` parser and the byte-exact `JSONTree` parser.
    mutating func parseMembers(_ member: (inout JSONGrammar, String, Int) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        try enter()
        index += 1  // {
        try skipWhitespaceRejectingComments()
        if peek() == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return
        }
        while true {
            try skipWhitespaceRejectingComments()
            guard let c = peek() else { throw error("unexpected end of file; expected a key or '}'") }
            if c == UInt8(ascii: "}") { throw error("trailing comma before '}' is not allowed") }
            guard c == UInt8(ascii: "\"") else {
                if c == UInt8(ascii: "'") { throw error("keys must use double quotes, not single quotes") }
                throw error("expected a key in double quotes, found '\(describe(at: index))'")
            }
            let keyStart = index
            let key = try parseString()
            try skipWhitespaceRejectingComments()
            guard peek() == UInt8(ascii: ":") else {
                if index >= bytes.count { throw error("unexpected end of file; expected ':' after key '\(key)'") }
                throw error("expected ':' after key '\(key)'")
            }
            index += 1
            try skipWhitespaceRejectingComments()
            try member(&self, key, keyStart)
            try skipWhitespaceRejectingComments()
            guard let next = peek() else { throw error("unexpected end of file; expected ',' or '}'") }
            if next == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if next == UInt8(ascii: "}") {
                index += 1
                break
            }
            throw error("expected ',' or '}'")
        }
        depth -= 1
    }

    /// An object as a `Value` map. Its keys are Swift strings, so two keys that
    /// differ only by Unicode normalization (`"caf\u00E9"`, `"cafe\u0301"`) are
    /// one key: in a file that is an error saying so (a record cannot hold
    /// both); in a wire answer (`decodeTags` false) the object becomes an
    /// `EquivalentKeys` marker, so that the one document holding it is invalid
    /// and not the whole answer.
    mutating func parseObject() throws(JSONSyntaxError) -> Value {
        let start = index
        var fields: Fields = [:]
        var keyOffsets: [String: Int] = [:]
        var firstKey = ""
        var equivalent: EquivalentKeys?
        let errorsBefore = valueErrors?.count ?? 0
        try parseMembers { (parser: inout JSONGrammar, key: String, keyStart: Int) throws(JSONSyntaxError) in
            if let seen = keyOffsets.index(forKey: key) {
                let (earlier, earlierStart) = keyOffsets[seen]
                if earlier.utf8.elementsEqual(key.utf8) {
                    return try parser.keyError("duplicate key '\(key)'", at: keyStart)
                }
                if parser.decodeTags {
                    let message = """
                        keys \(CanonicalJSON.asciiQuoted(earlier)) (at \(parser.position(of: earlierStart))) and \(CanonicalJSON.asciiQuoted(key)) \
                        differ only by Unicode normalization; a record cannot hold both: rename one
                        """
                    return try parser.keyError(message, at: keyStart)
                }
                if equivalent == nil { equivalent = EquivalentKeys(first: earlier, second: key) }
                _ = try parser.parseValue()
                return
            }
            keyOffsets[key] = keyStart
            if fields.isEmpty { firstKey = key }
            if parser.depth == 1 { parser.topLevelKey = key }
            fields[key] = try parser.parseValue()
        }
        if let equivalent { return equivalent.marker }
        if decodeTags, fields.count == 1, firstKey.utf8.first == UInt8(ascii: "$") {
            // A payload with an error of its own (collected): that error says it all.
            if (valueErrors?.count ?? 0) > errorsBefore {
                if depth == 1 { unreadableFields.insert(topLevelKey) }
                return .null
            }
            return try decodeTagged(firstKey, fields[firstKey]!, at: start)
        }
        return .map(fields)
    }

    /// An object or array as a `JSONTree`, keys compared by their bytes.
    mutating func parseTree() throws(JSONSyntaxError) -> JSONTree {
        switch peek() {
        case UInt8(ascii: "{"):
            var members: [JSONTree.Member] = []
            var seen: Set<JSONTree.ByteKey> = []
            try parseMembers { (parser: inout JSONGrammar, key: String, keyStart: Int) throws(JSONSyntaxError) in
                guard seen.insert(JSONTree.ByteKey(key)).inserted else { throw parser.error("duplicate key '\(key)'", at: keyStart) }
                members.append(JSONTree.Member(key: key, value: try parser.parseTree()))
            }
            return .object(members)
        case UInt8(ascii: "["):
            var items: [JSONTree] = []
            try parseElements { (parser: inout JSONGrammar) throws(JSONSyntaxError) in items.append(try parser.parseTree()) }
            return .array(items)
        default:
            return .scalar(try parseValue())
        }
    }

    /// Parses an array's elements; `element` parses each one.
    mutating func parseElements(_ element: (inout JSONGrammar) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        try enter()
        index += 1  // [
        try skipWhitespaceRejectingComments()
        if peek() == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return
        }
        while true {
            try skipWhitespaceRejectingComments()
            if peek() == UInt8(ascii: "]") { throw error("trailing comma before ']' is not allowed") }
            try element(&self)
            try skipWhitespaceRejectingComments()
            guard let next = peek() else { throw error("unexpected end of file; expected ',' or ']'") }
            if next == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if next == UInt8(ascii: "]") {
                index += 1
                break
            }
            throw error("expected ',' or ']'")
        }
        depth -= 1
    }

    mutating func parseArray() throws(JSONSyntaxError) -> Value {
        var items: [Value] = []
        try parseElements { (parser: inout JSONGrammar) throws(JSONSyntaxError) in items.append(try parser.parseValue()) }
        return .array(items)
    }
}
