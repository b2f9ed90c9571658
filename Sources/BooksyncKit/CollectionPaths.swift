/// Where everything of one collection directory lives (DESIGN.md §2).
public struct CollectionPaths: Sendable, Equatable {
    /// The collection directory: record files live directly in it.
    public let root: String

    public init(root: String) {
        self.root = root
    }

    public var state: String { root + "/.booksync" }
    public var config: String { state + "/config.json" }
    public var manifest: String { state + "/manifest.json" }
    /// Base copy of every synced record, for three-way merges.
    public var base: String { state + "/base" }
    public var gitignore: String { state + "/.gitignore" }
    public var index: String { state + "/index" }
    public var lock: String { state + "/lock" }
    public var conflicts: String { state + "/conflicts" }
    public var journal: String { state + "/journal" }

    public func recordFile(_ fileName: String) -> String { root + "/" + fileName }
    public func baseFile(_ fileName: String) -> String { base + "/" + fileName }
    /// The remote side of an unresolved conflict.
    public func conflictFile(_ fileName: String) -> String { conflicts + "/" + fileName }

    /// The nearest directory at or above `start` that has `.booksync/`, like git.
    public static func locate(from start: String) -> CollectionPaths? {
        var directory = FileSystem.absolute(start)
        while true {
            if FileSystem.isDirectory(directory + "/.booksync") { return CollectionPaths(root: directory) }
            if directory == "/" { return nil }
            directory = FileSystem.split(directory).directory
        }
    }

    /// Local-only files that `init` lists in `.booksync/.gitignore`.
    static let gitignoreContents = """
        # Local-only state of booksync; config.json, manifest.json and base/ are meant to be committed.
        /index
        /lock
        /conflicts/
        /journal
        .booksync-tmp-*

        """
}
