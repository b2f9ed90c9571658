import BooksyncCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A record file found in a subcollection folder, with the open folder it is in.
struct SubcollectionFile {
    /// `dune/reviews/r1.json`: the index key and what messages show.
    let relativePath: String
    let id: RecordID
    /// The open folder (`dune/reviews`) and the file's name in it.
    let directory: Int32
    let name: String
}

/// Finds the record files of the configured subcollections (the manual's CollectionFormat article):
/// `dune/reviews/r1.json` for `"subcollections": ["reviews"]`, one level
/// deeper (`dune/reviews/r1/likes/l1.json`) only for `reviews/likes`.
///
/// The walk goes exactly as deep as the config says, never further, and
/// never through a link: each folder is opened with `O_NOFOLLOW |
/// O_DIRECTORY` relative to the one above it, so a link planted anywhere on
/// the way is reported (when it stands where a configured subcollection
/// folder belongs) or skipped (a document folder, which may be anything),
/// never entered. Folders are opened relative to their parent's descriptor,
/// so a link swapped in after the check cannot redirect the walk either.
/// Files are handed on in batches; a batch's folders are closed after it,
/// so the number of open descriptors stays bounded however many parents.
struct SubcollectionWalker {
    let root: String
    let rootDirectory: Int32
    let subcollections: Subcollections
    let batchSize: Int
    /// Entries that cannot be records: names that do not decode, links and
    /// files where a subcollection folder belongs.
    private(set) var unusable: [UnusableFile] = []
    /// Folders the walk could not enter where a document's folder or a
    /// configured subcollection folder belongs (a link, a file, a FIFO, an
    /// unreadable folder), by path relative to the collection directory,
    /// with the reason. Records below them were not read, so the scan must
    /// not take them for deleted (`blockingFolder(of:)`).
    private(set) var blocked: [String: String] = [:]
    /// Subcollection folders holding booksync's own temporary files
    /// (`.booksync-tmp-…`, `.booksync-swap-…`), relative: what a killed pull
    /// or store save left there, for the next writing command to clean up.
    private(set) var foldersWithTemporaries: [String] = []
    private var pending: [SubcollectionFile] = []
    private var openFolders: [Int32] = []
    /// Folders held open at most before the batch is handed on early.
    static let maximumOpenFolders = 256

    init(root: String, rootDirectory: Int32, subcollections: Subcollections, batchSize: Int) {
        self.root = root
        self.rootDirectory = rootDirectory
        self.subcollections = subcollections
        self.batchSize = batchSize
    }

    /// Walks from the collection directory's entries that are not record
    /// files (`documentFolders`), handing each batch of files to `examine`.
    mutating func walk(documentFolders: [String], examine: ([SubcollectionFile]) -> Void) {
        for name in documentFolders.sorted(by: CanonicalJSON.utf8Less) {
            visitDocumentFolder(name, in: rootDirectory, relative: "", parent: nil, prefix: [], examine: examine)
        }
        flush(examine)
    }

    /// A folder that may be a document's (`dune`), in a directory at `relative`.
    private mutating func visitDocumentFolder(_ name: String, in directory: Int32, relative: String, parent: RecordID?, prefix: [String],
                                              examine: ([SubcollectionFile]) -> Void) {
        let path = relative.isEmpty ? name : relative + "/" + name
        // Anything but a real folder (a file, a link) is not entered and not
        // reported: it may be anything (a README). It is remembered when it is
        // named like a document's folder, in case base records lie below it.
        let stat: FileStat
        do {
            stat = try FileSystem.stat(directory: directory, name: name)
        } catch {
            if !error.isNotFound { block(path, named: name, error.diagnostic.message) }
            return
        }
        guard stat.kind == .directory else {
            block(path, named: name, FileSystemError.folderRefusal(stat.kind))
            return
        }
        let folder: Int32
        do {
            guard let opened = try FileSystem.openFolder(in: directory, name: name, path: root + "/" + path) else { return }
            folder = opened
        } catch {
            block(path, named: name, error.unsafeKind.map(FileSystemError.folderRefusal) ?? error.diagnostic.message)
            return
        }
        defer { close(folder) }
        var collections = subcollections.collectionIDs(after: prefix)
        // Many configured ids (a discovered config may have hundreds): one
        // listing of the folder instead of a lookup per id.
        if collections.count > Self.idsLookedUpOneByOne, let names = try? FileSystem.listDirectory(descriptor: folder, path: root + "/" + path) {
            collections = subcollections.collectionIDs(after: prefix, among: names)
        }
        var documentID: RecordID?
        for collection in collections {
            let folderName = RecordID.folderName(ofCollection: collection)
            let collectionPath = path + "/" + folderName
            let opened: Int32?
            do {
                opened = try FileSystem.openFolder(in: folder, name: folderName, path: root + "/" + collectionPath)
            } catch {
                let message = error.unsafeKind.map(FileSystemError.folderRefusal) ?? error.diagnostic.message
                unusable.append(UnusableFile(fileName: collectionPath, message: message))
                blocked[collectionPath] = message
                continue
            }
            guard let collectionFolder = opened else { continue }
            if documentID == nil {
                do {
                    let decoded = try RecordID.fromFolderName(name)
                    documentID = parent.map { $0.child(collection: prefix.last!, document: decoded) } ?? decoded
                } catch {
                    close(collectionFolder)
                    unusable.append(UnusableFile(fileName: path, message: error.message))
                    return
                }
            }
            visitCollectionFolder(collectionFolder, relative: collectionPath, parent: documentID!, prefix: prefix + [collection], examine: examine)
        }
    }

