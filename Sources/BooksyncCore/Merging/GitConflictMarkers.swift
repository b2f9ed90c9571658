/// Recognizes a file that an unfinished git merge left with conflict markers,
/// so that a state file in that condition gets advice about the merge instead
/// of a bare JSON syntax error.
package enum GitConflictMarkers {
    /// True when some line starts with `<<<<<<< ` (or is exactly `<<<<<<<`)
    /// and a later one with `>>>>>>>`: the shape git's line merge writes.
    /// JSON booksync writes never has a line starting with `<` or `>`.
    package static func found(in bytes: [UInt8]) -> Bool {
        var sawOpening = false
        var lineStart = 0
        while lineStart < bytes.count {
            let end = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.count
            let line = bytes[lineStart..<end]
            if !sawOpening, isMarker(line, 0x3C) {
                sawOpening = true
            } else if sawOpening, isMarker(line, 0x3E) {
                return true
            }
            lineStart = end + 1
        }
        return false
    }

    /// Seven `marker` bytes, then the end of the line or a space.
    static func isMarker(_ line: ArraySlice<UInt8>, _ marker: UInt8) -> Bool {
        guard line.count >= 7, line.prefix(7).allSatisfy({ $0 == marker }) else { return false }
        let rest = line.dropFirst(7)
        return rest.isEmpty || rest.first == 0x20 || rest.first == 0x0D
    }
}
