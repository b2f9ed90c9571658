#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads and writes of the watcher's socket that end by a deadline for the
/// whole exchange, not per call.
///
/// A socket timeout (`SO_RCVTIMEO`) bounds each read, and a peer that sends
/// one byte just before each runs out keeps every read alive: one byte every
/// 1.5 s held `status --offline` for 21 s, and such a client would hold the
/// single-threaded watch server, which drains the kernel's event queue
/// between questions, for as long as it liked. Here every wait is `poll`
/// for the time left before `deadline`, and every call is non-blocking.
enum SocketExchange {
    /// Everything the other end sends until it closes; nil past `limit`, an
    /// error, at `deadline`, or when it is silent for `idle`.
    static func readAll(_ fd: Int32, limit: Int, deadline: ContinuousClock.Instant, idle: Duration? = nil) -> [UInt8]? {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            guard wait(fd, for: Int16(POLLIN), deadline: deadline, idle: idle) else { return nil }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 { return out }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                return nil
            }
            out.append(contentsOf: chunk[0..<count])
            if out.count > limit { return nil }
        }
    }

    /// Sends all of `bytes` by `deadline`; false when time ran out or the
    /// other end went away (without the SIGPIPE that would end this process).
    static func sendAll(_ bytes: [UInt8], to fd: Int32, deadline: ContinuousClock.Instant) -> Bool {
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)
        #else
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        let flags = Int32(MSG_DONTWAIT)
        #endif
        var sent = 0
        while sent < bytes.count {
            guard wait(fd, for: Int16(POLLOUT), deadline: deadline, idle: nil) else { return false }
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, flags) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                return false
            }
            sent += n
        }
        return true
    }

    /// Waits until `fd` is ready for `events` (or has hung up or failed,
    /// which the next call then reports); false at `deadline`, or after
    /// `idle` without it becoming ready.
    private static func wait(_ fd: Int32, for events: Int16, deadline: ContinuousClock.Instant, idle: Duration?) -> Bool {
        while true {
            var left = deadline - ContinuousClock.now
            var idleFirst = false
            if let idle, idle < left { (left, idleFirst) = (idle, true) }
            guard left > .zero else { return false }
            let (seconds, attoseconds) = left.components
            // Rounded up: a wait of 0 ms would return at once and spin.
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var ready = pollfd(fd: fd, events: events, revents: 0)
            let count = poll(&ready, 1, milliseconds)
            if count > 0 { return true }
            // Timed out: silent for `idle`, or the deadline (the next turn finds it passed).
            if count == 0, idleFirst { return false }
            if count < 0, errno != EINTR { return false }
        }
    }
}
