import Testing
@testable import BooksyncCore

/// RS256 against the worked example of RFC 7515 Appendix A.2: its key (given
/// there as a JWK), its exact JWS Protected Header and Payload bytes, and its
/// exact signature. PKCS#1 v1.5 is deterministic, so a correct signer must
/// reproduce the RFC's token character for character; this also checks
/// base64url and the JWS signing input.
@Suite struct RSASignatureTests {
    /// RFC 7515 A.2.1, the JWK members (base64url big-endian integers).
    static let jwk = (
        n: "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ",
        e: "AQAB",
        d: "Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97IjlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0BkTGoVEn2bKVRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYTCBr6XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLhBOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ",
        p: "4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPGBY5t7yLc1QlQ5xHdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc",
        q: "uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA-njbglfIsRLtXlnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc",
        dp: "BwKfV3Akq5_MFZDFZCnW-wzl-CCo83WoZvnLQwCTeDv8uzluRSnm71I3QCLdhrqE2e9YkxvuxdBfpT_PI7Yz-FOKnu1R6HsJeDCjn12Sk3vmAktV2zb34MCdy7cpdTh_YVr7tss2u6vneTwrA86rZtu5Mbr1C1XsmvkxHQAdYo0",
        dq: "h_96-mK1R_7glhsum81dZxjTnYynPbZpHziZjeeHcXYsXaaMwkOlODsWa7I9xXDoRwbKgB719rrmI2oKr6N3Do9U0ajaHF-NKJnwgjMd2w9cjz3_-kyNlxAr2v4IKhGNpmM5iIgOS1VZnOZ68m6_pbLBSp3nssTdlqvd0tIiTHU",
        qi: "IYd7DHOhrWvxkwPQsRM2tOgrjbcrfvtQJipd-DlcxyVuuM9sQLdgjVk2oy26F0EmpScGLq2MowX7fhd_QJQ3ydy5cY7YIBi87w93IKLEdfnbJtoOPLUW0ITrJReOgo1cq9SbsxYawBgfp_gh6A5603k2-ZQwVK0JKSHuLFkuQ3U"
    )

    /// RFC 7515 A.2.1: the header and the payload, byte for byte (the payload has CR LF line breaks).
    static let header = Array(#"{"alg":"RS256"}"#.utf8)
    static let payload = Array("{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}".utf8)
    /// RFC 7515 A.2.1, the complete JWS Compact Serialization.
    static let token =
        "eyJhbGciOiJSUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"

    static func number(_ base64url: String) -> BigUInt { BigUInt(bigEndian: Base64.decode(base64url)!) }

    static func rfcKey() throws -> RSAPrivateKey {
        try RSAPrivateKey(modulus: number(jwk.n), publicExponent: number(jwk.e), privateExponent: number(jwk.d),
                          prime1: number(jwk.p), prime2: number(jwk.q), exponent1: number(jwk.dp),
                          exponent2: number(jwk.dq), coefficient: number(jwk.qi))
    }

    @Test func rfc7515ExampleFromTheJWKNumbers() throws {
        #expect(try ServiceAccountJWT.compactJWS(header: Self.header, payload: Self.payload, key: Self.rfcKey()) == Self.token)
    }

    @Test(arguments: ["PKCS8", "PKCS1"])
    func rfc7515ExampleFromPEM(form: String) throws {
        let key = try RSAPrivateKey(pem: form == "PKCS8" ? KeyFixtures.rfc7515PKCS8 : KeyFixtures.rfc7515PKCS1)
        #expect(key.bitCount == 2048)
        #expect(try ServiceAccountJWT.compactJWS(header: Self.header, payload: Self.payload, key: key) == Self.token)
    }

    /// The signature the RFC's token ends with, recomputed from the signing
    /// input alone: RSASP1 by CRT and the EMSA encoding, without the JWS layer.
    @Test func rawSignatureMatchesTheRFC() throws {
        let parts = Self.token.split(separator: ".")
        let signature = try Self.rfcKey().signSHA256(Array("\(parts[0]).\(parts[1])".utf8))
        #expect(Base64URL.encode(signature) == String(parts[2]))
        #expect(signature.count == 256)
    }

    /// The fault check: a signature that does not verify with the public
    /// exponent (as a computing fault in the CRT step would give) is never
    /// returned, since it would reveal a prime of the key.
    @Test func aSignatureThatDoesNotVerifyIsNeverReturned() throws {
        let key = try Self.rfcKey()
        let m = BigUInt(bigEndian: RSAPrivateKey.encodePKCS1v15SHA256(digest: SHA256.hash([1, 2, 3]), length: 256))
        let good = key.signature(m)
        #expect(try key.checked(good, of: m).count == 256)
        // A fault in the half modulo p: right modulo q, wrong modulo p.
        let faulty = good + key.prime2 < key.modulus ? good + key.prime2 : good - key.prime2
        for wrong in [good + BigUInt(1), faulty, key.modulus + good, BigUInt(limbs: [])] {
            #expect(throws: CredentialsError.signatureCheckFailed) { try key.checked(wrong, of: m) }
        }
    }

    @Test func emsaEncodingLayout() {
        let encoded = RSAPrivateKey.encodePKCS1v15SHA256(digest: SHA256.hash([]), length: 256)
        #expect(encoded.count == 256)
        #expect(encoded.prefix(2) == [0x00, 0x01])
        #expect(encoded[2..<(256 - 52)].allSatisfy { $0 == 0xFF })
        #expect(encoded[256 - 52] == 0x00)
        #expect(Array(encoded.suffix(51)) == RSAPrivateKey.sha256DigestInfoPrefix + SHA256.hash([]))
    }

    /// Printing a key by accident shows its size, never its numbers.
    @Test func keyDescriptionsHideTheNumbers() throws {
        let key = try Self.rfcKey()
        for text in [String(describing: key), String(reflecting: key), "\(key)", "\(Mirror(reflecting: key).children.map { "\($0)" })"] {
            #expect(!text.contains("BigUInt") && !text.contains("limbs") && !text.contains(Self.number(Self.jwk.p).description.prefix(12)), "\(text)")
        }
    }
}

/// The service-account JWT (RFC 7523 §2.1 as Google uses it): exact bytes of
/// header and claims, and a signature that verifies with the public key.
@Suite struct ServiceAccountJWTTests {
    static func decode(_ part: Substring) -> String {
        String(decoding: Base64.decode(String(part))!, as: UTF8.self)
    }

