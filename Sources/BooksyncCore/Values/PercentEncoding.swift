/// `%XX` escapes (uppercase hex of the bytes), the one encoder behind record
/// file names (`RecordID`) and URL paths and query values (`URLPath`); they
/// differ only in which bytes they keep as they are.
package enum PercentEncoding {
    /// `bytes` as text, each byte `keep` refuses written as `%XX`.
    /// - Parameters:
    ///   - bytes: UTF-8 (or any bytes: every byte `keep` refuses is escaped).
    ///   - keep: whether the byte at this offset stays as it is; must refuse
    ///     `%` so the result can be decoded, and every non-ASCII byte so the
    ///     result is ASCII.
    package static func encode(_ bytes: some Sequence<UInt8>, keep: (_ byte: UInt8, _ offset: Int) -> Bool) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount)
        for (offset, b) in bytes.enumerated() {
            if keep(b, offset) {
                out.append(b)
            } else {
                out.append(0x25)
                Hex.append(b, .upper, to: &out)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The exact inverse of `encode` for canonical escapes only: nil when an
    /// escape is malformed or in lowercase hex (another spelling of the same
    /// bytes), or when the bytes are not UTF-8. Which bytes should have been
    /// kept is the caller's rule to check (re-encode and compare).
    /// `anyCase`: lowercase hex is read too, only to name the canonical
    /// spelling of a misspelled file name, never to accept it.
    package static func decode(_ text: String, anyCase: Bool = false) -> String? {
        let bytes = Array(text.utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x25 {
                guard i + 2 < bytes.count, let hi = Hex.value(bytes[i + 1], only: anyCase ? nil : .upper),
                      let lo = Hex.value(bytes[i + 2], only: anyCase ? nil : .upper)
                else { return nil }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        let decoded = String(decoding: out, as: UTF8.self)
        return decoded.utf8.elementsEqual(out) ? decoded : nil
    }
}
