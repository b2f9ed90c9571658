/// A syntax error in a JSON text, with the position an editor can jump to.
package struct JSONSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Where the problem is, as an editor counts lines and columns.
    package let position: SourcePosition
    /// What was expected or found, e.g. `expected ',' or '}'`.
    package let message: String
    /// An error at `position`.
    package init(position: SourcePosition, message: String) {
        self.position = position
        self.message = message
    }
    /// `7:12: expected ',' or '}'`; callers prefix the file name.
    package var description: String { "\(position): \(message)" }
}

/// A strict RFC 8259 parser for record files.
///
/// It differs from Foundation's on purpose: it keeps integers (int64) and doubles
/// apart, rejects duplicate keys, reports `line:column` for every error, decodes
/// the tagged Firestore values (`{"$timestamp": …}`), and bounds nesting so hostile
/// input cannot overflow the stack. A leading UTF-8 byte order mark is ignored,
/// as RFC 8259 §8.1 allows; `fmt` removes it.
package struct JSONParser {
    /// Deeper documents are rejected; Firestore itself allows 20 levels.
    package static let maximumDepth = 256
    /// `parseRecord` lists at most this many value errors of one file.
    package static let maximumValueErrors = 100

    /// Parses a whole JSON text into a value. With `decodeTags: false` objects
    /// with a single `$` key stay maps: for wire formats, where such keys are
    /// ordinary field names.
    package static func parse(_ bytes: some Collection<UInt8>, decodeTags: Bool = true) throws(JSONSyntaxError) -> Value {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> Value in
            var parser = JSONGrammar(bytes: buffer)
            parser.decodeTags = decodeTags
            return try parser.parseDocument()
        }
    }

    /// One JSON value (tags decoded) that starts at byte `offset` of a longer
    /// text, and the offset just past it: a value inside other syntax (a
    /// scope's `rating >= 4.5`). Errors carry positions in the whole text.
    package static func parseValue(in bytes: [UInt8], at offset: Int) throws(JSONSyntaxError) -> (value: Value, end: Int) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> (value: Value, end: Int) in
            var parser = JSONGrammar(bytes: buffer)
            parser.index = offset
            let value = try parser.parseValue()
            return (value, parser.index)
        }
    }

    /// Parses a whole JSON text into a `JSONTree`: members in document order,
    /// keys compared by their bytes. For state files keyed by record id, where
    /// two ids that differ only by Unicode normalization are two records
    /// (`Value` maps would take them for one key). Tags are not decoded.
    package static func parseTree(_ bytes: some Collection<UInt8>) throws(JSONSyntaxError) -> JSONTree {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> JSONTree in
            var parser = JSONGrammar(bytes: buffer)
            parser.skipBOM()
            try parser.skipWhitespaceRejectingComments()
            guard parser.index < buffer.count else { throw parser.error("the file is empty; expected a JSON object") }
            let tree = try parser.parseTree()
            try parser.skipWhitespaceRejectingComments()
            if parser.index < buffer.count {
                throw parser.error("unexpected '\(parser.describe(at: parser.index))' after the JSON value; a file holds exactly one value")
            }
            return tree
        }
    }

    /// Parses a JSON text whose top level must be an object (a record file, config, manifest).
    package static func parseObject(_ bytes: some Collection<UInt8>) throws(JSONSyntaxError) -> Fields {
        try parseTopLevelObject(bytes, collectingValueErrors: false).fields
    }

    /// A record file parsed to the end although some of its values are wrong.
    package struct ParsedRecord: Sendable, Equatable {
        /// The fields, with null in place of each value that could not be read.
        package let fields: Fields
        /// Errors in text the grammar accepts (a bad tagged value, a number
        /// out of range, a duplicate key), in document order.
        package let valueErrors: [JSONSyntaxError]
        /// Top-level fields whose own value is one of those errors: their type
        /// is unknown, so a schema check of them would only repeat the error.
        package let unreadableFields: Set<String>
    }

    /// Parses a record file like `parseObject`, but goes on after a value
    /// error (see `ParsedRecord`) so that `validate` can report every problem
    /// of a file. A syntax error still stops at once: after it the parser
    /// cannot know what the rest of the text means.
    package static func parseRecord(_ bytes: some Collection<UInt8>) throws(JSONSyntaxError) -> ParsedRecord {
        try parseTopLevelObject(bytes, collectingValueErrors: true)
    }

    private static func parseTopLevelObject(_ bytes: some Collection<UInt8>, collectingValueErrors: Bool) throws(JSONSyntaxError) -> ParsedRecord {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> ParsedRecord in
            var parser = JSONGrammar(bytes: buffer)
            if collectingValueErrors { parser.valueErrors = [] }
            parser.skipBOM()
            try parser.skipWhitespaceRejectingComments()
            guard parser.peek() == UInt8(ascii: "{") else {
                if parser.index >= buffer.count { throw parser.error("the file is empty; a record is a JSON object") }
                throw parser.error("expected '{': the top level must be a JSON object")
            }
            guard case .map(let fields) = try parser.parseDocument() else {
                // A lone tagged value (`{"$timestamp": "x"}`): its own error says more.
                if let first = parser.valueErrors?.first { throw first }
                throw parser.error("expected a JSON object")
            }
            return ParsedRecord(fields: fields, valueErrors: parser.valueErrors ?? [], unreadableFields: parser.unreadableFields)
        }
    }
}
