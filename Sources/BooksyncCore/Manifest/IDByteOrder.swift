/// The order of record ids as bytes (their UTF-8), which is `RecordID`'s
/// order and the manifest file's: the plain loops the packed id lists
/// (`PackedRecordIDs`) and the manifest's entries (`ManifestEntries`) sort,
/// search and compare with.
///
/// Concrete on purpose: a generic comparison (`lexicographicallyPrecedes`,
/// a function over `some Collection`) runs unspecialized in a debug build,
/// where sorting 30,000 ids for a clean `status` took seconds.
enum IDByteOrder {
    /// Whether `a` sorts before `b`: the first differing byte decides, and
    /// a prefix sorts before what it is a prefix of.
    static func less(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let common = min(a.count, b.count)
        var k = 0
        while k < common {
            let x = a[k], y = b[k]
            if x != y { return x < y }
            k &+= 1
        }
        return a.count < b.count
    }

    /// Whether `a` and `b` hold the same bytes (the generic `elementsEqual`
    /// took a tenth of a scan's time).
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var k = 0
        while k < a.count {
            if a[k] != b[k] { return false }
            k &+= 1
        }
        return true
    }

    /// `less` for slices of a buffer.
    static func less(_ a: Slice<UnsafeBufferPointer<UInt8>>, _ b: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        less(UnsafeBufferPointer(rebasing: a), UnsafeBufferPointer(rebasing: b))
    }
}
