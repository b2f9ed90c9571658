/// Reading the `private_key` of a service-account credentials file: a PEM
/// block (RFC 7468) around DER, either PKCS#8 `PRIVATE KEY` (what Google
/// issues, RFC 5208/5958) or PKCS#1 `RSA PRIVATE KEY` (RFC 8017 A.1.2, what
/// `openssl genrsa -traditional` writes).
///
/// Everything else gets an error saying what it is and what to do: an
/// encrypted key, an EC or Ed25519 key, a public key or certificate, an
/// OpenSSH key, or DER that does not parse. No error repeats any part of the
/// key.
extension RSAPrivateKey {
    /// Reads the `private_key` of a credentials file: one PEM block of PKCS#8
    /// `PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`, unencrypted.
    /// - Parameter text: The PEM text, with its BEGIN and END lines.
    /// - Throws: `CredentialsError` saying what was found instead (an encrypted,
    ///   EC or OpenSSH key, a certificate, damaged DER, a key below 2048 bits, …).
    package init(pem text: String) throws(CredentialsError) {
        let block = try PEMBlock(text)
        switch block.label {
        case "PRIVATE KEY":
            self = try Self.fromPKCS8(block.der())
        case "RSA PRIVATE KEY":
            if block.isEncrypted { throw .encryptedKey }
            self = try Self.fromPKCS1(block.der())
        case "ENCRYPTED PRIVATE KEY":
            throw .encryptedKey
        case "EC PRIVATE KEY":
            throw .notRSA("an EC key")
        case "DSA PRIVATE KEY":
            throw .notRSA("a DSA key")
        case "OPENSSH PRIVATE KEY":
            throw .unsupportedKeyFormat("an OpenSSH private key")
        case let label where label.hasSuffix("PRIVATE KEY"):
            throw .unsupportedKeyFormat("a PEM '\(label)'")
        case let label:
            throw .notAPrivateKey(label: label)
        }
    }

    // Object identifiers (content bytes) of the algorithms a PKCS#8 key may name.
    private static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]  // 1.2.840.113549.1.1.1
    private static let otherAlgorithms: [([UInt8], String)] = [
        ([0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0A], "an RSA key restricted to RSA-PSS signatures"),  // 1.2.840.113549.1.1.10
        ([0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01], "an EC key"),  // 1.2.840.10045.2.1
        ([0x2A, 0x86, 0x48, 0xCE, 0x38, 0x04, 0x01], "a DSA key"),  // 1.2.840.10040.4.1
        ([0x2B, 0x65, 0x6E], "an X25519 key"),  // 1.3.101.110
        ([0x2B, 0x65, 0x6F], "an X448 key"),
        ([0x2B, 0x65, 0x70], "an Ed25519 key"),
        ([0x2B, 0x65, 0x71], "an Ed448 key"),
    ]

    /// PKCS#8 PrivateKeyInfo / OneAsymmetricKey:
    /// `SEQUENCE { version, SEQUENCE { algorithm OID, parameters }, OCTET STRING key, [0] attributes OPTIONAL, [1] publicKey OPTIONAL }`.
    static func fromPKCS8(_ der: [UInt8]) throws(CredentialsError) -> RSAPrivateKey {
        var top = DERReader(der)
        var info = try top.read(DERReader.sequence, "the PKCS#8 structure")
        try top.expectEnd("the key")
        // EncryptedPrivateKeyInfo starts with a SEQUENCE where PrivateKeyInfo has its version.
        if info.nextTag == DERReader.sequence { throw .encryptedKey }
        let version = try info.readSmallInteger("the PKCS#8 version")
        guard version <= 1 else { throw .malformedKey("it has PKCS#8 version \(version), which does not exist") }
        var algorithm = try info.read(DERReader.sequence, "the algorithm identifier")
        let oid = try algorithm.readObjectIdentifier("the algorithm")
        guard oid == rsaEncryption else {
            if let known = otherAlgorithms.first(where: { $0.0 == oid }) { throw .notRSA(known.1) }
            throw .notRSA("a key for the algorithm \(DERReader.dotted(oid) ?? "with an unreadable identifier")")
        }
        if !algorithm.isAtEnd { try algorithm.readNull("the RSA algorithm parameters") }
        try algorithm.expectEnd("the algorithm identifier")
        let inner = try info.read(DERReader.octetString, "the private key").remainingBytes
        while let tag = info.nextTag {
            guard tag == 0xA0 || tag == 0xA1 || tag == 0x81 else {
                throw .malformedKey("the PKCS#8 structure has unexpected bytes after the private key")
            }
            _ = try info.read(tag, "an optional PKCS#8 field")
        }
        return try fromPKCS1(inner)
    }

    /// PKCS#1 RSAPrivateKey: `SEQUENCE { version, n, e, d, p, q, dP, dQ, qInv }`.
    static func fromPKCS1(_ der: [UInt8]) throws(CredentialsError) -> RSAPrivateKey {
        var fields: [BigUInt] = []
        var top = DERReader(der)
        var key = try top.read(DERReader.sequence, "the RSA key")
        try top.expectEnd("the key")
        let version = try key.readSmallInteger("the RSA key version")
        if version == 1 { throw .unsupportedKeyFormat("a multi-prime RSA key") }
        guard version == 0 else { throw .malformedKey("it has RSA key version \(version), which does not exist") }
        for name in ["modulus", "public exponent", "private exponent", "first prime", "second prime",
                     "first CRT exponent", "second CRT exponent", "CRT coefficient"] {
            fields.append(BigUInt(bigEndian: try key.readUnsignedInteger("the \(name)")))
        }
        try key.expectEnd("the RSA key")
        return try RSAPrivateKey(modulus: fields[0], publicExponent: fields[1], privateExponent: fields[2],
                                 prime1: fields[3], prime2: fields[4], exponent1: fields[5], exponent2: fields[6],
                                 coefficient: fields[7])
    }
}

