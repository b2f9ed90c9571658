/// A record id (the Firestore document id) and its file name.
///
/// File name = encoded id + `.json`. Bytes outside `[A-Za-z0-9_.-]`, and a leading
/// `.`, are written as `%XX` (uppercase hex of the UTF-8 bytes); decoding is the
/// exact inverse and rejects every other spelling, so each id has exactly one file
/// name and no id can name a path outside the collection directory.
public struct RecordID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The id as Firestore knows it; equality and order compare its UTF-8 bytes.
    public let rawValue: String

    /// Firestore's limit on a document id.
    package static let maximumBytes = 1_500
    /// Longest encoded id that still fits a file name (255 bytes) with `.json`.
    package static let maximumEncodedBytes = 250

    /// Validates an id from either side (a file name or a remote document).
    public init(_ rawValue: String) throws(RecordIDError) {
        let bytes = Array(rawValue.utf8)
        if bytes.isEmpty { throw .empty }
        if rawValue == "." || rawValue == ".." { throw .dots(rawValue) }
        if bytes.contains(UInt8(ascii: "/")) { throw .slash(rawValue) }
        if bytes.count > Self.maximumBytes { throw .tooLong(rawValue, bytes.count) }
        if bytes.count >= 4, bytes.starts(with: [0x5F, 0x5F]), bytes.reversed().starts(with: [0x5F, 0x5F]) {
            throw .reserved(rawValue)
        }
        let encoded = Self.encode(bytes)
        if encoded.utf8.count > Self.maximumEncodedBytes { throw .fileNameTooLong(rawValue, encoded.utf8.count) }
        self.rawValue = rawValue
        self.encodedName = encoded
    }

    /// The id as it appears in the file name, without `.json`.
    package let encodedName: String

    /// The record file's name in the collection directory: `encodedName` + `.json`.
    public var fileName: String { encodedName + ".json" }
    public var description: String { rawValue }

    public static func < (lhs: RecordID, rhs: RecordID) -> Bool {
        CanonicalJSON.utf8Less(lhs.rawValue, rhs.rawValue)
    }

    // Identity is the raw id's bytes. Not Swift's String equality, which treats
    // "café" (é) and "café" (e + combining accent) as equal: Firestore and file
    // names treat them as two different ids.
    public static func == (lhs: RecordID, rhs: RecordID) -> Bool { lhs.rawValue.utf8.elementsEqual(rhs.rawValue.utf8) }
    public func hash(into hasher: inout Hasher) {
        var text = rawValue
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// An id already checked: `rawValue` and its file-name encoding as given.
    init(checkedRaw rawValue: String, encodedName: String) {
        self.rawValue = rawValue
        self.encodedName = encodedName
    }

    /// An id whose bytes are all plain (`[A-Za-z0-9_.-]`, not starting with `.`):
    /// it is its own file name, so validation is a few length checks.
    init?(plain text: String) {
        var bytes = text
        let ok = bytes.withUTF8 { b -> Bool in
            guard !b.isEmpty, b.count <= Self.maximumEncodedBytes, b[0] != 0x2E else { return false }
            for c in b where !Self.isPlain(c) { return false }
            if b.count >= 4, b[0] == 0x5F, b[1] == 0x5F, b[b.count - 1] == 0x5F, b[b.count - 2] == 0x5F { return false }
            return true
        }
        guard ok else { return nil }
        self.rawValue = text
        self.encodedName = text
    }

    /// True for the directory entries that stand for records (`*.json`, not
    /// hidden), valid or not: the one rule for what the scan, the stat cache's
    /// clean proof and the file checks count as a record file.
    package static func isRecordFileName(_ name: String) -> Bool {
        name.hasSuffix(".json") && !name.hasPrefix(".")
    }

    /// The id a record file name stands for; nil for names that are not record
    /// files at all (no `.json`, hidden files), an error for names that look like
    /// records but do not decode to a valid id.
    package static func fromFileName(_ name: String) throws(RecordIDError) -> RecordID? {
        guard isRecordFileName(name) else { return nil }
        let stem = String(name.utf8.dropLast(5))!
        if let plain = RecordID(plain: stem) { return plain }
        guard let raw = PercentEncoding.decode(stem) else {
            // Lowercase hex (`caf%c3%a9.json`): the rule alone does not say what to rename it to.
            if let lenient = PercentEncoding.decode(stem, anyCase: true), let id = try? RecordID(lenient) {
                throw .nonCanonicalFileName(name, id.fileName)
            }
            throw .badFileName(name)
        }
        let id = try RecordID(raw)
        guard id.encodedName == stem else { throw .nonCanonicalFileName(name, id.fileName) }
        return id
    }

    /// True for the bytes a file name keeps as they are (`[A-Za-z0-9_.-]`).
    package static func isPlainByte(_ b: UInt8) -> Bool { isPlain(b) }

    static func isPlain(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39)
            || b == 0x5F || b == 0x2E || b == 0x2D
    }

    /// The file-name encoding: plain bytes kept, except a leading `.`.
    static func encode(_ bytes: [UInt8]) -> String {
        PercentEncoding.encode(bytes) { b, offset in isPlain(b) && !(offset == 0 && b == 0x2E) }
    }
}

