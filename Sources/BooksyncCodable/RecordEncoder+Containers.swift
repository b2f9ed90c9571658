import BooksyncCore

/// Writes one map; every method stores a node under the key's `stringValue`
/// (`Int` keys, as in `[Int: …]`, become their decimal text, as in JSON).
struct RecordKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoding: RecordEncoding
    let map: EncodedMap
    let codingPath: [any CodingKey]

    private func set(_ value: Value, _ key: Key) { map.entries[key.stringValue] = .value(value) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(try RecordEncoding.integer(value, at: codingPath + [key]), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(try RecordEncoding.integer(value, at: codingPath + [key]), key) }
    mutating func encode(_ value: Int128, forKey key: Key) throws { set(try RecordEncoding.integer(value, at: codingPath + [key]), key) }
    mutating func encode(_ value: UInt128, forKey key: Key) throws { set(try RecordEncoding.integer(value, at: codingPath + [key]), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        map.entries[key.stringValue] = try encoding.box(value, at: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let path = codingPath + [key]
        let nested: EncodedMap
        if case .map(let existing)? = map.entries[key.stringValue] {
            nested = existing
        } else {
            nested = EncodedMap(codingPath: path)
            map.entries[key.stringValue] = .map(nested)
        }
        return KeyedEncodingContainer(RecordKeyedEncodingContainer<NestedKey>(encoding: encoding, map: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested: EncodedArray
        if case .array(let existing)? = map.entries[key.stringValue] {
            nested = existing
        } else {
            nested = EncodedArray()
            map.entries[key.stringValue] = .array(nested)
        }
        return RecordUnkeyedEncodingContainer(encoding: encoding, array: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(key: RecordCodingKey.super) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(key: key) }

    /// An encoder whose value lands under `key` once encoding ends.
    private func superEncoder(key: any CodingKey) -> any Encoder {
        let child = encoding.child(at: codingPath + [key])
        map.entries[key.stringValue] = .encoder(child)
        return child
    }
}

/// Appends to one array; the coding path of each element ends in its index.
struct RecordUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoding: RecordEncoding
    let array: EncodedArray
    let codingPath: [any CodingKey]

    var count: Int { array.items.count }
    private var nextPath: [any CodingKey] { codingPath + [RecordCodingKey(index: count)] }
    private func append(_ value: Value) { array.items.append(.value(value)) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(.double(value)) }
    mutating func encode(_ value: Float) throws { append(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { append(.integer(value)) }
    mutating func encode(_ value: UInt) throws { append(try RecordEncoding.integer(value, at: nextPath)) }
    mutating func encode(_ value: UInt8) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { append(try RecordEncoding.integer(value, at: nextPath)) }
    mutating func encode(_ value: Int128) throws { append(try RecordEncoding.integer(value, at: nextPath)) }
    mutating func encode(_ value: UInt128) throws { append(try RecordEncoding.integer(value, at: nextPath)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let node = try encoding.box(value, at: nextPath)
        array.items.append(node)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        let nested = EncodedMap(codingPath: path)
        array.items.append(.map(nested))
        return KeyedEncodingContainer(RecordKeyedEncodingContainer<NestedKey>(encoding: encoding, map: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        let nested = EncodedArray()
        array.items.append(.array(nested))
        return RecordUnkeyedEncodingContainer(encoding: encoding, array: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let child = encoding.child(at: nextPath)
        array.items.append(.encoder(child))
        return child
    }
}

/// Encodes the one value of a single-value container as the encoder's node.
struct RecordSingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoding: RecordEncoding
    var codingPath: [any CodingKey] { encoding.codingPath }

    private func set(_ node: EncodedNode) {
        precondition(encoding.node == nil, "Attempt to encode a value through a single value container when one was already encoded.")
        encoding.node = node
    }
    private func set(_ value: Value) { set(.value(value)) }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(.double(value)) }
    mutating func encode(_ value: Float) throws { set(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { set(.integer(value)) }
    mutating func encode(_ value: UInt) throws { set(try RecordEncoding.integer(value, at: codingPath)) }
    mutating func encode(_ value: UInt8) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { set(try RecordEncoding.integer(value, at: codingPath)) }
    mutating func encode(_ value: Int128) throws { set(try RecordEncoding.integer(value, at: codingPath)) }
    mutating func encode(_ value: UInt128) throws { set(try RecordEncoding.integer(value, at: codingPath)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        set(try encoding.box(value, at: codingPath))
    }
}
