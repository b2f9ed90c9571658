import Foundation
import Testing
import BooksyncTestSupport
import BooksyncCore

/// booksync's SHA-256 against Python's `hashlib` (OpenSSL underneath), an
/// implementation that shares no code with it: every message length from 0 to
/// 300 bytes (each padding boundary: 55/56, 63/64, 119/120 …) and a few long
/// ones (a million bytes: `SHA256Tests.millionA`), hashed one-shot, as a
/// content hash, and fed in uneven pieces.
@Suite(.hangGuard) struct SHA256PythonTests {
    /// Message `n`: `n` bytes that differ from every other message's.
    static func message(_ n: Int) -> [UInt8] {
        (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ n &* 7) }
    }

    static let lengths = Array(0...300) + [1_000, 4_095, 4_096, 65_537]

    @Test func everyLengthMatchesHashlib() throws {
        let script = """
        import hashlib, sys
        for n in map(int, sys.argv[1:]):
            print(hashlib.sha256(bytes((i * 131 + n * 7) & 0xFF for i in range(n))).hexdigest())
        """
        let python = try runProgram("/usr/bin/env", ["python3", "-c", script] + Self.lengths.map(String.init),
                                    in: FileManager.default.temporaryDirectory.path)
        #expect(python.status == 0, "\(python.stderr)")
        let expected = python.stdout.split(separator: "\n").map(String.init)
        try #require(expected.count == Self.lengths.count)
        for (n, digest) in zip(Self.lengths, expected) {
            let bytes = Self.message(n)
            #expect(Hex.string(SHA256.hash(bytes), .lower) == digest, "length \(n)")
            #expect(SHA256.contentHash(bytes).text == "sha256:" + digest, "length \(n)")
            #expect(bytes.withUnsafeBytes { SHA256.contentDigest($0) }.contentHash.text == "sha256:" + digest, "length \(n)")
            var pieces = SHA256()
            var offset = 0, step = 1
            while offset < n {
                pieces.update(Array(bytes[offset..<min(n, offset + step)]))
                offset += step
                step = step % 97 + 13
            }
            #expect(Hex.string(pieces.finalize(), .lower) == digest, "length \(n) in pieces")
        }
    }
}
