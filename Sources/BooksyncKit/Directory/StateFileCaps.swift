import BooksyncCore

/// The small state files a clone commits, config.json and remotes.json,
/// are read whole by every command, so each is read only up to a size of its
/// own (the manual's CollectionFormat article): a planted file of any size then costs a
/// command at most that many bytes, and is refused with a sentence that
/// names the file and the size. The manifest has no such cap: a million
/// records make a large one legitimately, and it is read block by block.
enum StateFileCaps {
    /// The bytes of the state file at `path`, read only if it has at most `limit`.
    /// - Parameter holds: What fits in `limit`, for the sentence (`room for …`).
    /// - Returns: nil when there is no file.
    /// - Throws: `.damagedStateFile` naming the file and `limit` when it is
    ///   larger; `.io` for any other failure (a link is refused as always).
    static func read(_ path: String, limit: Int, holds: String) throws(BooksyncError) -> [UInt8]? {
        do {
            return try FileSystem.readFile(path, limit: limit)
        } catch {
            if error.isNotFound { return nil }
            guard error.isTooLarge else { throw .io(error) }
            throw .damagedStateFile(path: path, StateFileError(message: "the file is larger than \(size(limit)), the most booksync reads of it "
                + "(\(holds)); if it came with a clone, check what it holds, then shorten it or restore it with git"))
        }
    }

    /// `4 MiB`, `64 KiB`: the caps are whole numbers of either.
    static func size(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
    }
}
