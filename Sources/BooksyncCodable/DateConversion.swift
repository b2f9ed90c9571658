import BooksyncCore
import Foundation

/// `Date` ↔ `Timestamp` without rounding twice.
///
/// A `Date` is a `Double` count of seconds since 2001-01-01T00:00:00Z; a
/// `Timestamp` is an integer count of microseconds since 1970. Converting
/// through `timeIntervalSince1970 * 1e6` would round in the subtraction, in the
/// multiplication and in the conversion, and could land a microsecond off.
/// Both directions here work on the exact binary value instead:
///
/// - Date → Timestamp: the exact value of the `Double` times 10⁶, rounded to
///   the nearest microsecond, ties to even (a tie needs a fraction like
///   1/128 s = 7812.5 µs, which a `Double` can hold). A `Date` holds more than
///   microseconds only near 2001; everything past the sixth digit is dropped
///   by that one rounding.
/// - Timestamp → Date: the `Double` nearest to the exact number of seconds
///   (ties to even). Within about 272 years of 2001 (1729–2273) a `Double`
///   step is under a microsecond, so the round trip Timestamp → Date →
///   Timestamp gives back the same timestamp. Farther out a `Date` cannot hold
///   every microsecond (its step is 2⁻¹⁵ s ≈ 30.5 µs in year 9999), so decoding
///   gives the nearest `Date`, at most half a step away, and encoding that
///   `Date` gives its own nearest microsecond.
/// - Outside Firestore's range 0001-01-01 … 9999-12-31, and for a NaN or
///   infinite interval, there is no timestamp: encoding fails.
enum DateConversion {
    /// Seconds from 1970-01-01 to 2001-01-01, the reference date of `Date`.
    static let referenceDateSeconds: Int64 = 978_307_200
    static let microsPerSecond: Int64 = 1_000_000

    /// The timestamp of `date`, rounded to the nearest microsecond (ties to
    /// even), or nil if it is outside `Timestamp.minimum...Timestamp.maximum`.
    static func timestamp(of date: Date) -> Timestamp? {
        guard let micros = microseconds(ofSeconds: date.timeIntervalSinceReferenceDate) else { return nil }
        let sinceEpoch = micros + referenceDateSeconds * microsPerSecond
        guard sinceEpoch >= Timestamp.minimum.microsecondsSinceEpoch,
              sinceEpoch <= Timestamp.maximum.microsecondsSinceEpoch else { return nil }
        return Timestamp(microsecondsSinceEpoch: sinceEpoch)
    }

    /// The `Date` nearest to `timestamp` (ties to even), except at the very
    /// end of year 9999: there the nearest `Date` can be 10000-01-01, which
    /// would not encode again, so the one just before it is taken.
    static func date(of timestamp: Timestamp) -> Date {
        let micros = timestamp.microsecondsSinceEpoch - referenceDateSeconds * microsPerSecond
        var seconds = nearestSeconds(toMicroseconds: micros)
        let lastMicros = Timestamp.maximum.microsecondsSinceEpoch - referenceDateSeconds * microsPerSecond
        let firstMicros = Timestamp.minimum.microsecondsSinceEpoch - referenceDateSeconds * microsPerSecond
        if let rounded = microseconds(ofSeconds: seconds), rounded > lastMicros { seconds = seconds.nextDown }
        if let rounded = microseconds(ofSeconds: seconds), rounded < firstMicros { seconds = seconds.nextUp }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// `seconds` × 10⁶ rounded to the nearest integer, ties to even, computed
    /// exactly; nil for NaN, the infinities and magnitudes far beyond any
    /// timestamp (above 10¹² s, about 31,700 years).
    static func microseconds(ofSeconds seconds: Double) -> Int64? {
        guard seconds.isFinite, seconds.magnitude <= 1e12 else { return nil }
        if seconds == 0 { return 0 }
        let magnitude = seconds.magnitude
        // magnitude = significand × 2^(exponent - 52), significand a 53-bit integer
        // (fewer bits for subnormals, whose exponent is fixed at -1022).
        let significand: UInt64
        let exponent: Int
        if magnitude.isNormal {
            significand = (1 << 52) | magnitude.significandBitPattern
            exponent = Int(magnitude.exponent)
        } else {
            significand = magnitude.significandBitPattern
            exponent = -1022
        }
        let shift = 52 - exponent
        var micros: UInt128
        if shift <= 0 {
            micros = UInt128(significand) << UInt128(-shift) * 1_000_000
        } else if shift >= 75 {
            // significand × 10⁶ < 2⁷³ ≤ 2^(shift-2): less than a quarter microsecond.
            micros = 0
        } else {
            let product = UInt128(significand) * 1_000_000
            micros = product >> UInt128(shift)
            let remainder = product & ((1 << UInt128(shift)) - 1)
            let half = UInt128(1) << UInt128(shift - 1)
            if remainder > half || (remainder == half && micros & 1 == 1) { micros += 1 }
        }
        let value = Int64(micros)
        return seconds < 0 ? -value : value
    }

    /// The `Double` nearest to `micros` / 10⁶ seconds, ties to even, computed
    /// exactly (dividing two `Double`s would round `micros` first when it is
    /// above 2⁵³, about 285 years from 2001).
    static func nearestSeconds(toMicroseconds micros: Int64) -> Double {
        if micros == 0 { return 0 }
        let magnitude = UInt128(micros.magnitude)  // below 2⁶³
        let bitLength = 128 - magnitude.leadingZeroBitCount
        // Scale so the quotient by 10⁶ has 53 or 54 bits, then settle on 53.
        var shift = 73 - bitLength  // magnitude << shift is in [2⁷², 2⁷³)
        var scaled = magnitude << UInt128(shift)  // shift ≥ 10: the magnitude has at most 63 bits
        var quotient = scaled / 1_000_000
        if quotient >= 1 << 53 {
            shift -= 1
            scaled = magnitude << UInt128(shift)
            quotient = scaled / 1_000_000
        }
        let twiceRemainder = (scaled % 1_000_000) * 2
        if twiceRemainder > 1_000_000 || (twiceRemainder == 1_000_000 && quotient & 1 == 1) { quotient += 1 }
        // quotient ≤ 2⁵³ is exact as a Double, and scaling by a power of two is exact.
        let value = Double(sign: .plus, exponent: -shift, significand: Double(UInt64(quotient)))
        return micros < 0 ? -value : value
    }
}
