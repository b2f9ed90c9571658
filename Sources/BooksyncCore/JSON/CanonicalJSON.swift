/// The one byte form booksync writes, `fmt` produces and hashes cover
/// (the manual's CollectionFormat article).
///
/// Two-space indent, `"key": value`, the leading keys (the schema's required
/// fields, `id` first) in their given order and then all other keys sorted by
/// their UTF-8 bytes, nested keys sorted, `[]`/`{}` for empty containers,
/// minimal escaping (`"`, `\`, control characters; lowercase `\u00xx` where no
/// short escape exists), LF line ends and one final newline. Tagged values are
/// written on one line. Doubles use the shortest form that round-trips, with
/// `.0` when there is no fraction or exponent and exponents without `+` or
/// leading zeros (`1e300`, `1e-7`).
package enum CanonicalJSON {
    /// Encodes a record (or any top-level object) in canonical form.
    package static func encode(_ fields: Fields, leadingKeys: [String] = []) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(512)
        writeObject(fields, leadingKeys: leadingKeys, indent: 0, into: &out)
        out.append(0x0A)
        return out
    }

    /// Encodes a single value on one line, e.g. for messages, diffs and manifest lines.
    package static func encodeInline(_ value: Value) -> String {
        var out = [UInt8]()
        writeInline(value, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Keys in canonical order: the leading keys present, then the rest by UTF-8 bytes.
    package static func orderedKeys(_ fields: Fields, leadingKeys: [String]) -> [String] {
        var keys: [String] = []
        keys.reserveCapacity(fields.count)
        for key in leadingKeys where fields[key] != nil { keys.append(key) }
        let rest = fields.keys.filter { !leadingKeys.contains($0) }.sorted(by: utf8Less)
        keys.append(contentsOf: rest)
        return keys
    }

    /// Byte-wise order of UTF-8 encodings (not Swift's Unicode-aware `<`).
    package static func utf8Less(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { pa in
            b.withUTF8 { pb in
                let n = min(pa.count, pb.count)
                var i = 0
                while i < n {
                    let x = pa[i], y = pb[i]
                    if x != y { return x < y }
                    i += 1
                }
                return pa.count < pb.count
            }
        }
    }

    private static func writeObject(_ fields: Fields, leadingKeys: [String], indent: Int, into out: inout [UInt8]) {
        if fields.isEmpty {
            out.append(contentsOf: [0x7B, 0x7D])
            return
        }
        out.append(0x7B)
        var first = true
        for key in orderedKeys(fields, leadingKeys: leadingKeys) {
            if !first { out.append(0x2C) }
            first = false
            out.append(0x0A)
            writeIndent(indent + 1, into: &out)
            writeString(key, into: &out)
            out.append(contentsOf: [0x3A, 0x20])
            writeValue(fields[key]!, indent: indent + 1, into: &out)
        }
        out.append(0x0A)
        writeIndent(indent, into: &out)
        out.append(0x7D)
    }

    private static func writeValue(_ value: Value, indent: Int, into out: inout [UInt8]) {
        switch value {
        case .map(let m):
            writeObject(m, leadingKeys: [], indent: indent, into: &out)
        case .array(let items):
            if items.isEmpty {
                out.append(contentsOf: [0x5B, 0x5D])
                return
            }
            out.append(0x5B)
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(0x2C) }
                out.append(0x0A)
                writeIndent(indent + 1, into: &out)
                writeValue(item, indent: indent + 1, into: &out)
            }
            out.append(0x0A)
            writeIndent(indent, into: &out)
            out.append(0x5D)
        default:
            writeInline(value, into: &out)
        }
    }

    /// Scalars and tagged values; containers on one line (used for inline rendering).
    private static func writeInline(_ value: Value, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            if d.isFinite {
                out.append(contentsOf: formatDouble(d).utf8)
            } else {
                writeTag("$double", into: &out)
                writeString(d.isNaN ? "NaN" : (d < 0 ? "-Infinity" : "Infinity"), into: &out)
                out.append(0x7D)
            }
        case .string(let s): writeString(s, into: &out)
        case .timestamp(let t):
            writeTag("$timestamp", into: &out)
            writeString(t.rfc3339, into: &out)
            out.append(0x7D)
        case .bytes(let b):
            writeTag("$bytes", into: &out)
            writeString(Base64.encode(b), into: &out)
            out.append(0x7D)
        case .reference(let path):
            writeTag("$reference", into: &out)
            writeString(path, into: &out)
            out.append(0x7D)
        case .geoPoint(let lat, let lon):
            writeTag("$geopoint", into: &out)
            out.append(contentsOf: "{\"latitude\": ".utf8)
            out.append(contentsOf: formatDouble(lat).utf8)
            out.append(contentsOf: ", \"longitude\": ".utf8)
            out.append(contentsOf: formatDouble(lon).utf8)
            out.append(contentsOf: "}}".utf8)
        case .array(let items):
            out.append(0x5B)
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(contentsOf: [0x2C, 0x20]) }
                writeInline(item, into: &out)
            }
            out.append(0x5D)
        case .map(let m):
            out.append(0x7B)
            for (i, key) in orderedKeys(m, leadingKeys: []).enumerated() {
                if i > 0 { out.append(contentsOf: [0x2C, 0x20]) }
                writeString(key, into: &out)
                out.append(contentsOf: [0x3A, 0x20])
                writeInline(m[key]!, into: &out)
            }
            out.append(0x7D)
        }
    }

    private static func writeTag(_ tag: String, into out: inout [UInt8]) {
        out.append(0x7B)
        writeString(tag, into: &out)
        out.append(contentsOf: [0x3A, 0x20])
    }

    private static func writeIndent(_ level: Int, into out: inout [UInt8]) {
        for _ in 0..<(level * 2) { out.append(0x20) }
    }

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        var s = s
        // Runs without anything to escape (nearly every string) are copied whole.
        s.withUTF8 { bytes in
            var start = 0
            for index in 0..<bytes.count {
                let b = bytes[index]
                guard b == 0x22 || b == 0x5C || b < 0x20 else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                appendEscaped(b, into: &out)
                start = index + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        out.append(0x22)
    }

    /// The escape of one byte `writeString` does not copy as it is.
    private static func appendEscaped(_ b: UInt8, into out: inout [UInt8]) {
        out.append(0x5C)
        switch b {
        case 0x22: out.append(0x22)
        case 0x5C: out.append(0x5C)
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        default:
            out.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30])
            Hex.append(b, .lower, to: &out)
        }
    }

    /// A string as a JSON literal in plain ASCII: every control character and
    /// every non-ASCII scalar as `\uXXXX` (UTF-16, uppercase hex). For
    /// messages that must show exactly which characters a name holds
    /// (`"caf\u00E9"` is not `"cafe\u0301"`) and must not carry control
    /// characters to a terminal.
    package static func asciiQuoted(_ s: String) -> String {
        var out = "\""
        for unit in s.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                out += "\\u" + Hex.string(UInt32(unit), minimumDigits: 4, .upper)
            }
        }
        return out + "\""
    }

    /// Shortest round-trip text of a finite double, always recognisable as a double.
    /// -0.0 is written `0.0`: Firestore's REST API reads `-0` as `0` (the
    /// proto3 JSON mapping; the emulator stores 0.0 for every spelling of
    /// it), so a negative zero could never round-trip through booksync's
    /// writes; booksync treats it as a spelling of 0.0, like `4.2e1` is a
    /// spelling of `42.0` (the manual's CollectionFormat article).
    package static func formatDouble(_ d: Double) -> String {
        if d == 0 { return "0.0" }
        var s = d.description  // shortest round-trip digits, e.g. "1e+300", "1e-07", "0.1", "100.0"
        if let e = s.firstIndex(of: "e") {
            let mantissa = s[..<e]
            var exponent = s[s.index(after: e)...]
            var negative = false
            if exponent.first == "+" { exponent = exponent.dropFirst() }
            else if exponent.first == "-" { negative = true; exponent = exponent.dropFirst() }
            while exponent.count > 1, exponent.first == "0" { exponent = exponent.dropFirst() }
            s = mantissa + "e" + (negative ? "-" : "") + exponent
        } else if !s.contains(".") {
            s += ".0"
        }
        return s
    }
}
