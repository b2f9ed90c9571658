import BooksyncCodable
import BooksyncCore
import BooksyncTestSupport
import Foundation
import Testing

/// `Date` ↔ timestamp, checked against Python's exact arithmetic: `Fraction`
/// for the binary value of a `Double`, `round` (ties to even) for the
/// microsecond, `datetime` for the calendar, and `float(Fraction)` (correctly
/// rounded) for the nearest `Double`. The rule under test: Date → timestamp
/// rounds the exact value to the nearest microsecond, ties to even; timestamp
/// → Date gives the nearest `Double`.
@Suite struct DatePrecisionTests {
    struct Stamped: Codable {
        var at: Date
    }

    /// Seconds since 2001-01-01 (the `Double` a `Date` holds).
    static let intervals: [(String, Double)] = [
        ("the reference date", 0),
        ("0.1 µs after it", 1e-7),
        ("0.1 µs before it", -1e-7),
        ("0.5 µs as a Double (just below the half)", 5e-7),
        ("1.5 µs as a Double", 1.5e-6),
        ("7812.5 µs, a tie: to even 7812", 0.0078125),
        ("23437.5 µs, a tie: to even 23438", 0.0234375),
        ("-7812.5 µs, a tie: to even -7812", -0.0078125),
        ("the smallest subnormal", .leastNonzeroMagnitude),
        ("the Unix epoch", -978_307_200),
        ("1 µs before the Unix epoch", -978_307_200.000001),
        ("1965-08-01, pre-1970", -1_117_756_800),
        ("2024-05-01T12:00:00.123456 as a Double", 736_257_600.123456),
        ("the next Double after it", 736_257_600.123456.nextUp),
        ("Date(timeIntervalSince1970: 1.000001)", Date(timeIntervalSince1970: 1.000001).timeIntervalSinceReferenceDate),
        ("1600-03-01T00:00:00.3, far before 2001 (× 1e6 in Double rounds to the wrong µs)", -12_622_694_399.7),
        ("9999-12-31T23:59:59.999999 as a Double, far future", 252_423_993_599.999999),
        ("Date.distantPast, 0001-01-01", Date.distantPast.timeIntervalSinceReferenceDate),
        ("Date.distantFuture, 4001-01-01", Date.distantFuture.timeIntervalSinceReferenceDate),
        ("the Double before 0001-01-01: out of range", Date.distantPast.timeIntervalSinceReferenceDate.nextDown),
        ("10000-01-01: out of range", 252_423_993_600),
        ("1e12 s: out of range", 1e12),
    ]

    static let timestamps = [
        "0001-01-01T00:00:00.000000Z", "0001-01-01T00:00:00.000001Z", "1600-02-29T12:34:56.789012Z", "1729-01-01T00:00:00.000001Z",
        "1965-08-01T00:00:00.000000Z", "1969-12-31T23:59:59.999999Z", "1970-01-01T00:00:00.000001Z", "2000-12-31T23:59:59.999999Z",
        "2001-01-01T00:00:00.000001Z", "2024-05-01T12:00:00.123456Z", "2272-12-31T23:59:59.999999Z", "2300-01-01T00:00:00.000001Z",
        "9999-12-31T23:59:59.999999Z",
        // Dividing two Doubles (µs since 2001 / 1e6) lands one step off the nearest Date for
        // these (and for 2300-01-01T00:00:00.000001Z above): the decoder must not do that.
        "1080-10-14T05:51:15.323430Z", "7213-05-12T03:00:27.320631Z", "7639-11-17T09:08:53.996378Z",
    ]

    static let python = """
    import math, struct, sys
    from datetime import datetime, timedelta, timezone
    from fractions import Fraction
    EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
    REFERENCE = 978307200 * 10**6
    def text(micros):
        return (EPOCH + timedelta(microseconds=micros)).strftime('%Y-%m-%dT%H:%M:%S.%fZ').rjust(27, '0')
    def encode(seconds):
        micros = round(Fraction(seconds) * 10**6) + REFERENCE
        try:
            return text(micros)
        except OverflowError:
            return 'out of range'
    for arg in sys.argv[1:]:
        kind, value = arg.split(':', 1)
        if kind == 'd':
            print(encode(struct.unpack('>d', bytes.fromhex(value))[0]))
        else:
            when = datetime.strptime(value.rjust(27, '0'), '%Y-%m-%dT%H:%M:%S.%fZ').replace(tzinfo=timezone.utc)
            micros = (when - EPOCH) // timedelta(microseconds=1) - REFERENCE
            nearest = float(Fraction(micros, 10**6))
            if encode(nearest) == 'out of range':
                # the end of 9999: the Date before the nearest, which stays in range
                nearest = math.nextafter(nearest, 0)
            print(struct.pack('>d', nearest).hex(), encode(nearest))
    """

    /// Python's answers, one line per argument.
    static func askPython(_ arguments: [String]) throws -> [Substring] {
        let output = try runProgram("/usr/bin/env", ["python3", "-c", python] + arguments, in: "/")
        try #require(output.status == 0, "python3 failed: \(output.stderr)")
        return output.stdout.split(separator: "\n")
    }

