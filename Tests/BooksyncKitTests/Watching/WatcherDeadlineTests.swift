import Foundation
import Synchronization
import Testing
import BooksyncCore
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Both ends of the watcher's socket give up on a peer that trickles, by a
/// deadline for the whole exchange: a byte now and then, each before a
/// per-read timeout ran out, once held `status --offline` for 21 s, and
/// could hold the single-threaded watch server for good.
///
/// The bounds checked are generous (10 s for a 2 s or 1 s deadline): they
/// tell a deadline from none, never how fast anything is. Each trickling
/// peer sends at most 100 bytes (20 s) and stops when the other end has gone.
@Suite(.hangGuard) struct WatcherDeadlineTests {
    static func environment(_ folder: String) -> [String: String] { [WatcherSocket.folderVariable: folder] }

    /// Sends `bytes` one at a time, `every` apart, until all are sent or the
    /// other end has gone; on a thread of its own. Returns when it stopped.
    static func trickle(_ bytes: [UInt8], to fd: Int32, every: Duration) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for byte in bytes {
                guard SocketExchange.sendAll([byte], to: fd, deadline: .now + .seconds(5)) else { break }
                Thread.sleep(forTimeInterval: Double(every.components.attoseconds) / 1e18 + Double(every.components.seconds))
            }
            done.signal()
        }
        return done
    }

    static func connected(to path: String) throws -> Int32 {
        let fd = WatcherSocket.newSocket()
        try #require(fd >= 0)
        try #require(WatcherSocket.withAddress(path, { connect(fd, $0, $1) }) == 0, "connect: \(String(cString: strerror(errno)))")
        return fd
    }

    /// A "watcher" that answers one byte every half second: the command gives
    /// up within its deadline, and status scans everything, as without one.
    @Test func aWatcherThatTricklesItsAnswerIsGivenUpOnAndStatusScans() async throws {
        let scratch = try ScratchDirectory()
        let root = try scratch.copyFixture("sample")
        let collection = try CollectionDirectory.open(searchingFrom: root)
        let socket = try WatcherSocket.forCollection(root: root, environment: Self.environment(scratch.path + "/w"), create: true)
        let listener = WatcherSocket.newSocket()
        defer { close(listener) }
        try #require(WatcherSocket.withAddress(socket.path, { bind(listener, $0, $1) }) == 0 && listen(listener, 4) == 0)
        let served = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let client = accept(listener, nil, nil)
            if client >= 0 {
                let answer = WatcherMessages.answer(root: socket.root, WatcherReply(answer: nil, token: .init(instance: 1, sequence: 0), problem: nil))
                Self.trickle(Array(answer.prefix(40)), to: client, every: .milliseconds(500)).wait()
                close(client)
            }
            served.signal()
        }

        let started = ContinuousClock.now
        let status = try await collection.status(remote: nil, watcher: socket)
        let waited = ContinuousClock.now - started
        #expect(waited < .seconds(10), "status waited \(waited) for a watcher that trickles")
        #expect(status.watcherNote == "no watcher answers for this collection", "\(status.watcherNote ?? "")")
        let full = try await collection.status(remote: nil, watcher: nil)
        #expect(status.records == full.records && status.recordCount == full.recordCount)
        #expect(served.wait(timeout: .now() + 60) == .success, "the fake watcher stops once the command has gone")
    }

    /// A client that trickles its question, a byte every 0.2 s (each within
    /// the server's idle limit), is dropped, and the watch answers the next.
    @Test func aClientThatTricklesItsQuestionIsDroppedAndTheNextAnswered() throws {
        let scratch = try ScratchDirectory()
        let root = scratch.path + "/c"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        let socket = try WatcherSocket.forCollection(root: root, environment: Self.environment(scratch.path + "/w"), create: true)
        let token = ChangeJournal.Token(instance: 7, sequence: 1)
        let ticks = Atomic<Int>(0)
        let server = try WatchServer(socket: socket, layout: "", answer: { _ in WatcherReply(answer: nil, token: token, problem: nil) },
                                     tick: { ticks.add(1, ordering: .relaxed) })
        defer { server.stop() }

        let slow = try Self.connected(to: socket.path)
        defer { close(slow) }
        let started = ContinuousClock.now
        let stopped = Self.trickle(Array(repeating: UInt8(ascii: "x"), count: 100), to: slow, every: .milliseconds(200))
        var reply: WatcherReply?
        while reply == nil, ContinuousClock.now - started < .seconds(10) {
            reply = socket.ask(since: nil, layout: "")
        }
        let waited = ContinuousClock.now - started
        #expect(reply?.token == token, "no answer in \(waited) while a client trickles its question")
        #expect(waited < .seconds(10))
        #expect(stopped.wait(timeout: .now() + 60) == .success)
        #expect(ContinuousClock.now - started < .seconds(15), "the trickling client was dropped before it sent everything")
        let before = ticks.load(ordering: .relaxed)
        #expect(socket.ask(since: nil, layout: "")?.token == token)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(ticks.load(ordering: .relaxed) > before, "the watch drains between questions")
    }
}
