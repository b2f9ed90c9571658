/// A point in time with microsecond precision, the precision Firestore keeps.
///
/// Stored as microseconds since 1970-01-01T00:00:00Z; the valid range is
/// Firestore's, 0001-01-01 through 9999-12-31.
public struct Timestamp: Hashable, Sendable, Comparable {
    /// Microseconds since 1970-01-01T00:00:00Z (UTC), negative before it.
    public let microsecondsSinceEpoch: Int64

    /// A timestamp from microseconds since 1970-01-01T00:00:00Z (UTC). Not
    /// range-checked: compare with `minimum` and `maximum` if the value is untrusted.
    public init(microsecondsSinceEpoch: Int64) {
        self.microsecondsSinceEpoch = microsecondsSinceEpoch
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.microsecondsSinceEpoch < rhs.microsecondsSinceEpoch
    }

    static let microsPerSecond: Int64 = 1_000_000
    static let secondsPerDay: Int64 = 86_400

    /// Parses any RFC 3339 date-time (`2024-05-01T12:00:00Z`, `…T14:00:00.5+02:00`,
    /// 0–9 fraction digits). Digits beyond microseconds must be zero, because
    /// Firestore would silently drop them and the value would change.
    /// - Throws: `TimestampError`: `.malformed` for bad syntax or an impossible
    ///   date, `.leapSecond` for second 60, `.subMicrosecond`, or
    ///   `.outOfRange` outside `minimum`...`maximum`.
    public init(rfc3339 text: String) throws(TimestampError) {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ count: Int) throws(TimestampError) -> Int64 {
            guard i + count <= b.count else { throw .malformed(text) }
            var n: Int64 = 0
            for _ in 0..<count {
                let c = b[i]
                guard c >= 0x30, c <= 0x39 else { throw .malformed(text) }
                n = n * 10 + Int64(c - 0x30)
                i += 1
            }
            return n
        }
        func expect(_ chars: UInt8...) throws(TimestampError) {
            guard i < b.count, chars.contains(b[i]) else { throw .malformed(text) }
            i += 1
        }
        let year = try digits(4); try expect(0x2D)
        let month = try digits(2); try expect(0x2D)
        let day = try digits(2); try expect(0x54, 0x74)  // T or t
        let hour = try digits(2); try expect(0x3A)
        let minute = try digits(2); try expect(0x3A)
        let second = try digits(2)
        var micros: Int64 = 0
        if i < b.count, b[i] == 0x2E {
            i += 1
            var count = 0
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                let d = Int64(b[i] - 0x30)
                if count < 6 {
                    micros = micros * 10 + d
                } else if d != 0 {
                    throw .subMicrosecond(text)
                }
                count += 1
                i += 1
            }
            guard count > 0 else { throw .malformed(text) }
            for _ in count..<max(count, 6) { micros *= 10 }
        }
        var offsetSeconds: Int64 = 0
        guard i < b.count else { throw .malformed(text) }
        if b[i] == 0x5A || b[i] == 0x7A {  // Z or z
            i += 1
        } else {
            let sign: Int64 = b[i] == 0x2B ? 1 : (b[i] == 0x2D ? -1 : 0)
            guard sign != 0 else { throw .malformed(text) }
            i += 1
            let oh = try digits(2); try expect(0x3A)
            let om = try digits(2)
            guard oh < 24, om < 60 else { throw .malformed(text) }
            offsetSeconds = sign * (oh * 3600 + om * 60)
        }
        guard i == b.count else { throw .malformed(text) }
        guard (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year),
              hour < 24, minute < 60, second <= 60
        else { throw .malformed(text) }
        // RFC 3339 writes a leap second as second 60; Firestore's timestamps
        // (Unix time, smeared) have none, so it is refused as what it is.
        if second == 60 { throw .leapSecond(text) }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let seconds = days * Self.secondsPerDay + hour * 3600 + minute * 60 + second - offsetSeconds
        let value = seconds * Self.microsPerSecond + micros
        guard value >= Self.minimum.microsecondsSinceEpoch, value <= Self.maximum.microsecondsSinceEpoch else {
            throw .outOfRange(text)
        }
        self.init(microsecondsSinceEpoch: value)
    }

    /// 0001-01-01T00:00:00Z, Firestore's earliest timestamp.
    public static let minimum = Timestamp(microsecondsSinceEpoch: -62_135_596_800 * 1_000_000)
    /// 9999-12-31T23:59:59.999999Z, Firestore's latest timestamp.
    public static let maximum = Timestamp(microsecondsSinceEpoch: 253_402_300_799 * 1_000_000 + 999_999)

    /// Canonical form: UTC, exactly six fraction digits, `Z`.
    public var rfc3339: String {
        var seconds = microsecondsSinceEpoch / Self.microsPerSecond
        var micros = microsecondsSinceEpoch % Self.microsPerSecond
        if micros < 0 { micros += Self.microsPerSecond; seconds -= 1 }
        var days = seconds / Self.secondsPerDay
        var secondOfDay = seconds % Self.secondsPerDay
        if secondOfDay < 0 { secondOfDay += Self.secondsPerDay; days -= 1 }
        let (y, m, d) = Self.civilFromDays(days)
        func pad(_ n: Int64, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(micros, 6))Z"
    }

    static func isLeap(_ y: Int64) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Year, month and day of `days` since 1970-01-01 (proleptic Gregorian: Howard Hinnant's civil_from_days).
    package static func civilFromDays(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, m, d)
    }
}

/// Why a timestamp string was rejected.
public enum TimestampError: Error, Equatable, Sendable {
    /// Not an RFC 3339 date-time, or a date or time that does not exist.
    case malformed(String)
    /// Non-zero digits beyond the sixth fraction digit.
    case subMicrosecond(String)
    /// A leap second (`23:59:60Z`): valid RFC 3339, but no Firestore timestamp.
    case leapSecond(String)
    /// Before 0001-01-01 or after 9999-12-31 (UTC).
    case outOfRange(String)

    /// The reason as a sentence quoting the rejected text.
    public var message: String {
        switch self {
        case .malformed(let s):
            "'\(TerminalEscaping.abbreviate(s))' is not an RFC 3339 timestamp like 2024-05-01T12:00:00.000000Z"
        case .leapSecond(let s):
            "'\(TerminalEscaping.abbreviate(s))' is a leap second, which Firestore cannot store (its timestamps have no second 60); "
                + "write the second before or after it"
        case .subMicrosecond(let s):
            "'\(TerminalEscaping.abbreviate(s))' is more precise than a microsecond; Firestore keeps microseconds, so drop the extra digits"
        case .outOfRange(let s):
            "'\(TerminalEscaping.abbreviate(s))' is outside Firestore's range 0001-01-01 to 9999-12-31"
        }
    }
}
