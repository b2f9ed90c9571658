import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A scratch directory removed when the last reference to it goes away.
package final class ScratchDirectory {
    package let path: String

    /// A new, empty folder in the temporary directory (`TMPDIR`), made by
    /// `mkdtemp`: unique, and short, because a watcher's socket inside it
    /// must stay under the 104 bytes a socket path may have (under `/tmp`
    /// with a UUID in the folder's name it took 102).
    package init() throws {
        var template = Array((FileManager.default.temporaryDirectory.path + "/booksync-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) != nil }) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Copies a collection from fixtures/collections into the scratch directory.
    package func copyFixture(_ name: String) throws -> String {
        let destination = path + "/" + name
        try FileManager.default.copyItem(atPath: Fixtures.root + "/collections/" + name, toPath: destination)
        return destination
    }

    package func write(_ relativePath: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + relativePath))
    }

    package func read(_ relativePath: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path + "/" + relativePath)), as: UTF8.self)
    }
}

/// The repository's fixtures/ directory.
package enum Fixtures {
    /// Found from this source file, so tests run from any working directory.
    package static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.path + "/fixtures/collections") { return url.path + "/fixtures" }
        }
        fatalError("fixtures/ not found above \(#filePath)")
    }()
}
