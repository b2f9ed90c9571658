import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// A cloned collection is untrusted input (<doc:Safety>): links, FIFOs and
/// other non-regular files planted in it are refused, never followed, read,
/// written through or created through. Each test plants the attack and checks
/// that what lies outside the collection is unchanged.
@Suite(.hangGuard) struct UntrustedCollectionTests {
    /// A collection with one synced-looking record, and a directory outside it
    /// holding the files an attacker would point links at.
    struct Clone {
        let scratch: ScratchDirectory
        let collection: CollectionDirectory
        var root: String { collection.paths.root }
        var outside: String { scratch.path + "/outside" }

        init() throws {
            scratch = try ScratchDirectory()
            try FileManager.default.createDirectory(atPath: scratch.path + "/books", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: scratch.path + "/outside/dir", withIntermediateDirectories: true)
            try scratch.write("outside/target", "PS1=untouched\n")
            try scratch.write("outside/dir/keep", "keep\n")
            collection = try CollectionDirectory.initialize(
                at: scratch.path + "/books", config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
            try scratch.write("books/dune.json", #"{"id": "dune", "title": "Dune", "author": "FH", "genre": "sf"}"#)
        }

        /// Every file outside, with its bytes and permission bits.
        func outsideSnapshot() throws -> [String: String] {
            var snapshot: [String: String] = [:]
            for relative in try FileManager.default.subpathsOfDirectory(atPath: outside) {
                let path = outside + "/" + relative
                let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
                let content = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "<dir>"
                snapshot[relative] = "\(String(mode, radix: 8)) \(content)"
            }
            return snapshot
        }

        func plantLink(_ relative: String, to target: String) throws {
            let path = root + "/" + relative
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        }
    }

    /// Where booksync keeps state, and whether a directory belongs there.
    static let statePaths: [(String, isDirectory: Bool)] = [
        (".booksync", true), (".booksync/base", true), (".booksync/conflicts", true),
        (".booksync/config.json", false), (".booksync/manifest.json", false), (".booksync/index", false),
        (".booksync/lock", false), (".booksync/base/pack", false), (".booksync/.gitignore", false),
    ]

    @Test(arguments: statePaths)
    func aLinkWhereStateBelongsIsRefusedBeforeAnythingIsDone(path: String, isDirectory: Bool) async throws {
        let clone = try Clone()
        if path == ".booksync/conflicts" || path == ".booksync/base/pack" {
            // Give the link something to replace; they may not exist yet.
            _ = try await clone.collection.push(remote: ScriptedRemote())
        }
        if path == ".booksync" {
            // A committed .booksync pointing at a state directory elsewhere.
            try FileManager.default.moveItem(atPath: clone.root + "/.booksync", toPath: clone.outside + "/state")
            try clone.plantLink(path, to: clone.outside + "/state")
        } else {
            try clone.plantLink(path, to: clone.outside + (isDirectory ? "/dir" : "/target"))
        }
        let before = try clone.outsideSnapshot()
        #expect {
            _ = try CollectionDirectory.open(searchingFrom: clone.root)
        } throws: { error in
            guard case .io(let failure) = error as? BooksyncError else { return false }
            return failure.unsafeKind == .symbolicLink && failure.path.hasSuffix(path)
                && failure.description.contains("never follows links")
        }
        #expect(try clone.outsideSnapshot() == before)
    }

    /// Behind the up-front check, every state write itself refuses a link
    /// planted after the collection was opened.
    @Test func stateWritesNeverGoThroughALinkPlantedLater() async throws {
        let clone = try Clone()
        let before = try clone.outsideSnapshot()
        let paths = clone.collection.paths

        try clone.plantLink(".booksync/lock", to: clone.outside + "/target")
        #expect(throws: BooksyncError.self) { _ = try CollectionLock.acquire(at: paths.lock) }
        try FileManager.default.removeItem(atPath: paths.lock)

        try clone.plantLink(".booksync/base/pack", to: clone.outside + "/target")
        #expect(throws: FileSystemError.self) { try clone.collection.baseCopies.append(Array("x\tsha256:0\t{}\n".utf8)) }

        try clone.plantLink(".booksync/conflicts", to: clone.outside + "/dir")
        let record = try #require(try? clone.collection.rules.load(Array(#"{"id": "dune", "title": "D", "author": "A", "genre": "g"}"#.utf8), id: RecordID("dune")).get())
        #expect(throws: FileSystemError.self) { try ConflictStore(paths: paths).save(record.id, record: record, revision: "r", baseRevision: nil) }

        try clone.plantLink(".booksync/manifest.json", to: clone.outside + "/target")
        #expect(throws: FileSystemError.self) { try FileSystem.writeAtomically(Array("{}".utf8), to: paths.manifest) }

        #expect(try clone.outsideSnapshot() == before)
    }