/// Why an id or a record file name was rejected.
public enum RecordIDError: Error, Equatable, Sendable {
    case empty
    case dots(String)
    case slash(String)
    case tooLong(String, Int)
    case reserved(String)
    case fileNameTooLong(String, Int)
    case badFileName(String)
    case nonCanonicalFileName(String, String)
    /// A path id whose segments do not alternate document, collection, document.
    case notDocumentPath(String)
    /// A path id with a segment that is not a valid id (the segment's own message).
    case badSegment(String, String)
    /// A path id into a subcollection the config does not name (the id, the subcollection path).
    case unconfiguredSubcollection(String, String)
    /// A path id whose file path is longer than `RecordID.maximumPathBytes` (the id, the path's bytes).
    case pathTooLong(String, Int)

    /// Every caller names the id or file before the message, so the messages
    /// for long ids do not repeat it, and the others abbreviate it
    /// (`TerminalEscaping.abbreviate`): a 1,500-byte id printed twice buries
    /// the message. Not escaped: whoever prints the message escapes it.
    public var message: String {
        switch self {
        case .empty: "a record id cannot be empty"
        case .dots(let id): "'\(id)' is not a valid record id ('.' and '..' are reserved)"
        case .slash(let id): "'\(TerminalEscaping.abbreviate(id))' is not a valid record id: it contains '/'"
        case .tooLong(_, let n): "the record id is \(n) bytes; Firestore allows at most 1500"
        case .reserved(let id):
            "'\(TerminalEscaping.abbreviate(id))' is not a valid record id: ids of the form __name__ are reserved by Firestore"
        case .fileNameTooLong(_, let n):
            "the record id encodes to a \(n)-byte file name; file systems allow 255 bytes with '.json'"
        case .badFileName: "file name is not a percent-encoded record id (write other bytes as %XX, uppercase hex, of their UTF-8)"
        case .nonCanonicalFileName(_, let canonical):
            "file name is not the canonical encoding of its id; rename it to \(canonical)"
        case .notDocumentPath(let id):
            "'\(TerminalEscaping.abbreviate(id))' is not a document path: it needs document/collection/document segments (dune/reviews/r1)"
        case .badSegment(let id, let message):
            "'\(TerminalEscaping.abbreviate(id))' has a bad segment: \(message)"
        case .pathTooLong(_, let n):
            "the document path encodes to a \(n)-byte file path; booksync keeps record paths within \(RecordID.maximumPathBytes) bytes"
        case .unconfiguredSubcollection(let id, let path):
            "'\(TerminalEscaping.abbreviate(id))' is in the subcollection '\(TerminalEscaping.abbreviate(path))', which this collection does not sync "
                + "(config \"subcollections\", init --subcollection)"
        }
    }
}
