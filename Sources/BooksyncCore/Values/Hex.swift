/// Hexadecimal digits: the one place booksync turns nibbles into ASCII and
/// back. Content hashes, `\u00XX` escapes in canonical JSON, `%XX` in file
/// names and URLs, terminal escapes and parser messages all spell their hex
/// here, each in the letter case its format fixes.
///
/// Arithmetic rather than a table: no lazily initialised global and no
/// bounds check on the hot paths (canonical JSON, manifest parsing).
package enum Hex {
    /// The letters `a`–`f` of a format: JSON escapes and hashes are written in
    /// lowercase, `%XX` and `\uXXXX` in messages in uppercase.
    package enum LetterCase: Sendable {
        case lower, upper
    }

    /// The ASCII digit for the low four bits of `nibble`.
    @inlinable
    package static func digit(_ nibble: UInt8, _ letters: LetterCase) -> UInt8 {
        let n = nibble & 0xF
        if n < 10 { return 0x30 &+ n }
        switch letters {
        case .lower: return 0x57 &+ n
        case .upper: return 0x37 &+ n
        }
    }

    /// Appends the two digits of `byte`.
    @inlinable
    package static func append(_ byte: UInt8, _ letters: LetterCase, to out: inout [UInt8]) {
        out.append(digit(byte >> 4, letters))
        out.append(digit(byte, letters))
    }

    /// Two digits for each byte (a digest as text).
    package static func string(_ bytes: [UInt8], _ letters: LetterCase) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { append(b, letters, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` in hex, left-padded with zeros to at least `minimumDigits`
    /// (`\u00e9`, `\x1b`, `\u{1f600}`).
    package static func string(_ value: UInt32, minimumDigits: Int, _ letters: LetterCase) -> String {
        var out = [UInt8]()
        var v = value
        repeat {
            out.append(digit(UInt8(truncatingIfNeeded: v), letters))
            v >>= 4
        } while v != 0
        while out.count < minimumDigits { out.append(0x30) }
        return String(decoding: out.reversed(), as: UTF8.self)
    }

    /// The value of one hex digit; nil for anything else, or for a letter in
    /// the other case when `only` names the case a canonical form requires.
    @inlinable
    package static func value(_ c: UInt8, only letters: LetterCase? = nil) -> UInt8? {
        switch c {
        case 0x30...0x39: return c &- 0x30
        case 0x41...0x46 where letters != .lower: return c &- 0x37
        case 0x61...0x66 where letters != .upper: return c &- 0x57
        default: return nil
        }
    }
}