/// The first PEM block of a text that holds a private key (RFC 7468; text
/// around it is ignored, as the RFC allows), with RFC 1421 headers
/// (`Proc-Type: 4,ENCRYPTED`) noticed only to refuse encrypted keys.
struct PEMBlock {
    let label: String
    let isEncrypted: Bool
    private let body: String

    init(_ text: String) throws(CredentialsError) {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        // A key pasted into an environment variable or a shell string often
        // carries the two characters `\n` for its line breaks.
        if lines.count == 1, text.contains("\\n") {
            lines = text.split(separator: "\\n", omittingEmptySubsequences: false)
        }
        let trimmed = lines.map { $0.trimmingSpaces }
        let blocks = trimmed.indices.compactMap { i in Self.label(trimmed[i], marker: "BEGIN").map { (i, $0) } }
        guard let (start, label) = blocks.first(where: { $0.1.hasSuffix("PRIVATE KEY") }) ?? blocks.first else {
            throw .notPEM
        }
        guard let end = trimmed[(start + 1)...].firstIndex(where: { $0.hasPrefix("-----END") }) else {
            throw .malformedKey("its '-----END \(label)-----' line is missing")
        }
        guard Self.label(trimmed[end], marker: "END") == label else {
            throw .malformedKey("its END line does not match its BEGIN line")
        }
        var encrypted = false
        var body = ""
        for line in trimmed[(start + 1)..<end] {
            if line.contains(":") {
                if line.hasPrefix("Proc-Type:") && line.contains("ENCRYPTED") { encrypted = true }
                continue
            }
            body += line
        }
        self.label = label
        isEncrypted = encrypted
        self.body = body
    }

    /// The DER inside the block.
    func der() throws(CredentialsError) -> [UInt8] {
        guard !body.isEmpty else { throw .malformedKey("its PEM block is empty") }
        guard !body.contains(where: { $0 == "-" || $0 == "_" }), let bytes = Base64.decode(body) else {
            throw .malformedKey("its PEM block is not valid base64")
        }
        return bytes
    }

    /// The label of a `-----BEGIN label-----` line; only capitals, digits and
    /// single spaces, so that it can be named in a message safely.
    private static func label(_ line: String, marker: String) -> String? {
        let prefix = "-----\(marker) ", suffix = "-----"
        guard line.hasPrefix(prefix), line.hasSuffix(suffix), line.utf8.count >= prefix.utf8.count + suffix.utf8.count else { return nil }
        let label = String(line.dropFirst(prefix.count).dropLast(suffix.count))
        guard !label.isEmpty, label.utf8.count <= 64,
              label.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x20 }) else { return nil }
        return label
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