    /// Up to this many collection ids, a document folder is probed for each.
    static let idsLookedUpOneByOne = 8

    /// A configured subcollection's folder (`dune/reviews`), open; kept open
    /// until its files have been examined.
    private mutating func visitCollectionFolder(_ folder: Int32, relative: String, parent: RecordID, prefix: [String],
                                                examine: ([SubcollectionFile]) -> Void) {
        let names: [String]
        do {
            names = try FileSystem.listDirectory(descriptor: folder, path: root + "/" + relative)
        } catch {
            close(folder)
            unusable.append(UnusableFile(fileName: relative, message: error.diagnostic.message))
            blocked[relative] = error.diagnostic.message
            return
        }
        let path = prefix.joined(separator: "/")
        let holdsRecords = subcollections.entry(forPath: path) != nil
        let goesDeeper = !subcollections.collectionIDs(after: prefix).isEmpty
        var deeper: [String] = []
        if names.contains(where: { $0.hasPrefix(FileSystem.temporaryMarker) || $0.hasPrefix(FileSystem.swapMarker) }) {
            foldersWithTemporaries.append(relative)
        }
        for name in names.sorted(by: CanonicalJSON.utf8Less) {
            do {
                guard let document = try RecordID.fromFileName(name) else {
                    if goesDeeper, !name.hasPrefix(".") { deeper.append(name) }
                    continue
                }
                guard holdsRecords else { continue }
                let file = relative + "/" + name
                // Written by an older booksync, or by hand: too long to be a record now (as a remote document would be).
                guard file.utf8.count <= RecordID.maximumPathBytes else {
                    unusable.append(UnusableFile(fileName: file, message: RecordIDError.pathTooLong(file, file.utf8.count).message))
                    continue
                }
                pending.append(SubcollectionFile(relativePath: file, id: parent.child(collection: prefix.last!, document: document),
                                                 directory: folder, name: name))
            } catch {
                if holdsRecords { unusable.append(UnusableFile(fileName: relative + "/" + name, message: error.message)) }
            }
        }
        // Deeper folders are walked while this one is open; a batch handed on
        // meanwhile closes only folders already done, never this one or those above it.
        for name in deeper {
            visitDocumentFolder(name, in: folder, relative: relative, parent: parent, prefix: prefix, examine: examine)
        }
        openFolders.append(folder)
        if pending.count >= batchSize || openFolders.count >= Self.maximumOpenFolders { flush(examine) }
    }

    /// Folders named like record files (`cfg.json/`) are where a booksync from
    /// before `RecordID.documentFolderName(stem:)` kept the subcollections of
    /// a document whose id ends in `.json` (`cfg.json`, whose folder is now
    /// `cfg%2Ejson/`). The records synced there are not read from the old
    /// folder, but they must not be taken for deleted either: the new folder,
    /// if absent, counts as blocked, with a sentence that says how to move it
    /// (`mv --`: the folder of an id such as `-cfg.json` starts with `-`).
    mutating func blockLegacyFolders(_ names: [String]) {
        for name in names {
            guard let id = try? RecordID.fromFileName(name + ".json") else { continue }
            let folder = RecordID.documentFolderName(stem: id.encodedName)
            guard folder != name, blocked[folder] == nil,
                  (try? FileSystem.stat(directory: rootDirectory, name: folder))?.kind != .directory else { continue }
            blocked[folder] = "is missing, and \(name)/ holds what an earlier booksync kept here; rename that folder: mv -- '\(name)' '\(folder)'"
        }
    }

    /// Remembers a document folder the walk could not enter, if `name` is a
    /// document's folder name at all (only those can hold base records).
    private mutating func block(_ path: String, named name: String, _ message: String) {
        if (try? RecordID.fromFolderName(name)) != nil { blocked[path] = message }
    }

    /// The folder on the way to the file of `id` that the walk could not
    /// enter, and why; nil when every folder on the way was entered or absent.
    func blockingFolder(of id: RecordID) -> (path: String, reason: String)? {
        var path = ""
        for folder in id.encodedName.split(separator: "/").dropLast() {
            path += path.isEmpty ? String(folder) : "/" + folder
            if let reason = blocked[path] { return (path, reason) }
        }
        return nil
    }

    /// Hands the pending files on, then closes the folders they were in.
    private mutating func flush(_ examine: ([SubcollectionFile]) -> Void) {
        if !pending.isEmpty { examine(pending) }
        pending.removeAll(keepingCapacity: true)
        for fd in openFolders { close(fd) }
        openFolders.removeAll(keepingCapacity: true)
    }
}
