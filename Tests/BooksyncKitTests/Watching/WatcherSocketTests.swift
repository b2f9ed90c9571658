import Foundation
import Testing
import BooksyncCore
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit

/// The watcher's socket and its messages, attacked: a folder others can
/// reach, a link, another user's folder, a question about another
/// collection, an answer about another collection or cut off, a planted or
/// damaged scan record. Each gives a full scan, never a wrong answer.
@Suite(.hangGuard) struct WatcherSocketTests {
    static func environment(_ folder: String) -> [String: String] { [WatcherSocket.folderVariable: folder] }
    /// Where an answer is expected: a command's two seconds are too short for
    /// a watch thread starved by `swift test`'s parallel suites on two cores.
    static let busyMachineWait = Duration.seconds(30)

    @Test func answersReadBackAndAreAboutOneCollectionOnly() {
        let token = ChangeJournal.Token(instance: 9, sequence: 4)
        let replies = [
            WatcherReply(answer: .changed(["dune.json", "a\nb.json", "dune/reviews/r1.json"]), token: token, problem: nil),
            WatcherReply(answer: .cannotVouch(.told("the kernel's event queue overflowed, so events were lost")), token: token, problem: nil),
            WatcherReply(answer: nil, token: token, problem: nil),
            WatcherReply(answer: nil, token: nil, problem: "cannot start watching"),
        ]
        for reply in replies {
            let bytes = WatcherMessages.answer(root: "/c", reply)
            #expect(WatcherMessages.parseAnswer(bytes, root: "/c") == reply)
            #expect(WatcherMessages.parseAnswer(bytes, root: "/other") == nil, "an answer about another collection")
            #expect(WatcherMessages.parseAnswer(Array(bytes.dropLast(4)), root: "/c") == nil, "a cut-off answer")
        }
        #expect(WatcherMessages.parseQuestion(WatcherMessages.question(root: "/c", layout: "reviews", since: token))! == ("/c", "reviews", "9:4"))
        #expect(WatcherMessages.parseQuestion(Array("GET / HTTP/1.0\r\n\r\n".utf8)) == nil)
    }

