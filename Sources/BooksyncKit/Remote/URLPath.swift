import BooksyncCore

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
        PercentEncoding.encode(text.utf8) { b, _ in keep(b) }
    }

    /// The URL without the base and without a page token, for logs.
    static func displayPath(_ url: String, base: String) -> String {
        var path = url.hasPrefix(base) ? String(url.dropFirst(base.count)) : url
        if let token = path.firstRange(of: "&pageToken=") { path = String(path[..<token.lowerBound]) + "&pageToken=…" }
        return path
    }
}
