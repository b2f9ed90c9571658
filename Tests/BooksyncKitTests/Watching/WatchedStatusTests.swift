#if os(Linux)
import Foundation
import Testing
import BooksyncCore
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit

/// `status --offline` answered from a watcher against the full scan: after
/// random bursts of creates, edits, invalid saves, renames, deletes,
/// `touch -r`, editors' atomic saves, unusable names, folders and links
/// named like records, replaced subcollection folders, a rewritten manifest
/// and real queue overflows (thousands of operations), the watched status
/// says exactly what the full scan says, and the watcher was actually used.
@Suite(.hangGuard) struct WatchedStatusTests {
    /// A collection with a base of `ids` (their first content), a watcher
    /// that drains only when asked, and its socket.
    struct Setup {
        let scratch: ScratchDirectory
        let collection: CollectionDirectory
        let watch: FolderWatch
        let server: WatchServer
        let socket: WatcherSocket
        var root: String { collection.paths.root }
    }

    static func book(_ id: String, _ title: String) -> String {
        #"{"id": "\#(id.split(separator: "/").last!)", "title": "\#(title)", "author": "A", "genre": "sf"}"#
    }

    static func setUp(subcollections: [String], ids: [String]) throws -> Setup {
        let scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path + "/books", withIntermediateDirectories: true)
        let collection = try CollectionDirectory.initialize(
            at: scratch.path + "/books",
            config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books"),
                                     subcollections: try Subcollections.parse(paths: subcollections, requirements: [])))
        var entries: [RecordID: BaseEntry] = [:]
        for (i, path) in ids.enumerated() {
            let id = try RecordID(path: path, subcollections: collection.rules.subcollections)
            let text = book(path, "first")
            try write(collection.paths.root + "/" + id.fileName, text)
            guard case .success(let record) = collection.rules.load(Array(text.utf8), id: id) else { throw CocoaError(.fileReadCorruptFile) }
            entries[id] = BaseEntry(hash: record.hash, revision: "2024-01-01T00:00:00.\(100_000 + i)Z")
        }
        try FileSystem.writeAtomically(Manifest(entries: entries).encoded(), to: collection.paths.manifest)
        let watch = FolderWatch(root: collection.paths.root, subcollections: collection.rules.subcollections)
        let socket = try WatcherSocket.forCollection(root: collection.paths.root, environment: [WatcherSocket.folderVariable: scratch.path + "/w"],
                                                     create: true)
        // Drained only when a status asks, so a burst can overflow the kernel's queue.
        let server = try WatchServer(socket: socket, layout: watch.layout, answer: { watch.ask(since: $0) }, tick: {})
        return Setup(scratch: scratch, collection: collection, watch: watch, server: server, socket: socket)
    }

    static func write(_ path: String, _ text: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// One random change; `paths` are the record paths to pick from.
    static func mutate(_ setup: Setup, paths: [String], random: inout SplitMix64, serial: inout Int) throws {
        let fm = FileManager.default
        let root = setup.root
        let rules = setup.collection.rules
        let path = paths[random.below(paths.count)]
        let file = root + "/" + (try RecordID(path: path, subcollections: rules.subcollections)).fileName
        serial += 1
        // A file where a subcollection folder belongs makes every status scan while it is there: it goes soon.
        for name in ["zeta0", "zeta1", "bad%zz"] where fm.fileExists(atPath: root + "/" + name) && random.below(4) == 0 {
            try fm.removeItem(atPath: root + "/" + name)
        }
        switch random.below(16) {
        case 0, 1:  // a new or edited valid record
            try write(file, book(path, "t\(random.below(3))"))
        case 2:  // back to its base content
            try write(file, book(path, "first"))
        case 3:  // a save caught half-written
            try write(file, #"{"id": "x", "title": "#)
        case 4:
            try? fm.removeItem(atPath: file)
        case 5:  // a rename onto another record's name
            let other = root + "/" + (try RecordID(path: paths[random.below(paths.count)], subcollections: rules.subcollections)).fileName
            if fm.fileExists(atPath: file), fm.fileExists(atPath: (other as NSString).deletingLastPathComponent) { _ = rename(file, other) }
        case 6:  // touch -r: new bytes of the same size, the old times put back
            if let attributes = try? fm.attributesOfItem(atPath: file), let time = attributes[.modificationDate] as? Date {
                let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
                try write(file, text.contains("t1") ? text.replacingOccurrences(of: "t1", with: "t2") : text.replacingOccurrences(of: "t2", with: "t1"))
                try fm.setAttributes([.modificationDate: time], ofItemAtPath: file)
            }
        case 7:  // an editor's save: a temporary file renamed over the record
            let temporary = (file as NSString).deletingLastPathComponent + "/.save\(serial).tmp"
            if fm.fileExists(atPath: (file as NSString).deletingLastPathComponent) {
                try write(temporary, book(path, "t\(random.below(3))"))
                _ = rename(temporary, file)
            }
        case 8:  // a name no record can have, made or removed
            let name = root + "/bad name \(random.below(3)).json"
            if fm.fileExists(atPath: name) { try fm.removeItem(atPath: name) } else { try write(name, "{}") }
        case 9:  // a folder named like a record file
            let name = root + "/folder\(random.below(2)).json"
            if fm.fileExists(atPath: name) { try fm.removeItem(atPath: name) } else { try fm.createDirectory(atPath: name, withIntermediateDirectories: false) }
        case 10:  // a link named like a record file
            let name = root + "/link\(random.below(2)).json"
            if (try? fm.destinationOfSymbolicLink(atPath: name)) != nil { try fm.removeItem(atPath: name) } else {
                try fm.createSymbolicLink(atPath: name, withDestinationPath: "/etc/hostname")
            }
        case 11:  // a subcollection folder replaced, or a document folder removed
            guard !rules.subcollections.isEmpty else { return }
            let folder = root + "/" + ["dune", "emma"][random.below(2)]
            switch random.below(4) {
            case 0:
                try? fm.moveItem(atPath: folder + "/my%20reviews", toPath: folder + "/reviews.old\(serial)")
                try write(folder + "/my%20reviews/r1.json", book("r1", "moved"))
            case 1:
                try? fm.removeItem(atPath: folder)
            case 2:  // a document folder whose name decodes to no id, holding a review
                let bad = root + "/bad%zz"
                if fm.fileExists(atPath: bad) { try fm.removeItem(atPath: bad) } else { try write(bad + "/my%20reviews/r9.json", book("r9", "x")) }
            default:  // a file where a subcollection folder belongs, in a new document folder
                let zeta = root + "/zeta\(random.below(2))"
                if fm.fileExists(atPath: zeta) { try fm.removeItem(atPath: zeta) } else if random.below(4) == 0 {
                    try fm.createDirectory(atPath: zeta, withIntermediateDirectories: false)
                    try write(zeta + "/my%20reviews", "not a folder")
                }
            }
        case 13:  // a hard link outside the collection or inside it under a name no record has, and a write through it
            let outside = random.below(2) == 0 ? setup.scratch.path + "/outside-\(random.below(3))" : root + "/alias-\(random.below(2)).txt"
            // A link whose record file was replaced or deleted since links nothing in the collection: made again.
            if (try? FileSystem.stat(outside))?.linkCount == 1 { try fm.removeItem(atPath: outside) }
            if !fm.fileExists(atPath: outside), (try? FileSystem.stat(file))?.kind == .regular {
                _ = link(file, outside)
            } else if fm.fileExists(atPath: outside) {
                // Written in place through the other name: the collection's folder sees nothing.
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: outside))
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: Data(book(path, "t\(random.below(3))").utf8))
                try handle.close()
            }
        case 14:  // a name that is not UTF-8, made or removed
            var name = Array((root + "/bad").utf8) + [0xFE] + Array(".json".utf8) + [0]
            name.withUnsafeMutableBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { path in
                    // Made now and then, removed soon: while it is there, every status scans.
                    if access(path.baseAddress!, F_OK) == 0 { unlink(path.baseAddress!) } else if random.below(4) == 0 { close(creat(path.baseAddress!, 0o644)) }
                }
            }
        case 12:  // the manifest rewritten with the same entries (a new stamp; for 100 ms no stamp at all)
            if random.below(40) == 0 {
                let bytes = try FileSystem.readFile(setup.collection.paths.manifest)
                try FileSystem.writeAtomically(bytes, to: setup.collection.paths.manifest)
            }
        default:  // a burst of more events than the kernel queues, while nobody drains
            if random.below(20) == 0 {
                for i in 0..<17_000 { _ = utimes(root + (i % 2 == 0 ? "/.a" : "/.b"), nil) == 0 || fm.createFile(atPath: root + (i % 2 == 0 ? "/.a" : "/.b"), contents: nil) }
            }
        }
    }

    @Test(arguments: [false, true])
    func theWatchedStatusIsTheFullScans(subcollections: Bool) async throws {
        let top = (0..<12).map { "b\($0)" } + ["dune", "emma"]
        // A subcollection whose folder name is encoded (`my%20reviews`).
        let nested = subcollections ? ["dune/my reviews/r1", "dune/my reviews/r2", "emma/my reviews/r1", "emma/my reviews/r3"] : []
        let setup = try Self.setUp(subcollections: subcollections ? ["my reviews"] : [], ids: Array(top.prefix(8)) + nested.prefix(2))
        defer { setup.server.stop() }
        let paths = top + nested
        var random = SplitMix64(seed: subcollections ? 0x5CA9 : 0xC1EA)
        var serial = 0
        var operations = 0
        var answered = 0
        var scanned = 0
        for round in 0..<350 {
            for _ in 0..<(1 + random.below(9)) {
                try Self.mutate(setup, paths: paths, random: &random, serial: &serial)
                operations += 1
            }
            let watched = try await setup.collection.status(remote: nil, watcher: setup.socket)
            let full = try await setup.collection.status(remote: nil, watcher: nil)
            if watched.watcherNote?.hasPrefix("the watcher vouched") == true { answered += 1 } else { scanned += 1 }
            #expect(watched.records == full.records, "round \(round) (\(watched.watcherNote ?? "")): \(watched.records) vs \(full.records)")
            #expect(watched.unusableFiles == full.unusableFiles, "round \(round): \(watched.unusableFiles) vs \(full.unusableFiles)")
            #expect(watched.recordCount == full.recordCount, "round \(round) (\(watched.watcherNote ?? "")): \(watched.recordCount) vs \(full.recordCount)")
            if watched.records != full.records || watched.recordCount != full.recordCount { return }
        }
        #expect(operations > 1_500)
        // Both ways were taken many times: answered from the changes, and scanned after lost events or a new manifest.
        #expect(answered > (subcollections ? 60 : 100), "answered \(answered), scanned \(scanned)")
        #expect(scanned > 10, "answered \(answered), scanned \(scanned)")
    }
}
#endif
