import Foundation
import BooksyncKit

/// A scratch directory removed when the test ends.
final class ScratchDirectory {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.path + "/booksync-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Copies a collection from fixtures/collections into the scratch directory.
    func copyFixture(_ name: String) throws -> String {
        let destination = path + "/" + name
        try FileManager.default.copyItem(atPath: Fixtures.root + "/collections/" + name, toPath: destination)
        return destination
    }

    func write(_ relativePath: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + relativePath))
    }

    func read(_ relativePath: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path + "/" + relativePath)), as: UTF8.self)
    }
}

enum Fixtures {
    /// The repository's fixtures/ directory, found from this source file.
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.path + "/fixtures/collections") { return url.path + "/fixtures" }
        }
        fatalError("fixtures/ not found above \(#filePath)")
    }()
}

/// Sets a file's modification time, to build stat-cache scenarios deterministically.
func setModificationTime(_ path: String, secondsAgo: Double) throws {
    let date = Date(timeIntervalSinceNow: -secondsAgo)
    try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
}
