/// Just enough arbitrary-precision unsigned arithmetic for an RSA signature
/// (`RSASigner.swift`): big-endian bytes in and out, compare, add, subtract,
/// multiply, remainder, and modular exponentiation.
///
/// Why it exists: booksync may not depend on packages, Foundation has no RSA
/// on Linux, and CryptoKit/Security are Apple-only, yet a `service_account`
/// credentials file can only be used by signing a JWT with its RSA key.
///
/// Numbers are little-endian arrays of 64-bit limbs (products are 128 bits
/// with `multipliedFullWidth`); `power(_:modulus:)` uses Montgomery
/// multiplication with a fixed 4-bit window for odd moduli. Nothing here is
/// constant-time: the only secret it handles is the user's own key, used on
/// the user's own machine (see `RSAPrivateKey`).
struct BigUInt: Equatable, Comparable, Sendable {
    /// Little-endian limbs, never with a zero limb at the top (zero is `[]`).
    private(set) var limbs: [UInt64]

    init(limbs: [UInt64]) {
        self.limbs = limbs
        while self.limbs.last == 0 { self.limbs.removeLast() }
    }

    init(_ value: UInt64) { self.init(limbs: [value]) }

    /// A number from its big-endian bytes; leading zero bytes are allowed.
    init(bigEndian bytes: some Collection<UInt8>) {
        var out = [UInt64](repeating: 0, count: (bytes.count + 7) / 8)
        for (i, byte) in bytes.reversed().enumerated() {
            out[i / 8] |= UInt64(byte) << UInt64(i % 8 * 8)
        }
        self.init(limbs: out)
    }

    /// The number as exactly `count` big-endian bytes (zeros in front), or nil
    /// when it does not fit.
    func bigEndianBytes(count: Int) -> [UInt8]? {
        guard (bitWidth + 7) / 8 <= count else { return nil }
        var out = [UInt8](repeating: 0, count: count)
        for i in 0..<min(count, limbs.count * 8) {
            out[count - 1 - i] = UInt8(truncatingIfNeeded: limbs[i / 8] >> UInt64(i % 8 * 8))
        }
        return out
    }

    var isZero: Bool { limbs.isEmpty }
    var isOdd: Bool { (limbs.first ?? 0) & 1 == 1 }

    /// The number of significant bits (0 for zero).
    var bitWidth: Int {
        guard let top = limbs.last else { return 0 }
        return limbs.count * 64 - top.leadingZeroBitCount
    }

    static func < (a: BigUInt, b: BigUInt) -> Bool {
        if a.limbs.count != b.limbs.count { return a.limbs.count < b.limbs.count }
        for i in stride(from: a.limbs.count - 1, through: 0, by: -1) where a.limbs[i] != b.limbs[i] {
            return a.limbs[i] < b.limbs[i]
        }
        return false
    }

    static func + (a: BigUInt, b: BigUInt) -> BigUInt {
        var out = [UInt64](repeating: 0, count: max(a.limbs.count, b.limbs.count) + 1)
        var carry: UInt64 = 0
        for i in 0..<(out.count - 1) {
            let (s1, o1) = (i < a.limbs.count ? a.limbs[i] : 0).addingReportingOverflow(i < b.limbs.count ? b.limbs[i] : 0)
            let (s2, o2) = s1.addingReportingOverflow(carry)
            out[i] = s2
            carry = (o1 ? 1 : 0) + (o2 ? 1 : 0)
        }
        out[out.count - 1] = carry
        return BigUInt(limbs: out)
    }

    /// `a - b`; `a` must not be smaller than `b`.
    static func - (a: BigUInt, b: BigUInt) -> BigUInt {
        precondition(!(a < b), "BigUInt subtraction would be negative")
        var out = a.limbs
        var borrow: UInt64 = 0
        for i in 0..<out.count {
            let (d1, o1) = out[i].subtractingReportingOverflow(i < b.limbs.count ? b.limbs[i] : 0)
            let (d2, o2) = d1.subtractingReportingOverflow(borrow)
            out[i] = d2
            borrow = (o1 ? 1 : 0) + (o2 ? 1 : 0)
        }
        return BigUInt(limbs: out)
    }

    static func * (a: BigUInt, b: BigUInt) -> BigUInt {
        if a.isZero || b.isZero { return BigUInt(limbs: []) }
        var out = [UInt64](repeating: 0, count: a.limbs.count + b.limbs.count)
        for i in 0..<a.limbs.count {
            var carry: UInt64 = 0
            for j in 0..<b.limbs.count {
                let (high, low) = a.limbs[i].multipliedFullWidth(by: b.limbs[j])
                let (s1, o1) = low.addingReportingOverflow(out[i + j])
                let (s2, o2) = s1.addingReportingOverflow(carry)
                out[i + j] = s2
                carry = high &+ (o1 ? 1 : 0) &+ (o2 ? 1 : 0)  // at most 2^64 - 1: no overflow
            }
            out[i + b.limbs.count] = carry
        }
        return BigUInt(limbs: out)
    }

