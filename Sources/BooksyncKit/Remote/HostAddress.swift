import BooksyncCore

/// Decides whether a URL's host is this machine, by parsing it, never by a
/// prefix test: `127.example.com` or `127.0.0.1.nip.io` are names anyone can
/// point anywhere, and a token sent to them over plain HTTP crosses a network.
///
/// Loopback is exactly:
/// - the name `localhost` (any letter case, no trailing dot, no subdomain);
/// - an IPv4 address in 127.0.0.0/8 written as a strict dotted quad: four
///   decimal parts of 0–255 without leading zeros (`0127.0.0.1` is octal 87 to
///   `inet_aton`, `127.1` a short form: both refused rather than guessed);
/// - the IPv6 address ::1 in any valid spelling (`::1`, `[::1]`,
///   `0:0:0:0:0:0:0:1`), without a zone (`%lo`).
///
/// IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is refused: it does reach loopback,
/// but nobody needs to write it, and every extra spelling accepted is one more
/// for a resolver or URL parser elsewhere to read differently.
package enum HostAddress {
    /// True only for a loopback spelling listed above, e.g. before sending a
    /// credential over plain HTTP.
    /// - Parameter host: A URL's host without port; an IPv6 address with or
    ///   without its brackets.
    package static func isLoopback(_ host: String) -> Bool {
        var text = Substring(host)
        if text.hasPrefix("[") {
            guard text.hasSuffix("]"), text.count > 2 else { return false }
            text = text.dropFirst().dropLast()
            return ipv6(text) == [0, 0, 0, 0, 0, 0, 0, 1]
        }
        if text.lowercased() == "localhost" { return true }
        if let v4 = ipv4(text) { return v4[0] == 127 }
        return ipv6(text) == [0, 0, 0, 0, 0, 0, 0, 1]
    }

    /// The four bytes of a strict dotted quad, or nil.
    static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  part == "0" || !part.hasPrefix("0"), let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    /// The eight 16-bit groups of an IPv6 address (RFC 4291 text form, `::`
    /// compression and a trailing dotted quad allowed), or nil.
    static func ipv6(_ text: Substring) -> [UInt16]? {
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        let halves = text.splitKeepingEmpty(on: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: Substring, allowIPv4: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            var result: [UInt16] = []
            for (index, piece) in pieces.enumerated() {
                if allowIPv4, index == pieces.count - 1, piece.contains(".") {
                    guard let v4 = ipv4(piece) else { return nil }
                    result += [UInt16(v4[0]) << 8 | UInt16(v4[1]), UInt16(v4[2]) << 8 | UInt16(v4[3])]
                    continue
                }
                guard (1...4).contains(piece.utf8.count), let value = UInt16(piece, radix: 16),
                      piece.utf8.allSatisfy({ Hex.value($0) != nil }) else { return nil }
                result.append(value)
            }
            return result
        }
        if halves.count == 1 {
            guard let all = groups(halves[0], allowIPv4: true), all.count == 8 else { return nil }
            return all
        }
        guard let head = groups(halves[0], allowIPv4: false), let tail = groups(halves[1], allowIPv4: true),
              head.count + tail.count <= 7 else { return nil }
        return head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
    }
}

extension Substring {
    /// Splits on a multi-character separator (`::`), keeping empty parts.
    fileprivate func splitKeepingEmpty(on separator: String) -> [Substring] {
        var parts: [Substring] = []
        var rest = self[...]
        while let range = rest.firstRange(of: separator) {
            parts.append(rest[..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        parts.append(rest)
        return parts
    }
}