    @Test func aFolderOthersCanReachIsRefused() throws {
        let scratch = try ScratchDirectory()
        let open = scratch.path + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false)
        chmod(open, 0o755)
        #expect(throws: WatcherSocket.Problem.self) { try WatcherSocket.forCollection(root: scratch.path, environment: Self.environment(open), create: true) }
        // A link to a private folder is refused too: whoever made the link chose where it points.
        let private_ = scratch.path + "/private"
        try FileManager.default.createDirectory(atPath: private_, withIntermediateDirectories: false)
        chmod(private_, 0o700)
        try FileManager.default.createSymbolicLink(atPath: scratch.path + "/link", withDestinationPath: private_)
        #expect(throws: WatcherSocket.Problem.self) {
            try WatcherSocket.forCollection(root: scratch.path, environment: Self.environment(scratch.path + "/link"), create: true)
        }
        // A command never creates the folder; only a watcher does.
        #expect(throws: WatcherSocket.Problem.self) {
            try WatcherSocket.forCollection(root: scratch.path, environment: Self.environment(scratch.path + "/absent"), create: false)
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/absent"))
        _ = try WatcherSocket.forCollection(root: scratch.path, environment: Self.environment(private_), create: false)
    }

    /// Another user's folder (possible to make only as root).
    @Test(.enabled(if: geteuid() == 0)) func anotherUsersFolderIsRefused() throws {
        let scratch = try ScratchDirectory()
        let theirs = scratch.path + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: false)
        chmod(theirs, 0o700)
        chown(theirs, 65534, 65534)
        #expect(throws: WatcherSocket.Problem.self) { try WatcherSocket.forCollection(root: scratch.path, environment: Self.environment(theirs), create: false) }
    }

    #if os(Linux)
    /// A watcher serves its own collection only, and a second one for the same collection is refused.
    @Test func aWatcherAnswersForItsOwnCollectionOnly() throws {
        let scratch = try ScratchDirectory()
        for name in ["a", "b"] { try FileManager.default.createDirectory(atPath: scratch.path + "/" + name, withIntermediateDirectories: false) }
        let env = Self.environment(scratch.path + "/w")
        let socketA = try WatcherSocket.forCollection(root: scratch.path + "/a", environment: env, create: true)
        let watch = FolderWatch(root: scratch.path + "/a", subcollections: try Subcollections.parse(paths: [], requirements: []))
        let server = try WatchServer(socket: socketA, layout: watch.layout, answer: { watch.ask(since: $0) }, tick: { watch.drain() })
        defer { server.stop() }
        let first = try #require(socketA.ask(since: nil, layout: "", wait: Self.busyMachineWait)?.token)
        try "{}".write(toFile: scratch.path + "/a/dune.json", atomically: false, encoding: .utf8)
        #expect(socketA.ask(since: first, layout: "", wait: Self.busyMachineWait)?.answer == .changed(["dune.json"]))
        // B's question at A's socket (a socket file copied or linked over B's name) gets no answer.
        let socketB = try WatcherSocket.forCollection(root: scratch.path + "/b", environment: env, create: true)
        let misdirected = WatcherSocket(path: socketA.path, root: socketB.root)
        #expect(misdirected.ask(since: nil, layout: "") == nil)
        #expect(throws: WatcherSocket.Problem.self) { try WatchServer(socket: socketA, layout: watch.layout, answer: { watch.ask(since: $0) }, tick: {}) }
        // A command that reads other subcollections from config.json than the watch watches gets no token.
        let otherLayout = socketA.ask(since: first, layout: "reviews", wait: Self.busyMachineWait)
        #expect(otherLayout?.token == nil && otherLayout?.problem?.contains("restart it") == true, "\(String(describing: otherLayout))")
        // A token that is not one, or of another run, is never vouched for.
        #expect(socketA.ask(since: ChangeJournal.Token(instance: first.instance + 1, sequence: 0), layout: "", wait: Self.busyMachineWait)?.answer == .cannotVouch(.told(ChangeJournal.Reason.unknownToken.description)))
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: socketA.path), "the socket is removed when the watcher stops")
        #expect(socketA.ask(since: first, layout: "") == nil)
    }

    /// The collection's folder moved away (with the folder above it) and a
    /// copy put in its place: the path leads elsewhere now, and the watch
    /// never vouches for the copy with what it saw of the original.
    @Test func aCollectionMovedAwayIsNotVouchedFor() async throws {
        let scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path + "/p", withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: Fixtures.root + "/collections/sample", toPath: scratch.path + "/p/c")
        let root = scratch.path + "/p/c"
        let collection = try CollectionDirectory.open(searchingFrom: root)
        let socket = try WatcherSocket.forCollection(root: root, environment: Self.environment(scratch.path + "/w"), create: true)
        let watch = FolderWatch(root: root, subcollections: collection.rules.subcollections)
        let server = try WatchServer(socket: socket, layout: watch.layout, answer: { watch.ask(since: $0) }, tick: { watch.drain() })
        defer { server.stop() }
        try await Task.sleep(for: .milliseconds(250))
        _ = try await collection.status(remote: nil, watcher: socket)
        let answered = try await collection.status(remote: nil, watcher: socket)
        #expect(answered.watcherNote?.hasPrefix("the watcher vouched") == true, "\(answered.watcherNote ?? "")")
        try FileManager.default.moveItem(atPath: scratch.path + "/p", toPath: scratch.path + "/p-old")
        try FileManager.default.copyItem(atPath: scratch.path + "/p-old", toPath: scratch.path + "/p")
        try await Task.sleep(for: .milliseconds(250))
        _ = try await collection.status(remote: nil, watcher: socket)
        try FileManager.default.removeItem(atPath: root + "/dune.json")
        try "{}".write(toFile: root + "/new.json", atomically: false, encoding: .utf8)
        let watched = try await collection.status(remote: nil, watcher: socket)
        let full = try await collection.status(remote: nil, watcher: nil)
        #expect(watched.records == full.records && watched.recordCount == full.recordCount, "\(watched.records) vs \(full.records)")
    }

    /// A scan record that is damaged, or whose token is of no running
    /// watcher, gives a full scan and is replaced.
    @Test(arguments: [Array("garbage".utf8), WatchedScan(token: .init(instance: 1, sequence: 0), manifest: "/x", manifestStamp: .unknown,
                                                          canonicalManifest: true, fingerprint: "f", recordCount: 0, differing: []).encoded()])
    func aPlantedScanRecordIsNotBelieved(planted: [UInt8]) async throws {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("sample")
        let collection = try CollectionDirectory.open(searchingFrom: root)
        let socket = try WatcherSocket.forCollection(root: root, environment: Self.environment(scratch.path + "/w"), create: true)
        let watch = FolderWatch(root: root, subcollections: collection.rules.subcollections)
        let server = try WatchServer(socket: socket, layout: watch.layout, answer: { watch.ask(since: $0) }, tick: { watch.drain() })
        defer { server.stop() }
        try FileSystem.writeAtomically(planted, to: socket.scanRecordPath)
        // The copied manifest's stamp is believed only once it is older than the stat cache's racy margin.
        try await Task.sleep(for: .milliseconds(250))
        let watched = try await collection.status(remote: nil, watcher: socket)
        let full = try await collection.status(remote: nil, watcher: nil)
        #expect(watched.records == full.records && watched.unusableFiles == full.unusableFiles && watched.recordCount == full.recordCount)
        #expect(watched.watcherNote?.hasPrefix("the watcher vouched") == false)
        let again = try await collection.status(remote: nil, watcher: socket)
        #expect(again.watcherNote?.hasPrefix("the watcher vouched") == true, "\(again.watcherNote ?? "")")
        #expect(again.records == full.records)
    }
    #endif
}
