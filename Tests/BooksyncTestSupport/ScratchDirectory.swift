import Foundation

/// A scratch directory removed when the last reference to it goes away.
public final class ScratchDirectory {
    public let path: String

    public init() throws {
        let base = FileManager.default.temporaryDirectory.path + "/booksync-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Copies a collection from fixtures/collections into the scratch directory.
    public func copyFixture(_ name: String) throws -> String {
        let destination = path + "/" + name
        try FileManager.default.copyItem(atPath: Fixtures.root + "/collections/" + name, toPath: destination)
        return destination
    }

    public func write(_ relativePath: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + relativePath))
    }

    public func read(_ relativePath: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path + "/" + relativePath)), as: UTF8.self)
    }
}

/// The repository's fixtures/ directory.
public enum Fixtures {
    /// Found from this source file, so tests run from any working directory.
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.path + "/fixtures/collections") { return url.path + "/fixtures" }
        }
        fatalError("fixtures/ not found above \(#filePath)")
    }()
}
