import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
@_spi(Remote) import BooksyncKit

/// Opens a few connections to a loopback Firestore (the emulator) with a
/// request it answers at once, before the first Firestore request goes, so
/// that no slow request is the first on its connection (Linux only).
///
/// Why: on Linux, URLSession drives libcurl through dispatch sources, and
/// the write source it makes while a new connection connects stays until
/// that connection's first transfer ends. A connected socket is always
/// writable, so until the first answer arrives the source fires without
/// pause and the waiting process burns a core (swift-corelibs-foundation's
/// `_SocketSources.createSources` adds sources and never removes one).
/// Later transfers on a kept-alive connection start without it and wait
/// quietly. On a machine's own emulator that core is the one the emulator
/// needs to answer. A `GET /`, which the emulator answers in about a
/// millisecond, takes the spin instead; the Firestore requests then find
/// warm connections.
///
/// Bounded so it never holds a command up for long: requests wait for the
/// warm-up only in the first `waitLimit` after it starts, then go whatever
/// it did; a request cancelled meanwhile stops waiting. The warm-up requests
/// are never cancelled (a cancelled URLSession task on Linux is not always
/// released; only an answer past `answerLimit` is cut), each ends by its own
/// timeout, and they take at most `connections` of the session's
/// connections, fewer than it may open. A server that does not answer them
/// (a test's silent server) costs the transport `waitLimit` once.
///
/// Only loopback hosts and Firestore's document paths
/// (`/v1/projects/…/databases/…`) are warmed: a remote server does not
/// share this machine's cores. Token, IAM and metadata requests never are.
///
/// Measured (2026-12-06, this 2-core machine): the CLI's end-to-end suites
/// (237 tests, each running the built binary against the emulator) took
/// 215 s with 366 s of CPU without it, 67 s with 89 s of CPU with it.
final class LoopbackWarmup: Sendable {
    /// How many connections to open for each loopback origin.
    let connections: Int
    /// How long after the warm-up starts requests still wait for it.
    let waitLimit: Duration
    /// Each warm-up request's own timeout.
    let requestTimeout: Double
    /// The most of a warm-up answer read: the emulator's is `Ok`.
    static let answerLimit = 64 << 10
    /// By origin (`http://127.0.0.1:8080`): the warm-up, started once.
    private let warmups = Mutex<[String: Warmup]>([:])

    /// One origin's warm-up: the requests under way, and until when
    /// requests wait for them.
    private struct Warmup {
        let requests: Task<Void, Never>
        let waitUntil: ContinuousClock.Instant
        var finished = false
    }

    init(connections: Int, waitLimit: Duration = .milliseconds(250), requestTimeout: Double) {
        self.connections = connections
        self.waitLimit = waitLimit
        self.requestTimeout = requestTimeout
    }

    /// The origin to warm before a request to `url` (`http://127.0.0.1:8080`),
    /// or nil when the request is not one to warm for.
    static func origin(of url: String) -> String? {
        #if canImport(Darwin)
        return nil
        #else
        // The host as booksync checks every base URL (user info and odd bytes refused).
        guard let (scheme, host) = FirestoreEndpoint.schemeAndHost(url), scheme == "http", HostAddress.isLoopback(host),
              let schemeEnd = url.firstRange(of: "://"), let slash = url[schemeEnd.upperBound...].firstIndex(of: "/"),
              url[slash...].hasPrefix("/v1/projects/"), url[slash...].contains("/databases/") else { return nil }
        return String(url[..<slash])
        #endif
    }

    /// Returns once `origin` has warm connections, or once `waitLimit` has
    /// passed since its warm-up started, or when this task is cancelled.
    /// The first call starts the warm-up; later calls wait for the same one,
    /// and return at once after it.
    func ready(_ origin: String, session: URLSession, delegate: SessionDelegate) async {
        let now = ContinuousClock.now
        let pending = warmups.withLock { warmups -> Warmup? in
            if let warmup = warmups[origin] {
                return warmup.finished || now >= warmup.waitUntil ? nil : warmup
            }
            let requests = Task {
                await self.warm(origin, session: session, delegate: delegate)
                self.warmups.withLock { $0[origin]?.finished = true }
            }
            let warmup = Warmup(requests: requests, waitUntil: now + waitLimit)
            warmups[origin] = warmup
            return warmup
        }
        guard let pending else { return }
        await Self.first(of: pending.requests, orUntil: pending.waitUntil)
    }

    /// Sends `connections` requests for `origin`'s root at once: each opens a
    /// connection of its own while the others are under way.
    private func warm(_ origin: String, session: URLSession, delegate: SessionDelegate) async {
        guard let url = URL(string: origin + "/") else { return }
        var get = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: requestTimeout)
        get.httpMethod = "GET"
        let request = get, timeout = requestTimeout
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<connections {
                group.addTask { _ = await delegate.run(request, timeout: timeout, in: session, limit: Self.answerLimit) }
            }
        }
    }

    /// Waits until `task` ends, `deadline` passes or this task is cancelled,
    /// whichever is first, and cancels none of them.
    private static func first(of task: Task<Void, Never>, orUntil deadline: ContinuousClock.Instant) async {
        let once = ResumeOnce()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                once.set(done)
                Task {
                    await task.value
                    once.resume()
                }
                Task {
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    once.resume()
                }
            }
        } onCancel: {
            once.resume()
        }
    }

    /// A continuation that the first of several callers resumes; one that
    /// calls before it is set makes `set` resume it at once.
    private final class ResumeOnce: Sendable {
        private enum State { case waiting, set(CheckedContinuation<Void, Never>), resumed }
        private let state = Mutex(State.waiting)

        func set(_ continuation: CheckedContinuation<Void, Never>) {
            let resumeNow = state.withLock { state -> Bool in
                guard case .waiting = state else { return true }
                state = .set(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }

        func resume() {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state = .resumed }
                if case .set(let continuation) = state { return continuation }
                return nil
            }
            continuation?.resume()
        }
    }
}
