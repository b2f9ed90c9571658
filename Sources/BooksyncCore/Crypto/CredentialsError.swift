/// Why a credentials file's private key cannot sign a token request
/// (`PrivateKeyPEM.swift`, `RSASigner.swift`, `JWT.swift`).
///
/// Each message is a sentence a user can act on. None contains key material:
/// no bytes, numbers or base64 of the key, only what kind of thing was found
/// and where its structure broke, since messages end up in terminals, CI logs
/// and bug reports. The caller names the credentials file in front of it.
package enum CredentialsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No `-----BEGIN … -----` line, or no matching END line.
    case notPEM
    /// A PEM block of another kind (`PUBLIC KEY`, `CERTIFICATE`, …).
    case notAPrivateKey(label: String)
    /// `ENCRYPTED PRIVATE KEY`, or a traditional key with `Proc-Type: 4,ENCRYPTED`.
    case encryptedKey
    /// A private key for another algorithm, e.g. "an EC key".
    case notRSA(String)
    /// A private key in a form booksync does not read, e.g. "an OpenSSH private key".
    case unsupportedKeyFormat(String)
    /// The DER inside the PEM does not parse; the reason names the structure, never its content.
    case malformedKey(String)
    /// Fewer than 2048 bits.
    case keyTooSmall(bits: Int)
    /// More bits than booksync signs with (a bound on the time one signature takes).
    case keyTooLarge(bits: Int)
    /// The key's numbers parse but do not belong together.
    case inconsistentKey(String)
    /// The signature did not verify with the key's own public exponent.
    case signatureCheckFailed

    /// Service-account keys Google issues are 2048-bit RSA.
    package static let minimumKeyBits = 2048
    /// A 16384-bit signature takes about a second in a release build.
    package static let maximumKeyBits = 16384

    private static let newKey = "create a new JSON key for the service account (Google Cloud console: IAM & Admin → Service Accounts → Keys)"

    /// The error as a sentence to put after the credentials file's name: what
    /// was found and what to do (usually create a new key); never key material.
    package var message: String {
        switch self {
        case .notPEM:
            "its private_key is not a PEM private key (no '-----BEGIN PRIVATE KEY-----' … '-----END PRIVATE KEY-----' block); \(Self.newKey)"
        case .notAPrivateKey(let label):
            "its private_key holds a PEM '\(label)', not a private key; \(Self.newKey)"
        case .encryptedKey:
            "its private_key is encrypted with a passphrase, which booksync cannot use; put the output of 'openssl pkcs8 -topk8 -nocrypt -in key.pem' in its place, or \(Self.newKey)"
        case .notRSA(let algorithm):
            "its private_key is \(algorithm), but service-account tokens are signed with RS256, which needs a plain RSA key (rsaEncryption); \(Self.newKey)"
        case .unsupportedKeyFormat(let what):
            "its private_key is \(what), a form booksync does not read (it reads PKCS#8 'PRIVATE KEY' and PKCS#1 'RSA PRIVATE KEY' PEM, as Google issues them); \(Self.newKey)"
        case .malformedKey(let reason):
            "its private_key is damaged (\(reason)); check that the file was copied whole, or \(Self.newKey)"
        case .keyTooSmall(let bits):
            "its private_key is a \(bits)-bit RSA key; booksync signs only with keys of \(Self.minimumKeyBits) bits or more; \(Self.newKey)"
        case .keyTooLarge(let bits):
            "its private_key is a \(bits)-bit RSA key; booksync signs only with keys of up to \(Self.maximumKeyBits) bits; \(Self.newKey)"
        case .inconsistentKey(let reason):
            "its private_key is not a valid RSA key (\(reason)); check that the file was copied whole, or \(Self.newKey)"
        case .signatureCheckFailed:
            "a signature made with its private_key did not verify with the key's public part, so it was not sent (the key's numbers do not fit together, or the computer made an error); \(Self.newKey)"
        }
    }

    package var description: String { message }
}
