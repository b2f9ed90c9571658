import BooksyncCore

/// Maps record values to Firestore's REST `Value` JSON and back: the DTO layer
/// that keeps the file format independent of the wire format.
///
/// Wire facts handled here: int64 travels as a decimal string; doubles may be
/// JSON numbers (integral ones too) or the strings "NaN", "Infinity",
/// "-Infinity"; empty arrays and maps come back as `"arrayValue": {}` and
/// `"mapValue": {}`; zero coordinates of a geopoint may be omitted;
/// timestamps carry 0–9 fraction digits; references are full resource names.
enum FirestoreValueCodec {
    /// Why a wire value could not be decoded; names the field path.
    struct DecodeError: Error, Sendable {
        let message: String
    }

    // MARK: record → wire

    static func encodeFields(_ fields: Fields, documentsRoot: String) -> Value {
        .map(fields.mapValues { encode($0, documentsRoot: documentsRoot) })
    }

    static func encode(_ value: Value, documentsRoot: String) -> Value {
        switch value {
        case .null: return .map(["nullValue": .null])
        case .bool(let b): return .map(["booleanValue": .bool(b)])
        case .integer(let i): return .map(["integerValue": .string(String(i))])
        case .double(let d):
            if d.isNaN { return .map(["doubleValue": .string("NaN")]) }
            if d.isInfinite { return .map(["doubleValue": .string(d < 0 ? "-Infinity" : "Infinity")]) }
            return .map(["doubleValue": .double(d)])
        case .string(let s): return .map(["stringValue": .string(s)])
        case .timestamp(let t): return .map(["timestampValue": .string(t.rfc3339)])
        case .bytes(let b): return .map(["bytesValue": .string(Base64.encode(b))])
        case .reference(let path):
            let name = ReferencePath.isFullName(path) ? path : documentsRoot + "/" + path
            return .map(["referenceValue": .string(name)])
        case .geoPoint(let lat, let lon):
            return .map(["geoPointValue": .map(["latitude": .double(lat), "longitude": .double(lon)])])
        case .array(let items):
            return .map(["arrayValue": .map(["values": .array(items.map { encode($0, documentsRoot: documentsRoot) })])])
        case .map(let fields):
            return .map(["mapValue": .map(["fields": encodeFields(fields, documentsRoot: documentsRoot)])])
        }
    }

    // MARK: wire → record

    /// A wire map of fields as record fields. Two field names that are equal
    /// Swift strings but different bytes (Unicode normalization: `café` as
    /// U+00E9 and as `e` U+0301) cannot both be keys of `Fields`; the wire
    /// parser leaves an `EquivalentKeys` marker for them, and this makes it an
    /// error of this one document, at any depth, naming both names.
    static func decodeFields(_ wire: Value?, documentsRoot: String, path: String = "") throws(DecodeError) -> Fields {
        guard let wire else { return [:] }
        if let keys = EquivalentKeys(marker: wire) { throw equivalentKeysError(keys, path: path) }
        guard case .map(let map) = wire else { throw DecodeError(message: "\(describe(path)) is not a map of fields") }
        var fields: Fields = [:]
        fields.reserveCapacity(map.count)
        for (key, value) in map {
            let fieldPath = path.isEmpty ? key : path + "." + key
            fields[key] = try decode(value, documentsRoot: documentsRoot, path: fieldPath)
        }
        return fields
    }

