/// An RSA private key that signs with RSASSA-PKCS1-v1_5 and SHA-256
/// (RFC 8017 §8.2.1), the `RS256` of a service-account JWT (`JWT.swift`).
///
/// Why it is written here: booksync may not depend on packages, Foundation
/// has no RSA on Linux, and CryptoKit and Security exist only on Apple
/// platforms; yet a `service_account` credentials file, the form most people
/// have, gives an access token only for a JWT signed with its key.
///
/// It only signs: there is no decryption and no padding oracle to attack, and
/// PKCS#1 v1.5 signatures are deterministic, so a signature can be compared
/// byte for byte with `openssl dgst -sha256 -sign`. Every signature is
/// checked with the public exponent before it is returned (as OpenSSL does),
/// because a computing fault in the CRT step would otherwise hand out a value
/// from which the key's primes can be recovered.
///
/// Not constant-time, honestly: the arithmetic's running time depends on the
/// key (skipped zero windows, a conditional subtraction, no blinding). That
/// matters for a server that signs for strangers who can time it many times;
/// booksync signs one token request every hour or so, with the user's own
/// key, on the user's own machine, and anyone who can measure its timing
/// that closely there can already read the key file.
package struct RSAPrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let modulus: BigUInt
    let publicExponent: BigUInt
    let privateExponent: BigUInt
    let prime1: BigUInt
    let prime2: BigUInt
    /// `d mod (p-1)`, `d mod (q-1)` and `q⁻¹ mod p`: the Chinese-remainder form
    /// of the key, which makes a signature about four times faster.
    let exponent1: BigUInt
    let exponent2: BigUInt
    let coefficient: BigUInt

    /// The key's size in bits (that of its modulus).
    package var bitCount: Int { modulus.bitWidth }

    /// The length of a signature in bytes.
    var byteCount: Int { (bitCount + 7) / 8 }

    /// Checks that the numbers make a usable key of an accepted size, by the
    /// identities that cost a multiplication each: `n = p·q`, `q·qInv ≡ 1
    /// (mod p)`, and `e·x ≡ 1` modulo `p-1` for `x = d, dP` and modulo `q-1`
    /// for `x = d, dQ` (since `e·d ≡ 1` modulo lcm(p-1, q-1)). A damaged key
    /// file is refused here rather than by a failed signature check.
    init(modulus n: BigUInt, publicExponent e: BigUInt, privateExponent d: BigUInt, prime1 p: BigUInt, prime2 q: BigUInt,
         exponent1 dP: BigUInt, exponent2 dQ: BigUInt, coefficient qInv: BigUInt) throws(CredentialsError) {
        guard n.bitWidth >= CredentialsError.minimumKeyBits else { throw .keyTooSmall(bits: n.bitWidth) }
        guard n.bitWidth <= CredentialsError.maximumKeyBits else { throw .keyTooLarge(bits: n.bitWidth) }
        guard e.isOdd, e > BigUInt(1), e.bitWidth <= 64 else {
            throw .inconsistentKey("its public exponent is not an odd number between 3 and 2^64")
        }
        guard p.isOdd, q.isOdd, p > BigUInt(1), q > BigUInt(1), p.bitWidth < n.bitWidth, q.bitWidth < n.bitWidth, p * q == n else {
            throw .inconsistentKey("its primes do not multiply to its modulus")
        }
        let one = BigUInt(1), p1 = p - one, q1 = q - one
        guard d < n, dP < p, dQ < q, qInv < p, qInv * q % p == one,
              e * dP % p1 == one, e * dQ % q1 == one, e * d % p1 == one, e * d % q1 == one else {
            throw .inconsistentKey("its private exponents do not fit its primes")
        }
        modulus = n
        publicExponent = e
        privateExponent = d
        prime1 = p
        prime2 = q
        exponent1 = dP
        exponent2 = dQ
        coefficient = qInv
    }

    /// The RSASSA-PKCS1-v1_5 signature of `message` with SHA-256, as many
    /// bytes as the modulus.
    /// - Throws: `CredentialsError.signatureCheckFailed` if the signature does
    ///   not verify with the public exponent (a computing fault); it is never returned.
    package func signSHA256(_ message: [UInt8]) throws(CredentialsError) -> [UInt8] {
        let encoded = RSAPrivateKey.encodePKCS1v15SHA256(digest: SHA256.hash(message), length: byteCount)
        let m = BigUInt(bigEndian: encoded)
        return try checked(signature(m), of: m)
    }

    /// The signature `s` of the encoded message `m` as bytes, if it verifies
    /// with the public exponent: a fault in the CRT step gives a wrong `s`
    /// from which `gcd(s^e - m, n)` reveals a prime, so it is never returned.
    func checked(_ s: BigUInt, of m: BigUInt) throws(CredentialsError) -> [UInt8] {
        guard s < modulus, s.power(publicExponent, modulus: modulus) == m, let bytes = s.bigEndianBytes(count: byteCount) else {
            throw .signatureCheckFailed
        }
        return bytes
    }

    /// RSASP1 by the Chinese remainder theorem (RFC 8017 §5.2.1, 2.b):
    /// two exponentiations modulo the half-size primes instead of one modulo `n`.
    func signature(_ m: BigUInt) -> BigUInt {
        let m1 = (m % prime1).power(exponent1, modulus: prime1)
        let m2 = (m % prime2).power(exponent2, modulus: prime2)
        let m2p = m2 % prime1
        let difference = m1 < m2p ? m1 + prime1 - m2p : m1 - m2p
        let h = coefficient * difference % prime1
        return m2 + h * prime2
    }

    /// `DigestInfo ::= SEQUENCE { SEQUENCE { id-sha256, NULL }, OCTET STRING (32 bytes) }`,
    /// without the digest (RFC 8017 §9.2, note 1).
    static let sha256DigestInfoPrefix: [UInt8] = [
        0x30, 0x31, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20,
    ]

    /// EMSA-PKCS1-v1_5 (RFC 8017 §9.2): `00 01 FF…FF 00 DigestInfo`, `length` bytes.
    static func encodePKCS1v15SHA256(digest: [UInt8], length: Int) -> [UInt8] {
        let t = sha256DigestInfoPrefix + digest
        precondition(length >= t.count + 11, "RSA key too small for a SHA-256 signature")
        return [0x00, 0x01] + [UInt8](repeating: 0xFF, count: length - t.count - 3) + [0x00] + t
    }

    // Never show the numbers: a key printed by accident would be a key leaked.
    package var description: String { "RSAPrivateKey(\(bitCount) bits)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["bitCount": bitCount]) }
}
