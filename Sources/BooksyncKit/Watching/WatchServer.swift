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
    private let listener: Int32
    /// The socket file's inode, so stopping removes this server's file and no other.
    private let inode: UInt64
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Listens on `socket` and starts answering with `answer`; `tick` runs
    /// about every 200 ms.
    /// - Throws: `WatcherSocket.Problem` when another watcher answers there
    ///   already, or the socket cannot be made.
    package init(socket: WatcherSocket, answer: @escaping @Sendable (ChangeJournal.Token?) -> WatcherReply,
                 tick: @escaping @Sendable () -> Void) throws(WatcherSocket.Problem) {
        self.socket = socket
        if socket.isAnswered() {
            throw WatcherSocket.Problem(description: "another watcher already serves this collection (its socket is '\(socket.path)')")
        }
        // A socket left by a watcher that was killed: only a socket is removed.
        var s = CStat()
        if lstat(socket.path, &s) == 0, (s.st_mode & S_IFMT) == S_IFSOCK { unlink(socket.path) }
        let fd = WatcherSocket.newSocket()
        guard fd >= 0 else { throw WatcherSocket.Problem(description: "cannot make the watcher's socket: \(String(cString: strerror(errno)))") }
        guard WatcherSocket.withAddress(socket.path, { bind(fd, $0, $1) }) == 0, listen(fd, 16) == 0, lstat(socket.path, &s) == 0 else {
            let problem = "cannot listen on '\(socket.path)': \(String(cString: strerror(errno)))"
            close(fd)
            throw WatcherSocket.Problem(description: problem)
        }
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
        finished.signal()
    }

    /// One question, one answer. A client of another user, or one that
    /// sends something else, gets nothing.
    private func serve(_ client: Int32, answer: (ChangeJournal.Token?) -> WatcherReply) {
        WatcherSocket.setTimeouts(client, milliseconds: 1000)
        guard WatcherSocket.peerIsSelf(client),
              let bytes = WatcherSocket.readAll(client, limit: WatcherMessages.maximumQuestionBytes),
              let question = WatcherMessages.parseQuestion(bytes), question.root == socket.root
        else { return }
        // A token that is not one is a token of no run: the journal answers it as unknown.
        let token = question.token.isEmpty ? nil : ChangeJournal.Token(question.token) ?? ChangeJournal.Token(instance: 0, sequence: .max)
        _ = WatcherSocket.sendAll(WatcherMessages.answer(root: socket.root, answer(token)), to: client)
    }
}
