/// Any record value in a `Codable` DTO: a field of type `any`, a map whose
/// keys are not declared (`[String: Value]`), or an array of mixed items.
/// `RecordEncoder` and `RecordDecoder` pass it through unchanged (an integer
/// stays an integer, `null` stays `null`); other coders see the value as a
/// record file spells it (`{"$timestamp": …}` and the other tags).
extension Value: Codable {
    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: Key.self) {
            var fields: Fields = [:]
            for key in container.allKeys { fields[key.stringValue] = try container.decode(Value.self, forKey: key) }
            if fields.count == 1, let (tag, payload) = fields.first, tag.hasPrefix("$") {
                do {
                    self = try TaggedValue.decode(tag: tag, payload: payload)
                } catch {
                    throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.message))
                }
            } else {
                self = .map(fields)
            }
            return
        }
        if var container = try? decoder.unkeyedContainer() {
            var items: [Value] = []
            while !container.isAtEnd { items.append(try container.decode(Value.self)) }
            self = .array(items)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let flag = try? single.decode(Bool.self) { self = .bool(flag) }
        else if let number = try? single.decode(Int64.self) { self = .integer(number) }
        else if let number = try? single.decode(Double.self) { self = .double(number) }
        else { self = .string(try single.decode(String.self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        func tagged(_ tag: String, _ payload: Value) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(payload, forKey: Key(stringValue: tag))
        }
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let flag):
            var single = encoder.singleValueContainer()
            try single.encode(flag)
        case .integer(let number):
            var single = encoder.singleValueContainer()
            try single.encode(number)
        case .double(let number) where number.isFinite:
            var single = encoder.singleValueContainer()
            try single.encode(number)
        case .double(let number):
            try tagged("$double", .string(number.isNaN ? "NaN" : number > 0 ? "Infinity" : "-Infinity"))
        case .string(let text):
            var single = encoder.singleValueContainer()
            try single.encode(text)
        case .timestamp(let timestamp): try tagged("$timestamp", .string(timestamp.rfc3339))
        case .bytes(let bytes): try tagged("$bytes", .string(Base64.encode(bytes)))
        case .reference(let path): try tagged("$reference", .string(path))
        case .geoPoint(let latitude, let longitude):
            try tagged("$geopoint", .map(["latitude": .double(latitude), "longitude": .double(longitude)]))
        case .array(let items):
            var container = encoder.unkeyedContainer()
            for item in items { try container.encode(item) }
        case .map(let fields):
            var container = encoder.container(keyedBy: Key.self)
            for (key, value) in fields { try container.encode(value, forKey: Key(stringValue: key)) }
        }
    }
}
