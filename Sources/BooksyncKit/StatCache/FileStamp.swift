/// What the stat cache remembers of a state file or folder to tell later
/// whether it changed: `size:mtime:ctime:inode`, spelled as the index writes it.
///
/// `unknown` (written `-`) vouches for nothing: the file changed too recently
/// to be told apart from a later change in the same clock tick, or the scan
/// saw files that are not clean cached records. Check `isKnown` before
/// trusting that two stamps are equal.
package struct FileStamp: Equatable, Sendable {
    /// The stamp as the index file spells it.
    package let text: String

    /// No stamp.
    package static let unknown = FileStamp(text: "-")

    /// A stamp as the index file spells it; `-` is `unknown`.
    package init(text: String) { self.text = text }

    /// The stamp of `stat`.
    package init(_ stat: FileStat) {
        text = "\(stat.size):\(stat.mtimeNanoseconds):\(stat.ctimeNanoseconds):\(stat.inode)"
    }

    /// False for `unknown`.
    package var isKnown: Bool { self != .unknown }

    /// True when `bytes` (a field of the index) spell this stamp.
    package func isSpelled(by bytes: UnsafeBufferPointer<UInt8>) -> Bool { text.utf8.elementsEqual(bytes) }
}
