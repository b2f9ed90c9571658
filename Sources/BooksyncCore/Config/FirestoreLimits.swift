/// Firestore's documented limits, checked before anything is sent, so a record
/// the server would reject is reported as invalid with the reason instead of
/// failing halfway through a push.
package enum FirestoreLimits {
    /// Maximum size of a document: 1 MiB, computed as Firestore's storage-size rules.
    package static let maximumDocumentBytes = 1_048_576
    /// Maximum depth of maps and arrays inside a document.
    package static let maximumDepth = 20
    /// Maximum number of fields, counting fields of nested maps.
    package static let maximumFieldCount = 20_000
    /// Maximum size of a field name.
    package static let maximumFieldNameBytes = 1_500
    /// Maximum size of a field path: the names from the top of the document
    /// down to a field, joined by dots, in UTF-8 bytes. Firestore documents
    /// the number, not how it counts; this is how the emulator counts (tried
    /// at 1,500 and 1,501 bytes): no backticks, however a name would be
    /// escaped in a field path, and arrays add nothing (a map in an array
    /// counts from the array's field). A nested name within the name limit
    /// can still make a path past this one, and Firestore then refuses the
    /// whole request, not only the document.
    package static let maximumFieldPathBytes = 1_500
    /// Maximum number of writes in one `:batchWrite` or `:commit` request; a
    /// push sends its changes in chunks of this size (one request each).
    package static let maximumWritesPerRequest = 500
    /// Bytes of writes booksync puts in one request: under Firestore's 10 MiB
    /// request limit, with room for the request around them.
    package static let maximumWriteRequestBytes = 9 * 1024 * 1024
    /// Bytes of writes booksync puts in one request to the emulator, which
    /// refuses any message over 4 MiB ("gRPC message exceeds maximum size
    /// 4194304", 429 RESOURCE_EXHAUSTED) where production takes 10 MiB.
    package static let emulatorWriteRequestBytes = 3 * 1024 * 1024 + 512 * 1024

    /// Every limit `fields` breaks, as sentences naming the field path.
    /// - Parameters:
    ///   - fields: The document's fields (what Firestore stores, see `IDField`).
    ///   - id: The document id; the document's name counts toward its size.
    ///   - collectionPath: The collection's path, also part of that name.
    package static func problems(in fields: Fields, id: RecordID, collectionPath: String) -> [String] {
        var problems: [String] = []
        var fieldCount = 0
        // Top-level fields are at depth 1; each map or array adds a level.
        checkMap(fields, path: Path(), depth: 1, problems: &problems, fieldCount: &fieldCount)
        if fieldCount > maximumFieldCount {
            problems.append("the record has \(fieldCount) fields; Firestore allows at most \(maximumFieldCount)")
        }
        let size = documentSize(fields, id: id, collectionPath: collectionPath)
        if size > maximumDocumentBytes {
            problems.append("the record is \(size) bytes as a Firestore document; the limit is \(maximumDocumentBytes) (1 MiB)")
        }
        return problems
    }

    /// Storage size per https://firebase.google.com/docs/firestore/storage-size:
    /// document name + fields + 32 bytes. In bytes; `id` and `collectionPath`
    /// make the document name.
    package static func documentSize(_ fields: Fields, id: RecordID, collectionPath: String) -> Int {
        var nameSize = 16 + id.rawValue.utf8.count + 1
        for segment in collectionPath.split(separator: "/") { nameSize += segment.utf8.count + 1 }
        return nameSize + mapSize(fields) + 32
    }

    private static func mapSize(_ fields: Fields) -> Int {
        fields.reduce(0) { $0 + $1.key.utf8.count + 1 + valueSize($1.value) }
    }

    private static func valueSize(_ value: Value) -> Int {
        switch value {
        case .null, .bool: 1
        case .integer, .double, .timestamp: 8
        case .geoPoint: 16
        case .string(let s): s.utf8.count + 1
        case .bytes(let b): b.count
        case .reference(let path): path.split(separator: "/").reduce(16) { $0 + $1.utf8.count + 1 }
        case .array(let items): items.reduce(0) { $0 + valueSize($1) }
        case .map(let m): mapSize(m)
        }
    }

    /// Where a field is: the path shown in messages (`a[1].b`), and the
    /// bytes Firestore counts for it (`a.b`); nil once a path above was
    /// already too long, so only the shortest such path is reported.
    private struct Path {
        var shown = ""
        var bytes: Int? = 0
        var isTop = true

        func appending(_ key: String) -> Path {
            Path(shown: isTop ? key : shown + "." + key, bytes: bytes.map { $0 + (isTop ? 0 : 1) + key.utf8.count }, isTop: false)
        }

        func item(_ index: Int) -> Path { Path(shown: "\(shown)[\(index)]", bytes: bytes, isTop: false) }
    }

    private static func checkMap(_ fields: Fields, path parent: Path, depth: Int, problems: inout [String], fieldCount: inout Int) {
        for key in fields.keys.sorted(by: CanonicalJSON.utf8Less) {
            var path = parent.appending(key)
            let fieldPath = path.shown
            fieldCount += 1
            if key.isEmpty {
                problems.append("field '\(fieldPath)' has an empty name; Firestore field names cannot be empty")
            } else if key.utf8.count > maximumFieldNameBytes {
                problems.append("field name '\(key.prefix(40))…' is \(key.utf8.count) bytes; Firestore allows at most \(maximumFieldNameBytes)")
                path.bytes = nil
            } else if key.utf8.count >= 4, key.hasPrefix("__"), key.hasSuffix("__") {
                problems.append("field '\(fieldPath)': names of the form __name__ are reserved by Firestore")
            }
            if let bytes = path.bytes, bytes > maximumFieldPathBytes {
                problems.append("field path '\(fieldPath.prefix(40))…' is \(bytes) bytes (the names down to the field, joined by dots); "
                    + "Firestore allows at most \(maximumFieldPathBytes)")
                path.bytes = nil
            }
            checkValue(fields[key]!, path: path, depth: depth, problems: &problems, fieldCount: &fieldCount)
        }
    }

    private static func checkValue(_ value: Value, path: Path, depth: Int, problems: inout [String], fieldCount: inout Int) {
        switch value {
        case .map(let m):
            if depth + 1 > maximumDepth {
                problems.append("field '\(path.shown)' is nested more than \(maximumDepth) levels deep; Firestore allows \(maximumDepth)")
                return
            }
            checkMap(m, path: path, depth: depth + 1, problems: &problems, fieldCount: &fieldCount)
        case .array(let items):
            if depth + 1 > maximumDepth {
                problems.append("field '\(path.shown)' is nested more than \(maximumDepth) levels deep; Firestore allows \(maximumDepth)")
                return
            }
            for (i, item) in items.enumerated() {
                if case .array = item {
                    problems.append("field '\(path.shown)[\(i)]' is an array inside an array; Firestore does not allow that (wrap it in a map)")
                    continue
                }
                checkValue(item, path: path.item(i), depth: depth + 1, problems: &problems, fieldCount: &fieldCount)
            }
        default:
            break
        }
    }
}
