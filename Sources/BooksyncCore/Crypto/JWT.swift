/// The signed JWT a `service_account` credentials file is exchanged for an
/// access token with (RFC 7523 §2.1, Google's "OAuth 2.0 for Server to
/// Server Applications"): POSTed to the file's `token_uri` as
/// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<jwt>`.
///
/// Header `{"alg":"RS256","kid":<private_key_id>,"typ":"JWT"}` and claims
/// `aud` (the token URI), `exp` (one hour after `iat`), `iat`, `iss` (the
/// client email) and `scope`, keys sorted, no spaces: the same inputs always
/// give the same bytes, so tests can compare whole tokens. The caller passes
/// the time, since the core has no clock.
package enum ServiceAccountJWT {
    /// Google accepts assertions valid for at most an hour.
    package static let lifetime: Int64 = 3600

    /// Parses `privateKeyPEM` and signs; see the other `sign` to parse a key once.
    /// - Throws: `CredentialsError` for a key `RSAPrivateKey(pem:)` refuses,
    ///   or a signature that does not verify.
    package static func sign(clientEmail: String, privateKeyPEM: String, privateKeyID: String?, scope: String,
                            tokenURI: String, issuedAt: Int64) throws(CredentialsError) -> String {
        try sign(clientEmail: clientEmail, key: RSAPrivateKey(pem: privateKeyPEM), privateKeyID: privateKeyID,
                 scope: scope, tokenURI: tokenURI, issuedAt: issuedAt)
    }

    /// The compact JWS `header.claims.signature`, each part base64url without padding.
    /// - Parameters:
    ///   - clientEmail: The file's `client_email`: the `iss` claim.
    ///   - key: The file's `private_key`, parsed with `RSAPrivateKey(pem:)`.
    ///   - privateKeyID: The file's `private_key_id`, sent as `kid`; nil or
    ///     empty leaves `kid` out.
    ///   - scope: The OAuth scopes, space-separated.
    ///   - tokenURI: The file's `token_uri`: the `aud` claim.
    ///   - issuedAt: Seconds since 1970-01-01T00:00:00Z (UTC); `exp` is
    ///     `issuedAt + lifetime`.
    /// - Throws: `CredentialsError.signatureCheckFailed` if the signature does
    ///   not verify with the key's public part (it is then never returned).
    package static func sign(clientEmail: String, key: RSAPrivateKey, privateKeyID: String?, scope: String,
                            tokenURI: String, issuedAt: Int64) throws(CredentialsError) -> String {
        var header: [(String, JSONMember)] = [("alg", .string("RS256"))]
        if let privateKeyID, !privateKeyID.isEmpty { header.append(("kid", .string(privateKeyID))) }
        header.append(("typ", .string("JWT")))
        let claims: [(String, JSONMember)] = [
            ("aud", .string(tokenURI)),
            ("exp", .integer(issuedAt + lifetime)),
            ("iat", .integer(issuedAt)),
            ("iss", .string(clientEmail)),
            ("scope", .string(scope)),
        ]
        return try compactJWS(header: object(header), payload: object(claims), key: key)
    }

    /// A compact RS256 JWS over exactly these header and payload bytes
    /// (RFC 7515 §3.1, §5.1): also what the RFC's own example is checked with.
    static func compactJWS(header: [UInt8], payload: [UInt8], key: RSAPrivateKey) throws(CredentialsError) -> String {
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return signingInput + "." + Base64URL.encode(try key.signSHA256(Array(signingInput.utf8)))
    }

    enum JSONMember {
        case string(String)
        case integer(Int64)
    }

    /// A one-line JSON object with its members in the given order.
    static func object(_ members: [(String, JSONMember)]) -> [UInt8] {
        var out: [UInt8] = [0x7B]
        for (i, (key, value)) in members.enumerated() {
            if i > 0 { out.append(0x2C) }
            CanonicalJSON.writeString(key, into: &out)
            out.append(0x3A)
            switch value {
            case .string(let text): CanonicalJSON.writeString(text, into: &out)
            case .integer(let number): out.append(contentsOf: String(number).utf8)
            }
        }
        out.append(0x7D)
        return out
    }
}

/// base64url without padding (RFC 4648 §5, RFC 7515 §2), the encoding of
/// every part of a JWS.
package enum Base64URL {
    /// The base64url text of `bytes`, without `=` padding.
    package static func encode(_ bytes: [UInt8]) -> String {
        var out = Array(Base64.encode(bytes).utf8)
        while out.last == UInt8(ascii: "=") { out.removeLast() }
        for i in out.indices {
            if out[i] == UInt8(ascii: "+") { out[i] = UInt8(ascii: "-") } else if out[i] == UInt8(ascii: "/") { out[i] = UInt8(ascii: "_") }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
