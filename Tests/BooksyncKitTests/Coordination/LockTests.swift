import Synchronization
import Foundation
import Testing
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit
#if canImport(Glibc)
import Glibc
#endif

/// The collection lock: one writer at a time, a killed holder taken over,
/// and a lock file's contents (planted, junk, huge) never trusted further
/// than a positive PID read from its first 32 bytes.
@Suite struct LockTests {
    @Test func secondHolderIsRefusedAndStaleLockIsTakenOver() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/lock"
        let lock = try CollectionLock.acquire(at: path)
        #expect(throws: BooksyncError.lockHeld(path: path, pid: getpid())) { try CollectionLock.acquire(at: path) }
        lock.release()
        #expect(try scratch.read("lock").isEmpty, "a released lock is emptied")

        // A holder killed without releasing leaves its PID behind; no process holds the flock.
        try scratch.write("lock", "2147483646\n")
        var staleHolder: Int32?
        let taken = try CollectionLock.acquire(at: path) { staleHolder = $0 }
        #expect(staleHolder == 2_147_483_646)
        #expect(try scratch.read("lock") == "\(getpid())\n")
        taken.release()
        var noticed = false
        let again = try CollectionLock.acquire(at: path) { _ in noticed = true }
        #expect(!noticed, "a cleanly released lock is not reported as stale")
        again.release()
    }

    /// A lock released a moment ago can still be held by a copy of its
    /// descriptor in a child that another thread forked and that has not
    /// exec'd yet: held, naming no one. It is taken once that copy goes,
    /// never refused (seen as the flake "lock does not say its pid" when two
    /// stores took turns while end-to-end tests spawned the binary).
    @Test func aReleasedLockHeldBrieflyByAForkedCopyIsTaken() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/lock"
        try scratch.write("lock", "")
        let copy = open(path, O_RDWR)
        #expect(copy >= 0 && flock(copy, LOCK_EX | LOCK_NB) == 0)
        let dropped = Thread { usleep(300_000); close(copy) }
        dropped.start()
        let lock = try CollectionLock.acquire(at: path)
        lock.release()
    }

    /// The same, for real: processes spawned in a loop on another thread
    /// while this one takes and releases the lock hundreds of times.
    @Test func takingTurnsWhileAnotherThreadSpawnsNeverSeesAHeldLock() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/lock"
        let spawning = Mutex(true)
        let spawner = Thread {
            for _ in 0..<2_000 where spawning.withLock({ $0 }) { _ = Subprocess.run(["/bin/true"]) }
        }
        spawner.start()
        defer { spawning.withLock { $0 = false } }
        for _ in 0..<500 {
            let lock = try CollectionLock.acquire(at: path)
            lock.release()
        }
    }

    /// A holder that has taken the flock but not yet written its PID (or a
    /// file with junk in it) is reported without a PID, never as "pid 0", and
    /// no message ever advises removing the lock file of a live holder.
    @Test(arguments: ["", "0\n", "not a pid\n"])
    func aHolderWhosePIDIsUnknownIsNamedAsSuch(content: String) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/lock"
        try scratch.write("lock", content)
        // flock belongs to an open file description: a second open in this process is another holder.
        let holder = open(path, O_RDWR)
        #expect(holder >= 0)
        defer { close(holder) }
        #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
        #expect(throws: BooksyncError.lockHeld(path: path, pid: nil)) { try CollectionLock.acquire(at: path) }
        let sentence = BooksyncError.lockHeld(path: path, pid: nil).description
        #expect(sentence.contains("another booksync is working in this collection") && sentence.contains("wait for it to finish"))
        // The file may hold junk (or belong to another program's flock): the sentence claims no more than it knows.
        #expect(sentence.contains("(it holds \(path), which does not say its pid)") && !sentence.contains("just taken"), "\(sentence)")
        for message in [sentence, BooksyncError.lockHeld(path: path, pid: 42).description] {
            #expect(!message.contains("remove") && !message.contains("pid 0"), "\(message)")
        }
        #expect(try scratch.read("lock") == content, "a refused acquire leaves the holder's file alone")
    }

    /// Found by the review: a free lock file holding "0" or a negative number
    /// (written by hand, or planted) was reported as a killed holder "pid 0" or
    /// "pid -7". Only a positive PID names a process; a huge or hostile file is
    /// read 32 bytes at most and names none.
    @Test(arguments: ["0\n", "-7\n", "+0\n", "\u{1B}]0;pwned\u{07}\n", String(repeating: "9", count: 100_000)])
    func aFreeLockFileWithoutAPositivePIDNamesNoStaleHolder(content: String) throws {
        let scratch = try ScratchDirectory()
        try scratch.write("lock", content)
        var stale: Int32?
        let lock = try CollectionLock.acquire(at: scratch.path + "/lock") { stale = $0 }
        #expect(stale == nil)
        #expect(try scratch.read("lock") == "\(getpid())\n", "the file now names this process alone")
        lock.release()
    }

    /// Async acquirers of a lock held by no named process wait with
    /// `Task.sleep`, holding no thread: four times as many as their pool has
    /// threads all wait at once, and a task of that pool then runs and frees
    /// the lock before any gives up. Slept on their threads (as `usleep` did),
    /// the first ones held the pool until their patience ran out, refused,
    /// and nothing else could run meanwhile. The pool is the test's own
    /// (`ThreadsExecutor`), so other tests cannot starve it; the acquirers
    /// give up by themselves after `patience`.
    @Test(.hangGuard) func manyWaitingAcquirersLeaveTheirPoolFree() async throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/lock"
        try scratch.write("lock", "")
        let holder = open(path, O_RDWR)
        try #require(holder >= 0 && flock(holder, LOCK_EX | LOCK_NB) == 0)
        let executor = ThreadsExecutor(threads: 2)
        defer { executor.stop() }
        let acquirers = 8
        // true: an acquirer started waiting; false: one is done.
        let (events, report) = AsyncStream.makeStream(of: Bool.self)
        enum Outcome: Sendable { case freed, took, refused(BooksyncError) }
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            // Frees the lock once every acquirer waits (or one is done: it can only have given up).
            group.addTask(executorPreference: executor) {
                var waiting = 0
                for await started in events {
                    guard started else { break }
                    waiting += 1
                    if waiting == acquirers { break }
                }
                close(holder)
                return .freed
            }
            for _ in 0..<acquirers {
                group.addTask(executorPreference: executor) {
                    defer { report.yield(false) }
                    do throws(BooksyncError) {
                        let lock = try await CollectionLock.acquire(at: path, patience: .seconds(10), onWait: { report.yield(true) })
                        lock.release()
                        return .took
                    } catch {
                        return .refused(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.contains { if case .took = $0 { true } else { false } }, "the lock was taken once freed")
        // The others met it taken by one of them (this process), at once; none gave up waiting.
        for case .refused(let error) in outcomes {
            #expect(error == .lockHeld(path: path, pid: getpid()), "\(error)")
        }
    }
}

/// A task executor with threads of its own, so that a test's tasks are not
/// held up by other tests running on the shared cooperative pool.
final class ThreadsExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    init(threads: Int) {
        for _ in 0..<threads { Thread { self.run() }.start() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the threads once the jobs queued are done.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty, !stopped { condition.wait() }
            guard !jobs.isEmpty else {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