    @Test func headerClaimsAndSignature() throws {
        let jwt = try ServiceAccountJWT.sign(
            clientEmail: "booksync@demo.iam.gserviceaccount.com", privateKeyPEM: KeyFixtures.rfc7515PKCS8,
            privateKeyID: "0123abcd", scope: "https://www.googleapis.com/auth/datastore",
            tokenURI: "https://oauth2.googleapis.com/token", issuedAt: 1_700_000_000)
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(!jwt.contains("=") && !jwt.contains("+") && !jwt.contains("/"))
        #expect(Self.decode(parts[0]) == #"{"alg":"RS256","kid":"0123abcd","typ":"JWT"}"#)
        #expect(Self.decode(parts[1]) == #"{"aud":"https://oauth2.googleapis.com/token","exp":1700003600,"iat":1700000000,"iss":"booksync@demo.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/datastore"}"#)
        // RSAVP1 with the public key gives back the EMSA encoding of the signing input.
        let key = try RSASignatureTests.rfcKey()
        let s = BigUInt(bigEndian: Base64.decode(String(parts[2]))!)
        let expected = RSAPrivateKey.encodePKCS1v15SHA256(digest: SHA256.hash(Array("\(parts[0]).\(parts[1])".utf8)), length: 256)
        #expect(s.power(key.publicExponent, modulus: key.modulus) == BigUInt(bigEndian: expected))
    }

    @Test(arguments: [nil, ""] as [String?])
    func noKeyIDMeansNoKid(keyID: String?) throws {
        let jwt = try ServiceAccountJWT.sign(clientEmail: "a@b", privateKeyPEM: KeyFixtures.rfc7515PKCS1, privateKeyID: keyID,
                                             scope: "s", tokenURI: "https://t", issuedAt: 0)
        #expect(Self.decode(jwt.split(separator: ".")[0]) == #"{"alg":"RS256","typ":"JWT"}"#)
        #expect(Self.decode(jwt.split(separator: ".")[1]) == #"{"aud":"https://t","exp":3600,"iat":0,"iss":"a@b","scope":"s"}"#)
    }

    /// Values from the credentials file are JSON-escaped, so a quote in one
    /// cannot add a claim.
    @Test func claimValuesAreEscaped() throws {
        let jwt = try ServiceAccountJWT.sign(clientEmail: #"x","aud":"evil"#, privateKeyPEM: KeyFixtures.rfc7515PKCS8,
                                             privateKeyID: "k\n", scope: "s", tokenURI: "https://t", issuedAt: 5)
        let parts = jwt.split(separator: ".")
        #expect(Self.decode(parts[0]) == #"{"alg":"RS256","kid":"k\n","typ":"JWT"}"#)
        #expect(Self.decode(parts[1]) == #"{"aud":"https://t","exp":3605,"iat":5,"iss":"x\",\"aud\":\"evil","scope":"s"}"#)
    }

    @Test func sameInputsSameToken() throws {
        let make = { () throws -> String in
            try ServiceAccountJWT.sign(clientEmail: "a@b", privateKeyPEM: KeyFixtures.rfc7515PKCS8, privateKeyID: "k",
                                       scope: "s", tokenURI: "https://t", issuedAt: 42)
        }
        #expect(try make() == make())
    }

    /// RFC 4648 §10 test vectors, unpadded and with the URL alphabet.
    @Test(arguments: [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
                      ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")])
    func base64url(text: String, encoded: String) {
        #expect(Base64URL.encode(Array(text.utf8)) == encoded)
    }

    @Test func base64urlAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.encode([0xFF]) == "_w")
    }
}
