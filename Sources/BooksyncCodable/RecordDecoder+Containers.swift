import BooksyncCore

/// Reads one map. Keys the type does not ask for are ignored; a key it asks
/// for that is absent is `keyNotFound` (the synthesized code asks optionals
/// with `decodeIfPresent`, which gives nil for absent and null).
struct RecordKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoding: RecordDecoding
    let fields: Fields
    let codingPath: [any CodingKey]

    var allKeys: [Key] { fields.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }

    private func value(_ key: Key) throws -> Value {
        guard let value = fields[key.stringValue] else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: codingPath, debugDescription: "missing required field \(CanonicalJSON.asciiQuoted(key.stringValue))"))
        }
        return value
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try value(key) { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try RecordDecoding.bool(value(key), at: path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try RecordDecoding.string(value(key), at: path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try RecordDecoding.floatingPoint(value(key), as: type, at: path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try RecordDecoding.floatingPoint(value(key), as: type, at: path(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try RecordDecoding.integer(value(key), as: type, at: path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try RecordDecoding.integer(value(key), as: type, at: path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try RecordDecoding.integer(value(key), as: type, at: path(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try RecordDecoding.integer(value(key), as: type, at: path(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try RecordDecoding.integer(value(key), as: type, at: path(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try RecordDecoding.integer(value(key), as: type, at: path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try RecordDecoding.integer(value(key), as: type, at: path(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try RecordDecoding.integer(value(key), as: type, at: path(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try RecordDecoding.integer(value(key), as: type, at: path(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try RecordDecoding.integer(value(key), as: type, at: path(key)) }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try RecordDecoding.integer(value(key), as: type, at: path(key)) }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try RecordDecoding.integer(value(key), as: type, at: path(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoding.unbox(value(key), as: type, at: path(key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    /// The decoder of `super`; null when absent, as in `JSONDecoder`.
    func superDecoder() throws -> any Decoder {
        RecordDecoding(value: fields[RecordCodingKey.super.stringValue] ?? .null, codingPath: codingPath + [RecordCodingKey.super],
                       userInfo: decoding.sendableUserInfo)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        RecordDecoding(value: fields[key.stringValue] ?? .null, codingPath: path(key), userInfo: decoding.sendableUserInfo)
    }

    private func child(_ key: Key) throws -> RecordDecoding {
        RecordDecoding(value: try value(key), codingPath: path(key), userInfo: decoding.sendableUserInfo)
    }
}

/// Reads one array in order; each element's coding path ends in its index.
struct RecordUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoding: RecordDecoding
    let items: [Value]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(decoding: RecordDecoding, items: [Value], codingPath: [any CodingKey]) {
        self.decoding = decoding
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }
    private var path: [any CodingKey] { codingPath + [RecordCodingKey(index: currentIndex)] }

    /// The next element, consumed only by a successful decode (as in `JSONDecoder`).
    private func peek(_ type: Any.Type) throws -> Value {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: path, debugDescription: "the array ends after \(items.count) elements"))
        }
        return items[currentIndex]
    }

    private mutating func next<T>(_ type: T.Type, _ read: (Value, [any CodingKey]) throws -> T) throws -> T {
        let result = try read(peek(type), path)
        currentIndex += 1
        return result
    }

    mutating func decodeNil() throws -> Bool {
        guard case .null = try peek(Never.self) else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type, RecordDecoding.bool) }
    mutating func decode(_ type: String.Type) throws -> String { try next(type, RecordDecoding.string) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try RecordDecoding.floatingPoint($0, as: type, at: $1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try RecordDecoding.floatingPoint($0, as: type, at: $1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try next(type) { try RecordDecoding.integer($0, as: type, at: $1) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoding = self.decoding
        return try next(type) { try decoding.unbox($0, as: type, at: $1) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let userInfo = decoding.sendableUserInfo
        return try next(KeyedDecodingContainer<NestedKey>.self) {
            try RecordDecoding(value: $0, codingPath: $1, userInfo: userInfo).container(keyedBy: type)
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let userInfo = decoding.sendableUserInfo
        return try next((any UnkeyedDecodingContainer).self) { try RecordDecoding(value: $0, codingPath: $1, userInfo: userInfo).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        let userInfo = decoding.sendableUserInfo
        return try next((any Decoder).self) { RecordDecoding(value: $0, codingPath: $1, userInfo: userInfo) }
    }
}

/// Reads the decoder's one value.
struct RecordSingleValueDecodingContainer: SingleValueDecodingContainer {
    let decoding: RecordDecoding
    var codingPath: [any CodingKey] { decoding.codingPath }
    private var value: Value { decoding.value }

    func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try RecordDecoding.bool(value, at: codingPath) }
    func decode(_ type: String.Type) throws -> String { try RecordDecoding.string(value, at: codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try RecordDecoding.floatingPoint(value, as: type, at: codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try RecordDecoding.floatingPoint(value, as: type, at: codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try RecordDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try RecordDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try RecordDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try RecordDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try RecordDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try RecordDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try RecordDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try RecordDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try RecordDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try RecordDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int128.Type) throws -> Int128 { try RecordDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try RecordDecoding.integer(value, as: type, at: codingPath) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoding.unbox(value, as: type, at: codingPath)
    }
}
