import BooksyncCore
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The watcher process's end of `WatcherSocket`: answers each command that
/// asks what changed since its token, one at a time, on a thread of its own,
/// and between questions drains the watch (`tick`) so the kernel's queue
/// does not overflow while nobody asks.
package final class WatchServer: Sendable {
    package let socket: WatcherSocket
    /// The subcollections the watch watches (`WatcherMessages.layout`).
    private let layout: String
    private let listener: Int32
    /// The `flock`ed lock file: one serving watch per collection, and a
    /// socket is removed only by whoever holds it.
    private let lock: Int32
    /// The socket file's inode, so stopping removes this server's file and no other.
    private let inode: UInt64
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Listens on `socket` and starts answering with `answer` questions
    /// about `layout`; `tick` runs about every 200 ms.
    /// - Throws: `WatcherSocket.Problem` when another watcher serves the
    ///   collection already, or the socket cannot be made.
    package init(socket: WatcherSocket, layout: String, answer: @escaping @Sendable (ChangeJournal.Token?) -> WatcherReply,
                 tick: @escaping @Sendable () -> Void) throws(WatcherSocket.Problem) {
        self.socket = socket
        self.layout = layout
        let lock = open(socket.lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lock >= 0 else { throw WatcherSocket.Problem(description: "cannot open '\(socket.lockPath)': \(String(cString: strerror(errno)))") }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            close(lock)
            throw WatcherSocket.Problem(description: "another watcher already serves this collection (its socket is '\(socket.path)')")
        }
        // Whoever holds the lock owns the name: a socket left there is a killed watcher's.
        var s = CStat()
        if lstat(socket.path, &s) == 0, (s.st_mode & S_IFMT) == S_IFSOCK { unlink(socket.path) }
        let fd = WatcherSocket.newSocket()
        guard fd >= 0, WatcherSocket.withAddress(socket.path, { bind(fd, $0, $1) }) == 0, listen(fd, 16) == 0, lstat(socket.path, &s) == 0 else {
            let problem = "cannot listen on '\(socket.path)': \(String(cString: strerror(errno)))"
            if fd >= 0 { close(fd) }
            close(lock)
            throw WatcherSocket.Problem(description: problem)
        }
        self.lock = lock
        listener = fd
        inode = UInt64(s.st_ino)
        DispatchQueue.global().async { [self] in
            loop(answer: answer, tick: tick)
        }
    }

    /// Stops answering and removes the socket; waits up to a second for the thread.
    package func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        _ = finished.wait(timeout: .now() + .seconds(1))
    }

    private func loop(answer: @Sendable (ChangeJournal.Token?) -> WatcherReply, tick: () -> Void) {
        while !stopped.load(ordering: .relaxed) {
            var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, 200)
            tick()
            guard ready > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            serve(client, answer: answer)
            close(client)
        }
        var s = CStat()
        if lstat(socket.path, &s) == 0, UInt64(s.st_ino) == inode { unlink(socket.path) }
        close(listener)
        close(lock)
        finished.signal()
    }

    /// How long one client may take to send its whole question. The server
    /// answers one client at a time, and drains the watch between them: a
    /// client that trickles its question in, a byte now and then, is dropped
    /// then, and the watch goes back to draining.
    static let questionWait = Duration.seconds(1)
    /// How long a client may stay silent while sending its question.
    static let questionIdle = Duration.milliseconds(250)

    /// One question, one answer. A client of another user, or one that
    /// sends something else, gets nothing; one that asks about other
    /// subcollections than this watch watches is told so. A client holds
    /// the watch up for `questionWait` at most to ask (`questionIdle` if it
    /// sends nothing), and for the asking command's `answerWait` at most to
    /// take the answer: past that nobody reads it.
    private func serve(_ client: Int32, answer: (ChangeJournal.Token?) -> WatcherReply) {
        let accepted = ContinuousClock.now
        guard WatcherSocket.peerIsSelf(client),
              let bytes = SocketExchange.readAll(client, limit: WatcherMessages.maximumQuestionBytes,
                                                 deadline: accepted + Self.questionWait, idle: Self.questionIdle),
              let question = WatcherMessages.parseQuestion(bytes), question.root == socket.root
        else { return }
        let answered = accepted + WatcherSocket.answerWait
        guard question.layout == layout else {
            let problem = "this watch was started with other subcollections in config.json; restart it"
            let reply = WatcherMessages.answer(root: socket.root, WatcherReply(answer: nil, token: nil, problem: problem))
            _ = SocketExchange.sendAll(reply, to: client, deadline: answered)
            return
        }
        // A token that is not one is a token of no run: the journal answers it as unknown.
        let token = question.token.isEmpty ? nil : ChangeJournal.Token(question.token) ?? ChangeJournal.Token(instance: 0, sequence: .max)
        _ = SocketExchange.sendAll(WatcherMessages.answer(root: socket.root, answer(token)), to: client, deadline: answered)
    }
}

#if os(Linux)
extension WatchServer {
    /// Answers for `watch` on its collection's socket (`WatcherSocket`), draining it between questions.
    /// - Throws: `WatcherSocket.Problem` as `init` and `WatcherSocket.forCollection` do.
    package static func serving(_ watch: FolderWatch, environment: [String: String]) throws(WatcherSocket.Problem) -> WatchServer {
        let socket = try WatcherSocket.forCollection(root: watch.root, environment: environment, create: true)
        return try WatchServer(socket: socket, layout: watch.layout, answer: { watch.ask(since: $0) }, tick: { watch.drain() })
    }
}
#endif