    static func hex(_ value: Double) -> String {
        let bits = value.bitPattern
        return (0..<8).map { String((bits >> (56 - 8 * UInt64($0))) & 0xFF, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
    }

    /// What `RecordEncoder` makes of a `Date`: its timestamp, or "out of range".
    static func encoded(_ date: Date) -> String {
        do {
            let fields = try RecordEncoder().encode(Stamped(at: date))
            guard case .timestamp(let timestamp)? = fields["at"] else { return "not a timestamp: \(String(describing: fields["at"]))" }
            return timestamp.rfc3339
        } catch EncodingError.invalidValue(_, let context) where context.debugDescription.contains("outside the timestamp range") {
            return "out of range"
        } catch {
            return "\(error)"
        }
    }

    @Test func dateToTimestampMatchesPython() throws {
        let expected = try Self.askPython(Self.intervals.map { "d:" + Self.hex($0.1) })
        try #require(expected.count == Self.intervals.count)
        for ((name, seconds), python) in zip(Self.intervals, expected) {
            #expect(Self.encoded(Date(timeIntervalSinceReferenceDate: seconds)) == String(python), "\(name)")
        }
    }

    @Test func tiesGoToTheEvenMicrosecond() throws {
        #expect(Self.encoded(Date(timeIntervalSinceReferenceDate: 0.0078125)) == "2001-01-01T00:00:00.007812Z")
        #expect(Self.encoded(Date(timeIntervalSinceReferenceDate: 0.0234375)) == "2001-01-01T00:00:00.023438Z")
    }

    /// Timestamp → nearest Date → timestamp. Within about 272 years of 2001 a
    /// Date step is under a microsecond and the round trip is exact; farther
    /// out the Date is the nearest it can hold, never more than half its step
    /// (2⁻¹⁶ s ≈ 15.3 µs in year 9999) away (but see the last timestamp
    /// below), and re-encodes to its own nearest microsecond.
    @Test func timestampToDateMatchesPython() throws {
        let expected = try Self.askPython(Self.timestamps.map { "t:" + $0 })
        try #require(expected.count == Self.timestamps.count)
        for (text, python) in zip(Self.timestamps, expected) {
            let parts = python.split(separator: " ", maxSplits: 1)
            let timestamp = try Timestamp(rfc3339: text)
            let dto = try RecordDecoder().decode(Stamped.self, from: ["at": .timestamp(timestamp)])
            #expect(Self.hex(dto.at.timeIntervalSinceReferenceDate) == String(parts[0]), "\(text)")
            let again = Self.encoded(dto.at)
            #expect(again == String(parts[1]), "\(text)")
            let drift = try Timestamp(rfc3339: again).microsecondsSinceEpoch - timestamp.microsecondsSinceEpoch
            let secondsFrom2001 = abs(dto.at.timeIntervalSinceReferenceDate)
            if secondsFrom2001 < 0x1p33 {
                #expect(drift == 0, "\(text) is within 2^33 s of 2001 and must round-trip exactly")
            } else {
                // Half a step (15.3 µs in 9999) plus the microsecond rounding; a whole
                // step (30.5 µs) at the end of 9999, where the Date before is taken.
                #expect(abs(drift) <= (timestamp == .maximum ? 31 : 16), "\(text) drifted \(drift) µs")
            }
        }
    }

    /// The nearest Date to 9999-12-31T23:59:59.999999Z is 10000-01-01, which
    /// has no timestamp; the decoder takes the Date before it.
    @Test func theLastTimestampDecodesToADateThatEncodesAgain() throws {
        let last = Timestamp.maximum
        let dto = try RecordDecoder().decode(Stamped.self, from: ["at": .timestamp(last)])
        #expect(dto.at.timeIntervalSinceReferenceDate == 252_423_993_600.nextDown)
        let again = Self.encoded(dto.at)
        #expect(again.hasPrefix("9999-12-31T23:59:59.99"), "\(again)")
        #expect(again != last.rfc3339, "a Date in year 9999 cannot hold every microsecond (its step is about 30.5 µs)")
    }

    static let unencodable: [(String, Date)] = [
        ("NaN", Date(timeIntervalSinceReferenceDate: .nan)),
        ("infinity", Date(timeIntervalSinceReferenceDate: .infinity)),
        ("-infinity", Date(timeIntervalSinceReferenceDate: -.infinity)),
        ("before year 1", Date(timeIntervalSinceReferenceDate: -63_114_076_801)),
        ("after year 9999", Date(timeIntervalSinceReferenceDate: 252_423_993_600)),
    ]

    @Test func datesWithoutTimestampAreEncodingErrorsWithPath() {
        for (name, date) in Self.unencodable {
            #expect(Self.encoded(date) == "out of range", "\(name)")
            do {
                _ = try RecordEncoder().encode(["when": ["at": date]])
                Issue.record("\(name) encoded")
            } catch EncodingError.invalidValue(_, let context) {
                #expect(context.codingPath.map(\.stringValue) == ["when", "at"], "\(name)")
            } catch {
                Issue.record("\(name): \(error)")
            }
        }
    }
}