    /// What can sit where a record file is expected.
    enum Planted: String, CaseIterable, Sendable {
        case symlink, danglingSymlink, fifo, directory

        func plant(at path: String, outside: String) throws {
            switch self {
            case .symlink: try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: outside + "/target")
            case .danglingSymlink: try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: outside + "/nothing.json")
            case .fifo: #expect(mkfifo(path, 0o644) == 0)
            case .directory: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            }
        }

        var kind: FileKind {
            switch self {
            case .symlink, .danglingSymlink: .symbolicLink
            case .fifo: .fifo
            case .directory: .directory
            }
        }
    }

    /// status, validate, fmt, fmt --check, resolve and push all report the
    /// planted entry with the same sentence, and none reads, rewrites or sends it.
    @Test(arguments: Planted.allCases)
    func everyCommandReportsANonRegularRecordFileTheSameWay(planted: Planted) async throws {
        let clone = try Clone()
        let file = clone.root + "/x.json"
        try planted.plant(at: file, outside: clone.outside)
        let before = try clone.outsideSnapshot()
        let sentence = FileSystemError.refusal(planted.kind)

        let scan = try LocalScanner(for: clone.collection, base: nil).scan()
        #expect(scan.files[try RecordID("x")] == .invalid([RecordDiagnostic(message: sentence)]))

        let validation = try await clone.collection.validate([])
        #expect(validation.first { $0.path == file }?.diagnostics == [RecordDiagnostic(message: sentence)])

        for checkOnly in [true, false] {
            let formatted = try await clone.collection.format([file], checkOnly: checkOnly)
            #expect(formatted == [FormatReport(path: file, outcome: .failed(RecordDiagnostic(message: sentence)))])
        }

        let remote = ScriptedRemote()
        let pushed = try await clone.collection.push(remote: remote)
        #expect(pushed.events.contains(SyncEvent(id: try RecordID("x"), kind: .invalidLocal([RecordDiagnostic(message: sentence)]))))
        #expect(remote.chunks.withLock { $0 }.joined().contains("x") == false)

        // A stored conflict for x: resolving it must not accept the planted entry.
        let record = try #require(try? clone.collection.rules.load(Array(#"{"id": "x", "title": "X", "author": "A", "genre": "g"}"#.utf8), id: RecordID("x")).get())
        try ConflictStore(paths: clone.collection.paths).save(record.id, record: record, revision: "2024-01-01T00:00:00Z", baseRevision: nil)
        for choice in [ResolveChoice.ours, .theirs, .edited] {
            let outcomes = try clone.collection.resolve([try RecordID("x")], choice: choice)
            #expect(outcomes.map(\.1) == [.invalidLocal([RecordDiagnostic(message: sentence)])])
        }
        #expect(try FileSystem.stat(file).kind == planted.kind)
        #expect(try clone.outsideSnapshot() == before)
    }

    @Test func filesNamedOutsideTheCollectionAreRefused() async throws {
        let clone = try Clone()
        try clone.scratch.write("outside/x.json", "{\"id\":\"x\",  \"title\":\"T\",\"author\":\"A\",\"genre\":\"g\"}")
        let before = try clone.outsideSnapshot()
        for argument in [clone.outside + "/x.json", clone.root + "/../outside/x.json", clone.root + "/sub/dune.json"] {
            await #expect(throws: BooksyncError.self) { _ = try await clone.collection.format([argument], checkOnly: false) }
            await #expect(throws: BooksyncError.self) { _ = try await clone.collection.validate([argument]) }
        }
        #expect(try clone.outsideSnapshot() == before)
        // The collection's own files, named through a path with `..`, are fine.
        let reports = try await clone.collection.format([clone.root + "/../books/dune.json"], checkOnly: true)
        #expect(reports.map(\.outcome) == [.needsFormatting])
    }

    /// `fmt link/../dune.json` names the file the kernel finds there, not
    /// `dune.json` by text; names that are not record files are never rewritten.
    @Test func argumentsAreResolvedAsTheKernelDoesAndMustBeRecordFiles() async throws {
        let clone = try Clone()
        try FileManager.default.createDirectory(atPath: clone.outside + "/deep/dir", withIntermediateDirectories: true)
        try clone.scratch.write("outside/deep/dune.json", "{\"id\":\"dune\",  \"title\":\"T\",\"author\":\"A\",\"genre\":\"g\"}")
        try clone.plantLink("link", to: clone.outside + "/deep/dir")
        try clone.scratch.write("books/notes.txt", "not a record")
        try clone.scratch.write("books/.hidden.json", "{ }")
        let before = try clone.outsideSnapshot()
        for argument in [clone.root + "/link/../dune.json", clone.root + "/notes.txt", clone.root + "/.hidden.json"] {
            await #expect(throws: BooksyncError.self) { _ = try await clone.collection.format([argument], checkOnly: false) }
        }
        #expect(try clone.outsideSnapshot() == before)
        #expect(try clone.scratch.read("books/notes.txt") == "not a record")
    }

    /// A cloned repository cannot carry hard links, but a local user can make
    /// them: the two state files written in place refuse a second name.
    @Test func stateFilesWrittenInPlaceRefuseHardLinks() throws {
        let clone = try Clone()
        let paths = clone.collection.paths
        let before = try clone.outsideSnapshot()
        #expect(link(clone.outside + "/target", paths.lock) == 0)
        #expect {
            _ = try CollectionLock.acquire(at: paths.lock)
        } throws: { error in
            guard case .io(let failure) = error as? BooksyncError else { return false }
            return failure.unsafeKind == .hardLinked
        }
        try FileManager.default.createDirectory(atPath: paths.base, withIntermediateDirectories: true)
        #expect(link(clone.outside + "/target", paths.base + "/pack") == 0)
        #expect(throws: FileSystemError.self) { try clone.collection.baseCopies.append(Array("x\tsha256:0\t{}\n".utf8)) }
        #expect(try clone.outsideSnapshot() == before)
    }

    /// As git refuses a repository owned by someone else: a `.booksync` another
    /// user planted in a shared parent directory is never used as yours.
    @Test(.enabled(if: geteuid() == 0, "needs root to give the directory to another user"))
    func aCollectionOfAnotherUserIsRefused() throws {
        let clone = try Clone()
        #expect(chown(clone.root + "/.booksync", 65534, 65534) == 0)
        #expect {
            _ = try CollectionDirectory.open(searchingFrom: clone.root)
        } throws: { error in
            guard case .invalidArgument(let message) = error as? BooksyncError else { return false }
            return message.contains("belongs to another user (uid 65534)")
        }
    }

    @Test func initNamesWhatStandsWhereDotBooksyncBelongs() throws {
        let scratch = try ScratchDirectory()
        for (name, plant) in [("file", { (path: String) in FileManager.default.createFile(atPath: path, contents: Data()) }),
                              ("link", { (path: String) in (try? FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/nowhere")) != nil })] {
            let root = scratch.path + "/" + name
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            #expect(plant(root + "/.booksync"))
            #expect {
                _ = try CollectionDirectory.initialize(at: root, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
            } throws: { error in
                guard case .io(let failure) = error as? BooksyncError else { return false }
                return failure.unsafeKind == (name == "file" ? .regular : .symbolicLink)
            }
        }
    }

    @Test func rewrittenFilesKeepTheirModeAndNewFilesAreNeverWider() throws {
        let clone = try Clone()
        let file = clone.root + "/dune.json"
        for mode in [0o600, 0o644, 0o640] {
            chmod(file, mode_t(mode))
            try FileSystem.writeAtomically(Array("{}".utf8), to: file)
            #expect(try FileSystem.stat(file).mode == UInt32(mode))
        }
        chmod(file, 0o4755)  // set-id bits are never carried over
        try FileSystem.writeAtomically(Array("{}".utf8), to: file)
        #expect(try FileSystem.stat(file).mode == 0o755)
        let fresh = clone.root + "/fresh.json"
        try FileSystem.writeAtomically(Array("{}".utf8), to: fresh)
        #expect(try FileSystem.stat(fresh).mode & 0o022 == 0)
    }
}
