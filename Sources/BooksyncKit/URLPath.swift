/// Percent-encoding for URL paths and query values.
enum URLPath {
    private static func isUnreserved(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E
    }

    /// Encodes each segment of a slash-separated path; `(` and `)` stay readable.
    static func encode(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            percentEncode(String(segment)) { isUnreserved($0) || $0 == 0x28 || $0 == 0x29 }
        }.joined(separator: "/")
    }

    static func encodeQueryValue(_ value: String) -> String {
        percentEncode(value, keep: isUnreserved)
    }

    private static func percentEncode(_ text: String, keep: (UInt8) -> Bool) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        for b in text.utf8 {
            if keep(b) {
                out.append(b)
            } else {
                out += [0x25, digits[Int(b >> 4)], digits[Int(b & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The URL without the base and without a page token, for logs.
    static func displayPath(_ url: String, base: String) -> String {
        var path = url.hasPrefix(base) ? String(url.dropFirst(base.count)) : url
        if let token = path.firstRange(of: "&pageToken=") { path = String(path[..<token.lowerBound]) + "&pageToken=…" }
        return path
    }
}
