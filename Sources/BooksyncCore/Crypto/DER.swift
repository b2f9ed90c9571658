/// A minimal, strict reader of DER (ITU-T X.690 distinguished encoding) for
/// the few ASN.1 structures a private key is made of (`PrivateKeyPEM.swift`):
/// SEQUENCE, INTEGER, OBJECT IDENTIFIER, NULL, OCTET STRING and context tags.
///
/// Strict because a key file is outside input: only the single-byte tags
/// the caller names (so never a multi-byte tag),
/// definite lengths in their shortest form and at most 4 length bytes,
/// INTEGERs in their shortest form, and every length checked against the
/// bytes that are really there before anything is read. It reads nothing
/// but keys, so it fails with `CredentialsError.malformedKey`, whose reason
/// describes the structure ("a length runs past the end"), never the bytes,
/// which are key material.
struct DERReader {

    static let sequence: UInt8 = 0x30
    static let integer: UInt8 = 0x02
    static let octetString: UInt8 = 0x04
    static let null: UInt8 = 0x05
    static let objectIdentifier: UInt8 = 0x06

    private let bytes: [UInt8]
    private var position: Int
    private let end: Int

    init(_ bytes: [UInt8]) {
        self.init(bytes, from: 0, to: bytes.count)
    }

    private init(_ bytes: [UInt8], from start: Int, to end: Int) {
        self.bytes = bytes
        position = start
        self.end = end
    }

    var isAtEnd: Bool { position == end }

    /// The tag of the next element, nil at the end.
    var nextTag: UInt8? { isAtEnd ? nil : bytes[position] }

    /// Reads one element with tag `tag` and returns a reader over its contents.
    mutating func read(_ tag: UInt8, _ what: String) throws(CredentialsError) -> DERReader {
        guard let found = nextTag else { throw .malformedKey("it ends where \(what) should be") }
        guard found == tag else { throw .malformedKey("\(what) has the wrong type") }
        var at = position + 1
        guard at < end else { throw .malformedKey("\(what) has no length") }
        let first = bytes[at]
        at += 1
        var length: Int
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count != 0 else { throw .malformedKey("\(what) has an indefinite length, which DER does not allow") }
            guard count <= 4 else { throw .malformedKey("\(what) has a length of more than 4 bytes") }
            guard end - at >= count else { throw .malformedKey("the length of \(what) runs past the end") }
            length = 0
            for byte in bytes[at..<(at + count)] { length = length << 8 | Int(byte) }
            at += count
            guard bytes[at - count] != 0, length >= 0x80 else {
                throw .malformedKey("the length of \(what) is not in its shortest form")
            }
        }
        guard length <= end - at else { throw .malformedKey("\(what) runs past the end") }
        position = at + length
        return DERReader(bytes, from: at, to: at + length)
    }

    /// A non-negative INTEGER's magnitude, big-endian, without the sign byte.
    mutating func readUnsignedInteger(_ what: String) throws(CredentialsError) -> [UInt8] {
        let content = try read(Self.integer, what).remainingBytes
        guard let first = content.first else { throw .malformedKey("\(what) is empty") }
        guard first & 0x80 == 0 else { throw .malformedKey("\(what) is negative") }
        if first == 0, content.count > 1 {
            guard content[1] & 0x80 != 0 else { throw .malformedKey("\(what) is not in its shortest form") }
            return Array(content.dropFirst())
        }
        return content
    }

    /// A small non-negative INTEGER such as a version number.
    mutating func readSmallInteger(_ what: String) throws(CredentialsError) -> Int {
        let magnitude = try readUnsignedInteger(what)
        guard magnitude.count <= 4 else { throw .malformedKey("\(what) is too large") }
        return magnitude.reduce(0) { $0 << 8 | Int($1) }
    }

    /// An OBJECT IDENTIFIER's content bytes (compared against known encodings).
    mutating func readObjectIdentifier(_ what: String) throws(CredentialsError) -> [UInt8] {
        let content = try read(Self.objectIdentifier, what).remainingBytes
        guard !content.isEmpty, content.last! & 0x80 == 0 else { throw .malformedKey("\(what) is not a valid object identifier") }
        return content
    }

    mutating func readNull(_ what: String) throws(CredentialsError) {
        guard try read(Self.null, what).isAtEnd else { throw .malformedKey("\(what) is not an empty NULL") }
    }

    /// Fails unless everything was read: DER has no room for trailing bytes.
    func expectEnd(_ what: String) throws(CredentialsError) {
        guard isAtEnd else { throw .malformedKey("\(what) has unexpected bytes after its last field") }
    }

    /// The unread bytes of this element.
    var remainingBytes: [UInt8] { Array(bytes[position..<end]) }

    /// The dotted form of an OBJECT IDENTIFIER's content (`1.2.840.10045.2.1`),
    /// for naming an unknown algorithm; nil if it does not decode.
    static func dotted(_ oid: [UInt8]) -> String? {
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        for byte in oid {
            guard value >> 57 == 0 else { return nil }
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 {
                arcs.append(value)
                value = 0
            }
        }
        guard let first = arcs.first else { return nil }
        let head = first < 80 ? [first / 40, first % 40] : [2, first - 80]
        return (head + arcs.dropFirst()).map { String($0) }.joined(separator: ".")
    }
}
