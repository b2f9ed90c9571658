/// A content hash (`sha256:<64 lowercase hex>`) as its 32 raw bytes: what a
/// manifest entry or stat-cache entry holds per record instead of a
/// 71-character string.
package struct ContentDigest: Sendable, Hashable {
    private var a: UInt64 = 0, b: UInt64 = 0, c: UInt64 = 0, d: UInt64 = 0

    /// All zero bytes (no content has that hash in practice; a placeholder).
    package init() {}

    /// The digest of `sha256:` followed by exactly 64 lowercase hex digits;
    /// nil for any other text, which callers keep as text.
    package init?(contentHash hash: ContentHash) {
        var text = hash.text
        guard let parsed = text.withUTF8({ Self(contentHashBytes: $0) }) else { return nil }
        self = parsed
    }

    /// `init(contentHash:)` from the text's UTF-8 bytes.
    package init?(contentHashBytes t: UnsafeBufferPointer<UInt8>) {
        guard t.count == 71, t[0] == 0x73, t[1] == 0x68, t[2] == 0x61, t[3] == 0x32, t[4] == 0x35, t[5] == 0x36, t[6] == 0x3A
        else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for w in 0..<4 {
            var word: UInt64 = 0
            for k in 0..<16 {
                guard let v = Hex.value(t[7 + w * 16 + k], only: .lower) else { return nil }
                word = word << 4 | UInt64(v)
            }
            switch w {
            case 0: words.0 = word
            case 1: words.1 = word
            case 2: words.2 = word
            default: words.3 = word
            }
        }
        (a, b, c, d) = words
    }

    /// The digest whose 32 bytes are these four words, big-endian.
    init(words a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64) {
        (self.a, self.b, self.c, self.d) = (a, b, c, d)
    }

    /// The digest of the raw 32 bytes of a SHA-256.
    package init(raw: [UInt8]) {
        precondition(raw.count == 32)
        func word(_ i: Int) -> UInt64 { (0..<8).reduce(0) { $0 << 8 | UInt64(raw[i * 8 + $1]) } }
        (a, b, c, d) = (word(0), word(1), word(2), word(3))
    }

    /// The first eight bytes, big-endian: a key that sorts and finds digests
    /// without holding all 32 bytes (equal digests have equal keys).
    package var leadingWord: UInt64 { a }

    /// `sha256:<hex>`, exactly the text it was parsed from.
    package var contentHash: ContentHash {
        ContentHash(text: String(unsafeUninitializedCapacity: 71) { buffer in
            var i = 0
            for c in "sha256:".utf8 {
                buffer[i] = c
                i += 1
            }
            for word in [a, b, c, d] {
                var shift: UInt64 = 64
                while shift > 0 {
                    shift -= 4
                    let nibble = UInt8(truncatingIfNeeded: word >> shift) & 0xF
                    buffer[i] = nibble < 10 ? 0x30 + nibble : 0x57 + nibble
                    i += 1
                }
            }
            return i
        })
    }
}

/// A Firestore revision (`2024-01-01T00:00:00.123456Z`) packed four bits a
/// character into 16 bytes: up to 32 characters from `0-9 - : T . Z`; nil
/// for any other text, which callers keep as text. Packing is exact: the
/// revision is sent back to the server as a precondition, never reformatted.
package struct PackedRevision: Sendable, Hashable {
    private var high: UInt64 = 0, low: UInt64 = 0
    private static let alphabet: [UInt8] = Array("0123456789-:T.Z".utf8)

    /// The empty revision.
    package init() {}

    /// The packed form of `text`, or nil when it has none.
    package init?(_ text: String) {
        var text = text
        guard let packed = text.withUTF8({ Self(bytes: $0) }) else { return nil }
        self = packed
    }

    /// `init(_:)` from UTF-8 bytes.
    package init?(bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count <= 32 else { return nil }
        for (i, c) in bytes.enumerated() {
            guard let k = Self.alphabet.firstIndex(of: c) else { return nil }
            let nibble = UInt64(k + 1)  // 0 marks the end
            if i < 16 { high |= nibble << UInt64(60 - 4 * i) } else { low |= nibble << UInt64(60 - 4 * (i - 16)) }
        }
    }

    /// The revision text.
    package var text: String {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for i in 0..<32 {
            let nibble = Int((i < 16 ? high >> UInt64(60 - 4 * i) : low >> UInt64(60 - 4 * (i - 16))) & 0xF)
            if nibble == 0 { break }
            out.append(Self.alphabet[nibble - 1])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
