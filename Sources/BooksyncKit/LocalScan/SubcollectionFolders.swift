import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folders that hold subcollection records (`dune/reviews/r1.json`):
/// reached without ever following a symbolic link (the manual's Safety article).
///
/// `O_NOFOLLOW` only protects the last component of a path, so a record file
/// of a path id is only touched after every folder on its way (`dune`,
/// `dune/reviews`) has been checked with `lstat` to be a real folder: a link
/// there is refused with an error naming it, and pull creates the missing
/// folders itself (`mkdir`, then the same check, so a link planted in
/// between is found). Only folders inside the collection directory are
/// involved: a path id's segments are valid ids, never `.` or `..`.
extension CollectionPaths {
    /// The path of the record file of `id`, after checking that each folder
    /// on the way is a real folder (or absent, then the file is absent too).
    /// - Throws: `FileSystemError` naming the first folder that is a link or a file.
    package func recordFile(_ id: RecordID) throws(FileSystemError) -> String {
        if !id.isTopLevel { try requireRealFolders(id, create: false) }
        return root + "/" + id.fileName
    }

    /// Like `recordFile(_:)`, creating the missing folders (mode 0755) for a write.
    /// - Throws: `FileSystemError` naming the folder that is a link, a file,
    ///   or cannot be created.
    package func recordFileCreatingFolders(_ id: RecordID) throws(FileSystemError) -> String {
        if !id.isTopLevel { try requireRealFolders(id, create: true) }
        return root + "/" + id.fileName
    }

    /// A flat file name for a record's own state file (`.booksync/conflicts/`):
    /// the whole id encoded as one name, its `/` as `%2F`, so state
    /// directories stay flat and cannot hold folders to plant links in.
    package func stateFileName(_ id: RecordID) -> String { id.stateFileName }

    private func requireRealFolders(_ id: RecordID, create: Bool) throws(FileSystemError) {
        var path = root
        for folder in id.encodedName.split(separator: "/").dropLast() {
            path += "/" + folder
            var s = CStat()
            if lstat(path, &s) != 0 {
                let code = errno
                guard code == ENOENT else { throw FileSystemError(path: path, operation: "read folder status", code: code) }
                guard create else { return }  // absent: so is everything below it
                if mkdir(path, 0o755) != 0, errno != EEXIST { throw FileSystemError(path: path, operation: "create folder", code: errno) }
                guard lstat(path, &s) == 0 else { throw FileSystemError(path: path, operation: "read folder status", code: errno) }
            }
            let kind = FileKind(mode: s.st_mode)
            guard kind == .directory else { throw .notRegular(path, kind, operation: FileSystemError.folderOperation) }
        }
    }
}

extension RecordID {
    /// The name of this record's own state files (`.booksync/conflicts/`):
    /// its file name, or for a path id the whole id as one flat name.
    package var stateFileName: String { isTopLevel ? fileName : RecordID.flatFileName(self) }

    /// The whole id as one file name (`dune%2Freviews%2Fr1.json`). An id
    /// whose name would pass 255 bytes is named by its SHA-256 instead
    /// (`%sha256-<hex>.json`): a `%` not followed by two hex digits is never
    /// produced by the encoding, so no other id's state file can have it.
    static func flatFileName(_ id: RecordID) -> String {
        let flat = PercentEncoding.encode(Array(id.rawValue.utf8)) { b, offset in
            RecordID.isPlainByte(b) && !(offset == 0 && b == 0x2E)
        } + ".json"
        guard flat.utf8.count > 255 else { return flat }
        return "%sha256-" + Hex.string(SHA256.hash(Array(id.rawValue.utf8)), .lower) + ".json"
    }
}

extension FileSystemError {
    /// The operation of refusals of a subcollection folder (a link or a file
    /// where `dune/` or `dune/reviews/` belongs), which get their own sentence.
    package static let folderOperation = "use subcollection folder"

    /// The sentence for an entry that is not a real folder where a
    /// subcollection folder belongs.
    static func folderRefusal(_ kind: FileKind) -> String {
        switch kind {
        case .symbolicLink:
            "is a symbolic link where a folder belongs (subcollection records live below it); booksync never follows links inside a collection (replace it with a real folder)"
        default:
            "is \(kind.noun) where a folder belongs (subcollection records live below it); booksync leaves it alone (move it away so booksync can make the folder)"
        }
    }
}

extension FileSystem {
    /// Opens the folder `name` inside an open directory for listing and
    /// `stat(directory:name:)`, never through a link: nil when it is absent,
    /// the refusal when it is a link or not a folder.
    static func openFolder(in directory: Int32, name: String, path: String) throws(FileSystemError) -> Int32? {
        let fd = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd >= 0 { return fd }
        let code = errno
        if code == ENOENT { return nil }
        if let s = try? stat(directory: directory, name: name), s.kind != .directory {
            throw .notRegular(path, s.kind, operation: FileSystemError.folderOperation)
        }
        throw FileSystemError(path: path, operation: "open folder", code: code)
    }

    /// The names in an open directory (not `.`, `..`); the descriptor stays open.
    static func listDirectory(descriptor: Int32, path: String) throws(FileSystemError) -> [String] {
        try DirectoryLister(descriptor: descriptor, path: path).all()
    }

    /// The contents of the regular file `name` inside an open directory, with
    /// the errors of `readFile(_:)` naming `path`.
    static func readFile(directory: Int32, name: String, path: String) throws(FileSystemError) -> [UInt8] {
        let fd = openat(directory, name, readFlags)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP || code == EMLINK || code == ENXIO || code == EOPNOTSUPP || code == EISDIR,
               let kind = try? stat(directory: directory, name: name).kind, kind != .regular {
                throw .notRegular(path, kind, operation: "read")
            }
            throw FileSystemError(path: path, operation: "open", code: code)
        }
        defer { close(fd) }
        return try readRegular(fd, path: path)
    }
}