    static func decode(_ wire: Value, documentsRoot: String, path: String) throws(DecodeError) -> Value {
        if let keys = EquivalentKeys(marker: wire) { throw equivalentKeysError(keys, path: path) }
        guard case .map(let m) = wire, m.count == 1, let (kind, payload) = m.first else {
            throw DecodeError(message: "\(describe(path)) is not a Firestore value")
        }
        switch (kind, payload) {
        case ("nullValue", _): return .null
        case ("booleanValue", .bool(let b)): return .bool(b)
        case ("integerValue", .string(let s)):
            guard let i = Int64(s) else { throw DecodeError(message: "\(describe(path)): integerValue '\(s)' is not an int64") }
            return .integer(i)
        case ("integerValue", .integer(let i)): return .integer(i)
        case ("doubleValue", .double(let d)): return .double(d)
        case ("doubleValue", .integer(let i)): return .double(Double(i))
        case ("doubleValue", .string("NaN")): return .double(.nan)
        case ("doubleValue", .string("Infinity")): return .double(.infinity)
        case ("doubleValue", .string("-Infinity")): return .double(-.infinity)
        case ("stringValue", .string(let s)): return .string(s)
        case ("timestampValue", .string(let s)):
            do {
                return .timestamp(try Timestamp(rfc3339: s))
            } catch {
                throw DecodeError(message: "\(describe(path)): \(error.message)")
            }
        case ("bytesValue", .string(let s)):
            guard let bytes = Base64.decode(s) else { throw DecodeError(message: "\(describe(path)): bytesValue is not base64") }
            return .bytes(bytes)
        case ("referenceValue", .string(let s)):
            guard ReferencePath.isDocumentPath(s) else { throw DecodeError(message: "\(describe(path)): '\(s)' is not a document reference") }
            return .reference(ReferencePath.shorten(s, documentsRoot: documentsRoot))
        case ("geoPointValue", .map(let g)):
            guard let lat = number(g["latitude"]), let lon = number(g["longitude"]) else {
                throw DecodeError(message: "\(describe(path)): geoPointValue needs numeric latitude and longitude")
            }
            return .geoPoint(latitude: lat, longitude: lon)
        case ("arrayValue", .map(let a)):
            guard let values = a["values"] else { return .array([]) }
            guard case .array(let items) = values else { throw DecodeError(message: "\(describe(path)): arrayValue.values is not an array") }
            var result: [Value] = []
            result.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                result.append(try decode(item, documentsRoot: documentsRoot, path: "\(path)[\(i)]"))
            }
            return .array(result)
        case ("mapValue", .map(let m)):
            return .map(try decodeFields(m["fields"], documentsRoot: documentsRoot, path: path))
        default:
            throw DecodeError(message: "\(describe(path)): unsupported Firestore value '\(kind)'")
        }
    }

    private static func equivalentKeysError(_ keys: EquivalentKeys, path: String) -> DecodeError {
        DecodeError(message: "\(describe(path)) has two field names that differ only by Unicode normalization, \(keys.description); "
            + "booksync cannot hold both in one record (field names are compared as Unicode text)")
    }

    /// A missing coordinate is zero: proto3 JSON omits default values.
    private static func number(_ value: Value?) -> Double? {
        switch value {
        case nil: 0
        case .double(let d)?: d
        case .integer(let i)?: Double(i)
        case .string("NaN")?: .nan
        default: nil
        }
    }

    private static func describe(_ path: String) -> String {
        path.isEmpty ? "the document" : "field '\(path)'"
    }

    /// Maps that a record file cannot hold: an object with exactly one key that
    /// starts with `$` reads back as a tagged value. Returns the field paths.
    static func untaggableMaps(in fields: Fields, path: String = "") -> [String] {
        var found: [String] = []
        for (key, value) in fields {
            let fieldPath = path.isEmpty ? key : path + "." + key
            found += untaggable(value, path: fieldPath)
        }
        if path.isEmpty, fields.count == 1, let key = fields.keys.first, key.hasPrefix("$") { found.append("(top level)") }
        return found.sorted()
    }

    private static func untaggable(_ value: Value, path: String) -> [String] {
        switch value {
        case .map(let m):
            var found = untaggableMaps(in: m, path: path)
            if m.count == 1, let key = m.keys.first, key.hasPrefix("$") { found.append(path) }
            return found
        case .array(let items):
            return items.enumerated().flatMap { untaggable($1, path: "\(path)[\($0)]") }
        default:
            return []
        }
    }
}
