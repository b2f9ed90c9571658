import Testing
@testable import BooksyncCore

/// Reading `private_key`: the forms Google and openssl write, and every other
/// kind of PEM or broken DER ends in a CredentialsError that says what it is
/// and never repeats the key; nothing crashes, whatever the bytes.
@Suite struct PrivateKeyPEMTests {
    static func parse(_ pem: String) -> Result<RSAPrivateKey, CredentialsError> {
        do throws(CredentialsError) { return .success(try RSAPrivateKey(pem: pem)) } catch { return .failure(error) }
    }

    static func error(_ pem: String) -> CredentialsError? {
        if case .failure(let error) = parse(pem) { return error }
        return nil
    }

    /// The DER inside a PEM fixture.
    static func der(_ pem: String) -> [UInt8] {
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Base64.decode(body)!
    }

    static func pem(_ label: String, _ der: [UInt8]) -> String {
        "-----BEGIN \(label)-----\n\(Base64.encode(der))\n-----END \(label)-----\n"
    }

    @Test(arguments: [
        (KeyFixtures.rfc7515Public, CredentialsError.notAPrivateKey(label: "PUBLIC KEY")),
        (KeyFixtures.ecPKCS8, .notRSA("an EC key")),
        (KeyFixtures.ecSEC1, .notRSA("an EC key")),
        (KeyFixtures.ed25519, .notRSA("an Ed25519 key")),
        (KeyFixtures.rsaPSS, .notRSA("an RSA key restricted to RSA-PSS signatures")),
        (KeyFixtures.ecEncrypted, .encryptedKey),
        (KeyFixtures.rsa1024Encrypted, .encryptedKey),
        (KeyFixtures.openSSH, .unsupportedKeyFormat("an OpenSSH private key")),
        (KeyFixtures.rsa1024, .keyTooSmall(bits: 1024)),
        ("", .notPEM),
        ("not a key", .notPEM),
        (#"{"type": "service_account"}"#, .notPEM),
        ("-----BEGIN PRIVATE KEY-----\nMIIE\n", .malformedKey("its '-----END PRIVATE KEY-----' line is missing")),
        ("-----BEGIN PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n", .malformedKey("its END line does not match its BEGIN line")),
        ("-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n", .malformedKey("its PEM block is empty")),
        ("-----BEGIN PRIVATE KEY-----\nMII*E\n-----END PRIVATE KEY-----\n", .malformedKey("its PEM block is not valid base64")),
        ("-----BEGIN PRIVATE KEY-----\nMI IE\n-----END PRIVATE KEY-----\n", .malformedKey("its PEM block is not valid base64")),
        ("-----BEGIN X509 CRL-----\nMIIE\n-----END X509 CRL-----\n", .notAPrivateKey(label: "X509 CRL")),
        // A label with a control character is not treated as PEM (it would be shown in the message).
        ("-----BEGIN PRIVATE\u{1B}[2J KEY-----\nMIIE\n-----END PRIVATE\u{1B}[2J KEY-----\n", .notPEM),
    ])
    func refusedWithAClearError(pem: String, expected: CredentialsError) {
        #expect(Self.error(pem) == expected)
    }

    /// Line ends and surroundings that real files and pasted keys have.
    static func layout(_ name: String, _ pem: String) -> String {
        let lines = pem.split(separator: "\n")
        switch name {
        case "CRLF": return lines.joined(separator: "\r\n")
        case "escaped newlines": return lines.joined(separator: "\\n")
        case "text around the block": return "Bag Attributes\n  friendlyName: x\n" + pem + "\ntrailing words\n"
        case "indented lines": return lines.map { "  " + $0 + " " }.joined(separator: "\n")
        default: return Self.pem("PRIVATE KEY", Self.der(pem))  // one long base64 line
        }
    }

    @Test(arguments: ["CRLF", "escaped newlines", "text around the block", "indented lines", "one long base64 line"])
    func acceptedLayouts(name: String) throws {
        let key = try RSAPrivateKey(pem: Self.layout(name, KeyFixtures.rfc7515PKCS8))
        #expect(key.modulus == RSASignatureTests.number(RSASignatureTests.jwk.n))
    }

    /// Hand-made DER, one defect each, inside a `PRIVATE KEY` block.
    @Test(arguments: [
        ([0x31, 0x03, 0x02, 0x01, 0x00], "the PKCS#8 structure has the wrong type"),
        ([0x30, 0x05, 0x02, 0x01, 0x00], "the PKCS#8 structure runs past the end"),
        ([0x30, 0x80, 0x02, 0x01, 0x00, 0x00, 0x00], "the PKCS#8 structure has an indefinite length, which DER does not allow"),
        ([0x30, 0x81, 0x03, 0x02, 0x01, 0x00], "the length of the PKCS#8 structure is not in its shortest form"),
        ([0x30, 0x82, 0x00, 0x03, 0x02, 0x01, 0x00], "the length of the PKCS#8 structure is not in its shortest form"),
        ([0x30, 0x85, 0x01, 0x00, 0x00, 0x00, 0x00], "the PKCS#8 structure has a length of more than 4 bytes"),
        ([0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF], "the PKCS#8 structure runs past the end"),
        ([0x30, 0x83, 0x01], "the length of the PKCS#8 structure runs past the end"),
        ([0x30], "the PKCS#8 structure has no length"),
        ([0x30, 0x03, 0x02, 0x01, 0x00, 0x00], "the key has unexpected bytes after its last field"),
        ([0x30, 0x00], "it ends where the PKCS#8 version should be"),
        ([0x30, 0x02, 0x02, 0x00], "the PKCS#8 version is empty"),
        ([0x30, 0x03, 0x02, 0x01, 0x80], "the PKCS#8 version is negative"),
        ([0x30, 0x04, 0x02, 0x02, 0x00, 0x01], "the PKCS#8 version is not in its shortest form"),
        ([0x30, 0x03, 0x02, 0x01, 0x05], "it has PKCS#8 version 5, which does not exist"),
        ([0x30, 0x03, 0x02, 0x01, 0x00], "it ends where the algorithm identifier should be"),
        ([0x30, 0x07, 0x02, 0x01, 0x00, 0x30, 0x02, 0x06, 0x00], "the algorithm is not a valid object identifier"),
        ([0x30, 0x08, 0x02, 0x01, 0x00, 0x3F, 0x1F, 0x01, 0x00, 0x00], "the algorithm identifier has the wrong type"),
    ] as [([UInt8], String)])
    func malformedDER(der: [UInt8], reason: String) {
        #expect(Self.error(Self.pem("PRIVATE KEY", der)) == .malformedKey(reason))
    }

    @Test func structuralRefusals() {
        // PKCS#8 naming an unknown algorithm by its object identifier.
        let unknown: [UInt8] = [0x30, 0x0A, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2A, 0x03, 0x04]
        #expect(Self.error(Self.pem("PRIVATE KEY", unknown)) == .notRSA("a key for the algorithm 1.2.3.4"))
        // EncryptedPrivateKeyInfo under the plain label.
        let encrypted: [UInt8] = [0x30, 0x04, 0x30, 0x00, 0x04, 0x00]
        #expect(Self.error(Self.pem("PRIVATE KEY", encrypted)) == .encryptedKey)
        // PKCS#1 version 1: more than two primes.
        #expect(Self.error(Self.pem("RSA PRIVATE KEY", [0x30, 0x03, 0x02, 0x01, 0x01])) == .unsupportedKeyFormat("a multi-prime RSA key"))
        // The RFC key with trailing bytes inside the RSA sequence.
        var der = Self.der(KeyFixtures.rfc7515PKCS1)
        der.append(contentsOf: [0x02, 0x01, 0x00])
        der[2...3] = [UInt8((der.count - 4) >> 8), UInt8((der.count - 4) & 0xFF)]
        #expect(Self.error(Self.pem("RSA PRIVATE KEY", der)) == .malformedKey("the RSA key has unexpected bytes after its last field"))
    }

    /// Numbers that parse but do not make a key.
    @Test func inconsistentNumbersAreRefused() throws {
        let j = RSASignatureTests.jwk
        let n = RSASignatureTests.number
        func key(_ change: (inout [BigUInt]) -> Void) -> CredentialsError? {
            var f = [j.n, j.e, j.d, j.p, j.q, j.dp, j.dq, j.qi].map(n)
            change(&f)
            do throws(CredentialsError) {
                _ = try RSAPrivateKey(modulus: f[0], publicExponent: f[1], privateExponent: f[2], prime1: f[3], prime2: f[4],
                                      exponent1: f[5], exponent2: f[6], coefficient: f[7])
                return nil
            } catch { return error }
        }
        #expect(key { _ in } == nil)
        #expect(key { $0[0] = $0[0] + BigUInt(2) } == .inconsistentKey("its primes do not multiply to its modulus"))
        #expect(key { $0[1] = BigUInt(65536) } == .inconsistentKey("its public exponent is not an odd number between 3 and 2^64"))
        #expect(key { $0[1] = BigUInt(1) } == .inconsistentKey("its public exponent is not an odd number between 3 and 2^64"))
        #expect(key { $0[7] = $0[7] + BigUInt(1) } == .inconsistentKey("its private exponents do not fit its primes"))
        #expect(key { $0[5] = $0[3] } == .inconsistentKey("its private exponents do not fit its primes"))
        #expect(key { $0[5] = $0[5] + BigUInt(2) } == .inconsistentKey("its private exponents do not fit its primes"))
        #expect(key { $0[6] = $0[6] - BigUInt(2) } == .inconsistentKey("its private exponents do not fit its primes"))
        #expect(key { $0[2] = $0[2] + BigUInt(2) } == .inconsistentKey("its private exponents do not fit its primes"))
        #expect(key { $0[0] = BigUInt(bigEndian: [UInt8](repeating: 0xFF, count: 2049)) } == .keyTooLarge(bits: 16392))
    }

    /// Cut a real key's DER at every length: each prefix is refused as
    /// damaged (never a crash, never a key), in both PKCS#8 and PKCS#1.
    @Test(arguments: ["PKCS8", "PKCS1"])
    func everyTruncationIsRefused(form: String) {
        let der = Self.der(form == "PKCS8" ? KeyFixtures.rfc7515PKCS8 : KeyFixtures.rfc7515PKCS1)
        for length in 0..<der.count {
            let prefix = Array(der.prefix(length))
            do throws(CredentialsError) {
                _ = try form == "PKCS8" ? RSAPrivateKey.fromPKCS8(prefix) : RSAPrivateKey.fromPKCS1(prefix)
                Issue.record("a key cut to \(length) bytes was accepted")
            } catch {
                guard case .malformedKey = error else {
                    Issue.record("cut to \(length): \(error)")
                    continue
                }
            }
        }
    }

    /// Change every byte of a real key in turn: nothing crashes, no changed
    /// key loads (the checks of `RSAPrivateKey.init` catch a change in any of
    /// its numbers), and no error message carries a piece of the key.
    @Test func everyByteChangedIsRefused() {
        let original = Self.der(KeyFixtures.rfc7515PKCS8)
        let secretPieces = Set(Self.pieces(of: Base64.encode(original)) + Self.pieces(of: Hex.string(original, .lower)))
        for i in original.indices {
            var der = original
            der[i] ^= 0x41
            do throws(CredentialsError) {
                _ = try RSAPrivateKey.fromPKCS8(der)
                Issue.record("the key with byte \(i) changed was accepted")
            } catch {
                #expect(!Self.pieces(of: error.message).contains(where: secretPieces.contains), "\(error.message)")
            }
        }
    }

    static func pieces(of text: String) -> [Substring] {
        let chars = Array(text)
        guard chars.count >= 12 else { return [] }
        return (0...(chars.count - 12)).map { Substring(String(chars[$0..<($0 + 12)])) }
    }
}