    /// The remainder of `a / m` (Knuth, TAOCP vol. 2, 4.3.1, Algorithm D).
    static func % (a: BigUInt, m: BigUInt) -> BigUInt {
        precondition(!m.isZero, "BigUInt remainder by zero")
        if a < m { return a }
        let n = m.limbs.count
        if n == 1 {
            var rest: UInt64 = 0
            for limb in a.limbs.reversed() { rest = m.limbs[0].dividingFullWidth((rest, limb)).remainder }
            return BigUInt(rest)
        }
        // Normalize so that the divisor's top limb has its high bit set.
        let shift = m.limbs[n - 1].leadingZeroBitCount
        let v = shiftedLeft(m.limbs, by: shift, extraLimb: false)
        var u = shiftedLeft(a.limbs, by: shift, extraLimb: true)
        let vTop = v[n - 1], vNext = v[n - 2]
        for j in stride(from: u.count - n - 1, through: 0, by: -1) {
            // Estimate the quotient limb from the top two limbs, then correct it.
            var qHat: UInt64, rHat: UInt64, rHatOverflow = false
            if u[j + n] >= vTop {
                qHat = .max
                (rHat, rHatOverflow) = u[j + n - 1].addingReportingOverflow(vTop)
            } else {
                (qHat, rHat) = vTop.dividingFullWidth((u[j + n], u[j + n - 1]))
            }
            while !rHatOverflow {
                let (high, low) = qHat.multipliedFullWidth(by: vNext)
                guard high > rHat || (high == rHat && low > u[j + n - 2]) else { break }
                qHat -= 1
                (rHat, rHatOverflow) = rHat.addingReportingOverflow(vTop)
            }
            // u[j ..< j+n+1] -= qHat * v
            var carry: UInt64 = 0, borrow: UInt64 = 0
            for i in 0..<n {
                let (high, low) = qHat.multipliedFullWidth(by: v[i])
                let (product, o) = low.addingReportingOverflow(carry)
                carry = high &+ (o ? 1 : 0)
                let (d1, b1) = u[i + j].subtractingReportingOverflow(product)
                let (d2, b2) = d1.subtractingReportingOverflow(borrow)
                u[i + j] = d2
                borrow = (b1 ? 1 : 0) + (b2 ? 1 : 0)
            }
            let (d1, b1) = u[j + n].subtractingReportingOverflow(carry)
            let (d2, b2) = d1.subtractingReportingOverflow(borrow)
            u[j + n] = d2
            if b1 || b2 {
                // qHat was one too large (rare): add v back.
                var c: UInt64 = 0
                for i in 0..<n {
                    let (s1, o1) = u[i + j].addingReportingOverflow(v[i])
                    let (s2, o2) = s1.addingReportingOverflow(c)
                    u[i + j] = s2
                    c = (o1 || o2) ? 1 : 0
                }
                u[j + n] &+= c
            }
        }
        return BigUInt(limbs: shiftedRight(Array(u[0..<n]), by: shift))
    }

    /// `self ^ exponent mod modulus`. Montgomery multiplication for odd moduli
    /// (every RSA modulus and prime); plain square-and-multiply otherwise.
    func power(_ exponent: BigUInt, modulus: BigUInt) -> BigUInt {
        precondition(!modulus.isZero, "BigUInt power modulo zero")
        if modulus == BigUInt(1) { return BigUInt(limbs: []) }
        let base = self % modulus
        if modulus.isOdd { return Montgomery(modulus: modulus).power(base, exponent) }
        var result = BigUInt(1)
        for i in stride(from: exponent.bitWidth - 1, through: 0, by: -1) {
            result = result * result % modulus
            if exponent.limbs[i / 64] >> UInt64(i % 64) & 1 == 1 { result = result * base % modulus }
        }
        return result
    }

    private static func shiftedLeft(_ limbs: [UInt64], by shift: Int, extraLimb: Bool) -> [UInt64] {
        var out = limbs
        if extraLimb { out.append(0) }
        guard shift > 0 else { return out }
        for i in stride(from: out.count - 1, through: 0, by: -1) {
            out[i] = out[i] << UInt64(shift) | (i > 0 ? out[i - 1] >> UInt64(64 - shift) : 0)
        }
        return out
    }

    private static func shiftedRight(_ limbs: [UInt64], by shift: Int) -> [UInt64] {
        guard shift > 0 else { return limbs }
        var out = limbs
        for i in 0..<out.count {
            out[i] = out[i] >> UInt64(shift) | (i + 1 < out.count ? out[i + 1] << UInt64(64 - shift) : 0)
        }
        return out
    }
}
