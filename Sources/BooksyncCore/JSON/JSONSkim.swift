/// Walking a JSON text without building values and without a depth limit:
/// for a server answer the parser refused as a whole, to tell a well-formed
/// answer with one unreadable part (nested too deep, a number out of range)
/// from a broken one, and to find that part's elements and name.
extension JSONGrammar {
    /// Skips one value, checking it as `parseValue` would except for its
    /// depth and its values (numbers out of range, duplicate keys). A loop
    /// with a stack of the containers entered, not recursion: a text nested
    /// a million deep is walked, not a stack overflow.
    mutating func skimValue() throws(JSONSyntaxError) {
        let collecting = valueErrors
        if valueErrors == nil { valueErrors = [] }  // numbers out of range are recorded, not thrown
        defer { valueErrors = collecting }
        var open: [UInt8] = []  // the closing byte of each container entered
        while true {
            try skipWhitespaceRejectingComments()
            if let first = peek(), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
                let close = first == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index += 1
                try skipWhitespaceRejectingComments()
                if peek() == close {
                    index += 1
                } else {
                    open.append(close)
                    if close == UInt8(ascii: "}") { try skimKey() }
                    continue
                }
            } else {
                _ = try parseValue()  // a scalar here, or the parser's own error
            }
            // After a value: close what ends here, or go on to the next member or element.
            while let close = open.last {
                try skipWhitespaceRejectingComments()
                guard let next = peek() else { throw error("unexpected end of file; expected ',' or '\(Character(Unicode.Scalar(close)))'") }
                if next == close {
                    index += 1
                    open.removeLast()
                    continue
                }
                guard next == UInt8(ascii: ",") else { throw error("expected ',' or '\(Character(Unicode.Scalar(close)))'") }
                index += 1
                try skipWhitespaceRejectingComments()
                if close == UInt8(ascii: "}") {
                    try skimKey()
                } else if peek() == UInt8(ascii: "]") {
                    throw error("trailing comma before ']' is not allowed")
                }
                break
            }
            if open.isEmpty { return }
        }
    }

    /// A key and its colon, leaving the index at the value.
    @discardableResult
    mutating func skimKey() throws(JSONSyntaxError) -> String {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a key in double quotes") }
        let key = try parseString()
        try skipWhitespaceRejectingComments()
        guard peek() == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
        index += 1
        try skipWhitespaceRejectingComments()
        return key
    }

    /// The elements of the array at the index, as byte ranges; the index ends past it.
    mutating func skimElements() throws(JSONSyntaxError) -> [Range<Int>] {
        guard peek() == UInt8(ascii: "[") else { throw error("expected an array") }
        index += 1
        try skipWhitespaceRejectingComments()
        var elements: [Range<Int>] = []
        if peek() == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            try skipWhitespaceRejectingComments()
            let start = index
            try skimValue()
            elements.append(start..<index)
            try skipWhitespaceRejectingComments()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return elements
            }
            guard peek() == UInt8(ascii: ",") else { throw error("expected ',' or ']'") }
            index += 1
        }
    }

    /// Moves to the value of `key` in the object at the index; false when it has none.
    mutating func skimToMember(_ key: String) throws(JSONSyntaxError) -> Bool {
        guard peek() == UInt8(ascii: "{") else { return false }
        index += 1
        try skipWhitespaceRejectingComments()
        if peek() == UInt8(ascii: "}") { return false }
        while true {
            if try skimKey().utf8.elementsEqual(key.utf8) { return true }
            try skimValue()
            try skipWhitespaceRejectingComments()
            guard peek() == UInt8(ascii: ",") else { return false }
            index += 1
            try skipWhitespaceRejectingComments()
        }
    }
}

extension JSONParser {
    /// Where the elements of one array are, in a text the parser refused:
    /// the array at the top (`member` nil) or at `member` of the top object.
    /// nil when the text is not well-formed apart from depth and values (see
    /// `JSONGrammar.skimValue`), or has no such array. Each element can then
    /// be parsed on its own, and the rest (`array` replaced by `[]`).
    package static func arrayElements(_ bytes: [UInt8], member: String?) -> (array: Range<Int>, elements: [Range<Int>])? {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONGrammar(bytes: buffer)
            parser.skipBOM()
            let top = parser.index
            do throws(JSONSyntaxError) {
                try parser.skimValue()
                try parser.skipWhitespaceRejectingComments()
                guard parser.index == buffer.count else { return nil }
                parser.index = top
                try parser.skipWhitespaceRejectingComments()
                if let member, !(try parser.skimToMember(member)) { return nil }
                let start = parser.index
                guard parser.peek() == UInt8(ascii: "[") else { return nil }
                let elements = try parser.skimElements()
                return (start..<parser.index, elements)
            } catch {
                return nil
            }
        }
    }

    /// The string at `path` (keys of nested objects from the top) of a
    /// well-formed text, read without parsing anything else: names the
    /// document of an entry the parser refused. nil when absent or not a string.
    package static func string(at path: [String], in bytes: some Collection<UInt8>) -> String? {
        Array(bytes).withUnsafeBufferPointer { buffer in
            var parser = JSONGrammar(bytes: buffer)
            do throws(JSONSyntaxError) {
                try parser.skipWhitespaceRejectingComments()
                for key in path {
                    guard try parser.skimToMember(key) else { return nil }
                }
                guard parser.peek() == UInt8(ascii: "\"") else { return nil }
                return try parser.parseString()
            } catch {
                return nil
            }
        }
    }
}
