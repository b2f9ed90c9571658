import Foundation
import Testing
import BooksyncTestSupport
import BooksyncCore

/// booksync's RS256 against OpenSSL, the implementation everyone trusts: for
/// keys openssl generates (2048, 3072 and 4096 bits, PKCS#8 and the
/// traditional PKCS#1 form, and an unusual public exponent), every signature
/// booksync makes verifies with `openssl dgst -sha256 -verify`, and is the
/// same bytes as `openssl dgst -sha256 -sign` (PKCS#1 v1.5 is deterministic).
/// Bounded: five keys, four messages each.
@Suite(.hangGuard) struct RSAOpenSSLTests {
    static let openssl: String? = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    typealias Output = ProgramOutput

    static func openssl(_ arguments: [String], in directory: String) throws -> Output {
        try runProgram(openssl!, arguments, in: directory)
    }

    static func write(_ bytes: [UInt8], _ path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func read(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Key kinds: bits, and how openssl makes the key (the first command that
    /// works: LibreSSL, macOS's openssl, writes PKCS#1 with `genrsa` and has no `-traditional`).
    static let keys: [(name: String, bits: Int, commands: [[String]])] = [
        ("2048", 2048, [["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "key.pem"]]),
        ("3072", 3072, [["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:3072", "-out", "key.pem"]]),
        ("4096", 4096, [["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:4096", "-out", "key.pem"]]),
        ("2048 PKCS#1", 2048, [["genrsa", "-traditional", "-out", "key.pem", "2048"], ["genrsa", "-out", "key.pem", "2048"]]),
        ("2048 e=3", 2048, [["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-pkeyopt", "rsa_keygen_pubexp:3", "-out", "key.pem"]]),
    ]

    /// openssl is the independent implementation: without it this check fails, it does not skip.
    @Test(arguments: keys.map(\.name))
    func signaturesVerifyWithOpenSSLAndMatchItsOwn(kind: String) throws {
        try #require(Self.openssl != nil, "openssl is not installed: it is the independent check of the signer")
        let spec = Self.keys.first { $0.name == kind }!
        let scratch = try ScratchDirectory()
        let dir = scratch.path
        var generated: Output?
        for command in spec.commands where generated?.status != 0 {
            generated = try Self.openssl(command, in: dir)
        }
        try #require(generated?.status == 0, "openssl could not make the key: \(generated?.stderr ?? "")")
        #expect(try Self.openssl(["pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem"], in: dir).status == 0)
        let pem = try scratch.read("key.pem")
        #expect(pem.hasPrefix(kind.contains("PKCS#1") ? "-----BEGIN RSA PRIVATE KEY-----" : "-----BEGIN PRIVATE KEY-----"))

        let key = try RSAPrivateKey(pem: pem)
        #expect(key.bitCount == spec.bits)

        let jwt = try ServiceAccountJWT.sign(clientEmail: "booksync@demo.iam.gserviceaccount.com", key: key, privateKeyID: "kid-1",
                                             scope: "https://www.googleapis.com/auth/datastore",
                                             tokenURI: "https://oauth2.googleapis.com/token", issuedAt: 1_767_225_600)
        let jwtParts = jwt.split(separator: ".")
        var generator = SystemRandomNumberGenerator()
        let messages: [(name: String, bytes: [UInt8])] = [
            ("empty", []),
            ("text", Array("booksync signs this".utf8)),
            ("random bytes", (0..<1000).map { _ in UInt8.random(in: 0...255, using: &generator) }),
        ]
        for (name, message) in messages {
            try Self.checkAgainstOpenSSL(message: message, signature: key.signSHA256(message), name: name, in: dir)
        }
        // The JWT's signature part over its signing input, as a token endpoint checks it.
        let jwtSignature = try #require(Base64.decode(String(jwtParts[2])))
        try Self.checkAgainstOpenSSL(message: Array("\(jwtParts[0]).\(jwtParts[1])".utf8), signature: jwtSignature,
                                     name: "JWT", in: dir)
    }

    /// openssl verifies `signature` over `message` with the public key, makes
    /// the same bytes itself, and refuses the signature with one bit changed.
    static func checkAgainstOpenSSL(message: [UInt8], signature: [UInt8], name: String, in dir: String) throws {
        try write(message, dir + "/message")
        try write(signature, dir + "/signature")
        let verified = try openssl(["dgst", "-sha256", "-verify", "pub.pem", "-signature", "signature", "message"], in: dir)
        #expect(verified.status == 0 && verified.stdout.contains("Verified OK"), "\(name): \(verified.stdout) \(verified.stderr)")

        let signed = try openssl(["dgst", "-sha256", "-sign", "key.pem", "-out", "openssl-signature", "message"], in: dir)
        try #require(signed.status == 0, "\(name): \(signed.stderr)")
        #expect(try read(dir + "/openssl-signature") == signature, "\(name): openssl made other bytes")

        var tampered = signature
        tampered[tampered.count / 2] ^= 0x10
        try write(tampered, dir + "/signature")
        let refused = try openssl(["dgst", "-sha256", "-verify", "pub.pem", "-signature", "signature", "message"], in: dir)
        #expect(refused.status != 0, "\(name): openssl accepted a changed signature, so the check above proves nothing")
    }
}
