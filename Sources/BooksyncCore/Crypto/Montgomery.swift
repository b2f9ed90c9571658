/// Modular exponentiation modulo an odd number by Montgomery multiplication
/// (the CIOS form of Koç, Acar and Kaliski, "Analyzing and Comparing
/// Montgomery Multiplication Algorithms", 1996), the step that dominates an
/// RSA signature.
///
/// A product modulo `n` needs no division this way: numbers are kept as
/// `x·R mod n` with `R = 2^(64·s)`, and each product is reduced by adding a
/// multiple of `n` that clears the low limb, one limb at a time.
///
/// The inner loops use raw pointers, `while` loops and carries found by
/// comparison, which measured faster than arrays, `for` over a range and
/// `addingReportingOverflow`, most of all in a debug build, where nothing is
/// inlined, and the tests sign with real keys there (the Benchmarks article).
///
/// Not constant-time (it skips zero windows and ends with a conditional
/// subtraction): see `RSAPrivateKey` for why that is acceptable here.
struct Montgomery {
    /// The modulus, `s` limbs, odd.
    private let modulus: [UInt64]
    /// `-modulus⁻¹ mod 2^64`.
    private let inverse: UInt64
    /// `R² mod modulus`, which takes a number into Montgomery form.
    private let rSquared: [UInt64]

    private var size: Int { modulus.count }

    init(modulus: BigUInt) {
        precondition(modulus.isOdd && modulus > BigUInt(1), "Montgomery needs an odd modulus above 1")
        let n = modulus.limbs
        self.modulus = n
        // Newton's iteration for 1/n0 mod 2^64: each step doubles the correct
        // low bits, and n0 is its own inverse mod 8 (3 bits) to start with.
        var x = n[0]
        for _ in 0..<5 { x = x &* (2 &- n[0] &* x) }
        inverse = 0 &- x
        let r2 = BigUInt(limbs: [UInt64](repeating: 0, count: 2 * n.count) + [1]) % modulus
        rSquared = Montgomery.padded(r2.limbs, to: n.count)
    }

    /// `base ^ exponent mod modulus`, with `base` already reduced.
    func power(_ base: BigUInt, _ exponent: BigUInt) -> BigUInt {
        let s = size
        let one = Montgomery.padded([1], to: s)
        let windows = (exponent.bitWidth + 3) / 4
        guard windows > 0 else { return BigUInt(1) }
        // table[k] = base^k in Montgomery form, k = 0...15.
        var table = [UInt64](repeating: 0, count: 16 * s)
        var accumulator = [UInt64](repeating: 0, count: s)
        var scratch = [UInt64](repeating: 0, count: s + 2)
        let baseLimbs = Montgomery.padded(base.limbs, to: s)
        let exponentLimbs = exponent.limbs
        modulus.withUnsafeBufferPointer { n in
            rSquared.withUnsafeBufferPointer { r2 in
                table.withUnsafeMutableBufferPointer { table in
                    accumulator.withUnsafeMutableBufferPointer { acc in
                        scratch.withUnsafeMutableBufferPointer { t in
                            let n = n.baseAddress!, t = t.baseAddress!, acc = acc.baseAddress!, table = table.baseAddress!
                            one.withUnsafeBufferPointer { table.update(from: $0.baseAddress!, count: s) }
                            multiply(table, table, r2.baseAddress!, n, t)  // R mod n
                            baseLimbs.withUnsafeBufferPointer { multiply(table + s, $0.baseAddress!, r2.baseAddress!, n, t) }
                            for k in 2..<16 { multiply(table + k * s, table + (k - 1) * s, table + s, n, t) }
                            func window(_ w: Int) -> Int { Int(exponentLimbs[w / 16] >> UInt64(w % 16 * 4) & 0xF) }
                            acc.update(from: table + window(windows - 1) * s, count: s)
                            for w in stride(from: windows - 2, through: 0, by: -1) {
                                for _ in 0..<4 { multiply(acc, acc, acc, n, t) }
                                let k = window(w)
                                if k != 0 { multiply(acc, acc, table + k * s, n, t) }
                            }
                            one.withUnsafeBufferPointer { multiply(acc, acc, $0.baseAddress!, n, t) }  // out of Montgomery form
                        }
                    }
                }
            }
        }
        return BigUInt(limbs: accumulator)
    }

    /// `out = a·b·R⁻¹ mod n` for `a, b < n`; `out` may be `a` or `b`, since it
    /// is written only after both are read. `t` is scratch of `s + 2` limbs.
    private func multiply(_ out: UnsafeMutablePointer<UInt64>, _ a: UnsafePointer<UInt64>, _ b: UnsafePointer<UInt64>,
                          _ n: UnsafePointer<UInt64>, _ t: UnsafeMutablePointer<UInt64>) {
        let s = size
        t.update(repeating: 0, count: s + 2)
        var i = 0
        while i < s {
            // t += a·b[i]
            let bi = b[i]
            var carry: UInt64 = 0
            var j = 0
            while j < s {
                let product = a[j].multipliedFullWidth(by: bi)
                var low = product.low &+ t[j]
                var high = product.high &+ (low < product.low ? 1 : 0)
                low = low &+ carry
                high = high &+ (low < carry ? 1 : 0)
                t[j] = low
                carry = high
                j &+= 1
            }
            let top = t[s] &+ carry
            t[s + 1] = top < carry ? 1 : 0
            t[s] = top
            // t = (t + m·n) / 2^64, with m chosen so that the low limb becomes zero.
            let m = t[0] &* inverse
            let first = m.multipliedFullWidth(by: n[0])
            carry = first.high &+ (first.low &+ t[0] < first.low ? 1 : 0)
            j = 1
            while j < s {
                let product = m.multipliedFullWidth(by: n[j])
                var low = product.low &+ t[j]
                var high = product.high &+ (low < product.low ? 1 : 0)
                low = low &+ carry
                high = high &+ (low < carry ? 1 : 0)
                t[j - 1] = low
                carry = high
                j &+= 1
            }
            let last = t[s] &+ carry
            t[s - 1] = last
            t[s] = t[s + 1] &+ (last < carry ? 1 : 0)
            i &+= 1
        }
        // t < 2n: subtract n once if t >= n.
        var subtract = t[s] != 0
        if !subtract {
            subtract = true  // t == n also subtracts
            var j = s - 1
            while j >= 0 {
                if t[j] != n[j] {
                    subtract = t[j] > n[j]
                    break
                }
                j -= 1
            }
        }
        if subtract {
            var borrow: UInt64 = 0
            var j = 0
            while j < s {
                let x = t[j], y = n[j]
                let difference = x &- y &- borrow
                borrow = (x < y || (x == y && borrow == 1)) ? 1 : 0
                t[j] = difference
                j &+= 1
            }
        }
        out.update(from: t, count: s)
    }

    private static func padded(_ limbs: [UInt64], to count: Int) -> [UInt64] {
        limbs + [UInt64](repeating: 0, count: count - limbs.count)
    }
}
