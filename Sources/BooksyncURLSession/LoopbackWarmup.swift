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
/// Bounded so it can never hold a command up for long: the first requests
/// wait for the warm-up at most `waitLimit`, then go whatever it did. The
/// warm-up requests are never cancelled (a cancelled URLSession task on
/// Linux is not always released), each ends by its own timeout, and they
/// take at most `connections` of the session's connections, fewer than it
/// may open. A server that does not answer them (a test's silent server)
/// costs the command `waitLimit` once.
///
/// Only loopback hosts and Firestore's API paths (`/v1/`) are warmed: a
/// remote server does not share this machine's cores. Token and metadata
/// requests never are.
///
/// Measured (2026-12-06, this 2-core machine): the CLI's end-to-end suites
/// (237 tests, each running the built binary against the emulator) took
/// 215 s with 366 s of CPU without it, 67 s with 89 s of CPU with it.
final class LoopbackWarmup: Sendable {
    /// How many connections to open for each loopback origin.
    let connections: Int
    /// The longest a request waits for the warm-up.
    let waitLimit: Duration
    /// Each warm-up request's own timeout.
    let requestTimeout: Double
    /// By origin (`http://127.0.0.1:8080`): the warm-up, done once.
    private let warmups = Mutex<[String: Task<Void, Never>]>([:])

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
        guard let schemeEnd = url.range(of: "://"), url.hasPrefix("http://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        guard let slash = rest.firstIndex(of: "/"), rest[slash...].hasPrefix("/v1/") else { return nil }
        let authority = rest[..<slash]
        guard !authority.contains("@") else { return nil }
        let host: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
        } else {
            host = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[0]
        }
        guard HostAddress.isLoopback(String(host)) else { return nil }
        return String(url[..<slash])
        #endif
    }

    /// Returns once `origin` has warm connections, or after `waitLimit`.
    /// The first call starts the warm-up; calls meanwhile wait for the same one.
    func ready(_ origin: String, session: URLSession, delegate: SessionDelegate) async {
        let warmup = warmups.withLock { warmups -> Task<Void, Never> in
            if let warmup = warmups[origin] { return warmup }
            let warmup = Task { await self.warm(origin, session: session, delegate: delegate) }
            warmups[origin] = warmup
            return warmup
        }
        await Self.first(of: warmup, or: waitLimit)
    }

    /// Sends `connections` requests for `origin`'s root at once: each opens a
    /// connection of its own, since none is free while the others are under way.
    private func warm(_ origin: String, session: URLSession, delegate: SessionDelegate) async {
        guard let url = URL(string: origin + "/") else { return }
        var get = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: requestTimeout)
        get.httpMethod = "GET"
        let request = get, timeout = requestTimeout
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<connections {
                group.addTask { _ = await delegate.run(request, timeout: timeout, in: session) }
            }
        }
    }

    /// Waits until `task` ends or `limit` passes, whichever is first, and
    /// cancels neither.
    private static func first(of task: Task<Void, Never>, or limit: Duration) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let once = ResumeOnce(done)
            Task {
                await task.value
                once.resume()
            }
            Task {
                try? await Task.sleep(for: limit)
                once.resume()
            }
        }
    }

    /// A continuation that the first of several callers resumes.
    private final class ResumeOnce: Sendable {
        private let continuation: Mutex<CheckedContinuation<Void, Never>?>
        init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = Mutex(continuation) }
        func resume() { continuation.withLock { $0.take() }?.resume() }
    }
}
