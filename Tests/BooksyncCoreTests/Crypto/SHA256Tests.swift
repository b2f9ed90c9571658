import Testing
@testable import BooksyncCore

/// NIST FIPS 180-4 example vectors (and the classic million-'a' message).
@Suite struct SHA256Tests {
    static let vectors: [(String, String)] = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
        ("The quick brown fox jumps over the lazy dog",
         "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"),
    ]

    @Test(arguments: vectors)
    func vector(message: String, digest: String) {
        #expect(Hex.string(SHA256.hash(Array(message.utf8)), .lower) == digest)
    }

    @Test func millionA() {
        #expect(Hex.string(SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000)), .lower)
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test(arguments: [1, 55, 56, 63, 64, 65, 127, 128, 1000])
    func incrementalUpdatesMatchOneShot(split: Int) {
        let data = (0..<2000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var h = SHA256()
        var rest = data[...]
        while !rest.isEmpty {
            h.update(Array(rest.prefix(split)))
            rest = rest.dropFirst(split)
        }
        #expect(h.finalize() == SHA256.hash(data))
    }

    @Test func contentHashForm() {
        #expect(SHA256.contentHash(Array("abc".utf8)).text == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
