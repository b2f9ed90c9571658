/// SHA-256 (FIPS 180-4) in pure Swift, so the core needs neither CryptoKit
/// (absent on Linux) nor a C library.
///
/// Hashing is on the hot path of `status` after a checkout or `touch` (every
/// touched file is hashed to prove it unchanged), so the compression function
/// is unrolled eight rounds at a time with the working variables rotated by
/// argument position instead of moved, and one-shot hashes of a whole buffer
/// (`hash`, `contentHash`) never copy the input or allocate a block buffer.
package struct SHA256: Sendable {
    private var state: State = SHA256.initialState
    private var buffer = [UInt8]()
    private var totalBytes: UInt64 = 0

    private typealias State = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
    private static let initialState: State =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)

    /// A fresh hash; feed it with `update`, then call `finalize` once.
    package init() {}

    /// The digest of `bytes` in one call.
    package static func hash(_ bytes: [UInt8]) -> [UInt8] {
        let state = bytes.withUnsafeBytes { oneShot($0) }
        return digestBytes(state)
    }

    /// `sha256:<hex>`, the form manifests and messages use.
    package static func contentHash(_ bytes: [UInt8]) -> ContentHash {
        ContentDigest(raw: hash(bytes)).contentHash
    }

    /// The digest of `bytes` as a `ContentDigest`, allocating nothing: for
    /// comparing a file with a known content hash once per touched file,
    /// where building the `sha256:<hex>` text would cost more than the compare.
    package static func contentDigest(_ bytes: UnsafeRawBufferPointer) -> ContentDigest {
        let s = oneShot(bytes)
        func word(_ high: UInt32, _ low: UInt32) -> UInt64 { UInt64(high) << 32 | UInt64(low) }
        return ContentDigest(words: word(s.0, s.1), word(s.2, s.3), word(s.4, s.5), word(s.6, s.7))
    }

    /// Adds `bytes` to the message; any split of the input gives the same digest.
    package mutating func update(_ bytes: [UInt8]) {
        totalBytes &+= UInt64(bytes.count)
        var input = bytes[...]
        if !buffer.isEmpty {
            let need = 64 - buffer.count
            buffer.append(contentsOf: input.prefix(need))
            input = input.dropFirst(need)
            if buffer.count < 64 { return }
            let block = buffer
            buffer.removeAll(keepingCapacity: true)
            block.withUnsafeBytes { Self.compress(&state, $0.baseAddress!, blocks: 1) }
        }
        let whole = input.count / 64
        if whole > 0 {
            input.withUnsafeBytes { Self.compress(&state, $0.baseAddress!, blocks: whole) }
        }
        buffer.append(contentsOf: input.dropFirst(whole * 64))
    }

    /// The 32-byte digest of everything passed to `update`. Call it once: the
    /// value is not reset, so neither further updates nor a second call give
    /// a meaningful digest.
    package mutating func finalize() -> [UInt8] {
        let pending = buffer
        buffer.removeAll()
        pending.withUnsafeBytes { Self.finish(&state, tail: $0, totalBytes: totalBytes) }
        return Self.digestBytes(state)
    }

    /// The state after hashing all of `message`, without copying it.
    private static func oneShot(_ message: UnsafeRawBufferPointer) -> State {
        var state = initialState
        let whole = message.count / 64
        if whole > 0 { compress(&state, message.baseAddress!, blocks: whole) }
        finish(&state, tail: UnsafeRawBufferPointer(rebasing: message[(whole * 64)...]), totalBytes: UInt64(message.count))
        return state
    }

    /// Pads the last `tail` bytes (fewer than 64) and compresses the final one or two blocks.
    private static func finish(_ state: inout State, tail: UnsafeRawBufferPointer, totalBytes: UInt64) {
        withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { block in
            block.initializeMemory(as: UInt8.self, repeating: 0)
            if tail.count > 0 { block.baseAddress!.copyMemory(from: tail.baseAddress!, byteCount: tail.count) }
            block[tail.count] = 0x80
            let blocks = tail.count < 56 ? 1 : 2
            let bits = totalBytes &* 8
            block.storeBytes(of: bits.bigEndian, toByteOffset: blocks * 64 - 8, as: UInt64.self)
            compress(&state, UnsafeRawPointer(block.baseAddress!), blocks: blocks)
        }
    }

    private static func digestBytes(_ state: State) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(32)
        for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
            out.append(UInt8(truncatingIfNeeded: word >> 24))
            out.append(UInt8(truncatingIfNeeded: word >> 16))
            out.append(UInt8(truncatingIfNeeded: word >> 8))
            out.append(UInt8(truncatingIfNeeded: word))
        }
        return out
    }

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// Masking shifts (`&>>`, `&<<`): the smart shifts `>>` and `<<` are
    /// generic over the shift's type, and unoptimized (debug) code calls them
    /// unspecialized, which made a debug build hash several times slower.
    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }

    /// One round. The caller passes the eight working variables rotated by one
    /// position each round, so only `d` and `h` change and nothing is moved.
    @inline(__always)
    private static func round(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
                              _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ kw: UInt32) {
        let t1 = h &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ (g ^ (e & (f ^ g))) &+ kw
        d &+= t1
        h = t1 &+ (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) | (c & (a | b)))
    }

    /// Compresses `blocks` consecutive 64-byte blocks starting at `data` into `state`.
    private static func compress(_ state: inout State, _ data: UnsafeRawPointer, blocks: Int) {
        var (h0, h1, h2, h3, h4, h5, h6, h7) = state
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { buffer in
            let w = buffer.baseAddress!
            k.withUnsafeBufferPointer { kBuffer in
                let k = kBuffer.baseAddress!
                var block = data
                for _ in 0..<blocks {
                    var t = 0
                    while t < 16 {
                        w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t &* 4, as: UInt32.self))
                        t &+= 1
                    }
                    while t < 64 {
                        let x = w[t - 15], y = w[t - 2]
                        let s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x &>> 3)
                        let s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y &>> 10)
                        w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                        t &+= 1
                    }
                    var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
                    var i = 0
                    while i < 64 {
                        round(a, b, c, &d, e, f, g, &h, k[i] &+ w[i])
                        round(h, a, b, &c, d, e, f, &g, k[i + 1] &+ w[i + 1])
                        round(g, h, a, &b, c, d, e, &f, k[i + 2] &+ w[i + 2])
                        round(f, g, h, &a, b, c, d, &e, k[i + 3] &+ w[i + 3])
                        round(e, f, g, &h, a, b, c, &d, k[i + 4] &+ w[i + 4])
                        round(d, e, f, &g, h, a, b, &c, k[i + 5] &+ w[i + 5])
                        round(c, d, e, &f, g, h, a, &b, k[i + 6] &+ w[i + 6])
                        round(b, c, d, &e, f, g, h, &a, k[i + 7] &+ w[i + 7])
                        i += 8
                    }
                    h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
                    h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
                    block += 64
                }
            }
        }
        state = (h0, h1, h2, h3, h4, h5, h6, h7)
    }
}
