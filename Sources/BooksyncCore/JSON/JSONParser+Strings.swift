/// Strings: escapes, surrogate pairs and UTF-8 validation, with positions.
extension JSONGrammar {
    mutating func parseString() throws(JSONSyntaxError) -> String {
        let open = index
        index += 1  // opening quote
        var out = [UInt8]()
        var runStart = index
        while true {
            guard index < bytes.count else { throw error("unterminated string (opened at \(position(of: open)))") }
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                if out.isEmpty {
                    let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<index]), as: UTF8.self)
                    index += 1
                    return s
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                index += 1
                return String(decoding: out, as: UTF8.self)
            }
            if c == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                try parseEscape(into: &out)
                runStart = index
                continue
            }
            if c < 0x20 {
                if c == 0x0A { throw error("unterminated string (opened at \(position(of: open)))") }
                throw error("control character U+00\(Hex.string(UInt32(c), minimumDigits: 2, .upper)) must be escaped in a string")
            }
            if c < 0x80 {
                index += 1
            } else {
                let length = utf8SequenceLength(at: index)
                guard length > 0 else { throw error("invalid UTF-8 byte 0x\(Hex.string(UInt32(c), minimumDigits: 2, .upper)) in a string") }
                index += length
            }
        }
    }

    mutating func parseEscape(into out: inout [UInt8]) throws(JSONSyntaxError) {
        let start = index
        index += 1  // backslash
        guard let e = peek() else { throw error("unexpected end of file in an escape sequence") }
        index += 1
        switch e {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4(escapeStart: start)
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired surrogate \\u\(Hex.string(scalar, minimumDigits: 4, .upper)); a high surrogate must be followed by a low one", at: start)
                }
                let lowStart = index
                index += 2  // backslash and u
                let low = try hex4(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error("unpaired surrogate \\u\(Hex.string(scalar, minimumDigits: 4, .upper)); a high surrogate must be followed by a low one", at: start)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("unpaired surrogate \\u\(Hex.string(scalar, minimumDigits: 4, .upper))", at: start)
            }
            appendUTF8(scalar, to: &out)
        default:
            throw error("invalid escape '\\\(describe(at: index - 1))'; valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", at: start)
        }
    }

    /// Four hex digits at the current index (just after `\u`).
    mutating func hex4(escapeStart: Int) throws(JSONSyntaxError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count else { throw error("unexpected end of file in a \\u escape") }
            let c = bytes[index]
            guard let d = Hex.value(c) else { throw error("invalid \\u escape; expected four hex digits", at: escapeStart) }
            v = v << 4 | UInt32(d)
            index += 1
        }
        return v
    }

    func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6)); out.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12)); out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18)); out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F)); out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    func validUTF8Sequence(at offset: Int) -> Bool { utf8SequenceLength(at: offset) > 0 }

    /// Length of the well-formed UTF-8 sequence at `offset` (RFC 3629: no overlongs,
    /// no surrogates, nothing above U+10FFFF), or 0 if it is malformed.
    func utf8SequenceLength(at offset: Int) -> Int {
        let b0 = bytes[offset]
        func cont(_ i: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            offset + i < bytes.count && range.contains(bytes[offset + i])
        }
        switch b0 {
        case 0xC2...0xDF: return cont(1) ? 2 : 0
        case 0xE0: return cont(1, 0xA0...0xBF) && cont(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF: return cont(1) && cont(2) ? 3 : 0
        case 0xED: return cont(1, 0x80...0x9F) && cont(2) ? 3 : 0
        case 0xF0: return cont(1, 0x90...0xBF) && cont(2) && cont(3) ? 4 : 0
        case 0xF1...0xF3: return cont(1) && cont(2) && cont(3) ? 4 : 0
        case 0xF4: return cont(1, 0x80...0x8F) && cont(2) && cont(3) ? 4 : 0
        default: return 0
        }
    }
}
