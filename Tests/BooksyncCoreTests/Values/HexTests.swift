import BooksyncCore
import Testing

/// The one hex and percent codec every format spells its digits with.
@Suite struct HexTests {
    @Test(arguments: [
        (UInt32(0), 1, Hex.LetterCase.lower, "0"), (0x1b, 2, .lower, "1b"), (0xe9, 4, .upper, "00E9"),
        (0x1f600, 1, .lower, "1f600"), (0x1f600, 4, .upper, "1F600"), (0xDBFF, 4, .upper, "DBFF"),
    ])
    func writesPaddedValues(value: UInt32, minimumDigits: Int, letters: Hex.LetterCase, text: String) {
        #expect(Hex.string(value, minimumDigits: minimumDigits, letters) == text)
    }

    @Test func writesBytesAndReadsDigits() {
        #expect(Hex.string([0x00, 0x9f, 0xab, 0xff], .lower) == "009fabff")
        #expect(Hex.string([0x00, 0x9f, 0xab, 0xff], .upper) == "009FABFF")
        for c in UInt8.min...UInt8.max {
            let expected: UInt8? = switch c {
            case 0x30...0x39: c - 0x30
            case 0x41...0x46, 0x61...0x66: (c | 0x20) - 0x61 + 10
            default: nil
            }
            #expect(Hex.value(c) == expected)
            #expect(Hex.value(c, only: .upper) == ((0x61...0x66).contains(c) ? nil : expected))
            #expect(Hex.value(c, only: .lower) == ((0x41...0x46).contains(c) ? nil : expected))
        }
    }

    @Test(arguments: [
        ("a b%", "a%20b%25"), ("é", "%C3%A9"), ("", ""), ("%41", "%2541"),
    ])
    func percentEncodingRoundTrips(text: String, encoded: String) {
        let result = PercentEncoding.encode(text.utf8) { b, _ in b != 0x20 && b != 0x25 && b < 0x80 }
        #expect(result == encoded)
        #expect(PercentEncoding.decode(result) == text)
    }

    @Test(arguments: ["%", "%4", "%c3%a9", "%C3", "%ZZ", "%FF"])
    func percentDecodingRejectsOtherSpellings(text: String) {
        #expect(PercentEncoding.decode(text) == nil)
    }
}
