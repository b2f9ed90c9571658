@_spi(Remote) import BooksyncKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How this executable reaches Firestore.
///
/// `booksync` itself does not link URLSession: on Linux, FoundationNetworking
/// and the libcurl, TLS and ICU libraries it loads add to every start as
/// much as a whole `status --offline` of a mid-sized collection takes
/// otherwise (<doc:Benchmarks>). A command that needs the network re-runs the same command line
/// in `booksync-network`, installed beside it: the same program with URLSession
/// linked in (git keeps libcurl out of git the same way, in git-remote-https).
package enum NetworkAccess: Sendable {
    /// This executable links a transport; `make(requestTimeout)` builds it.
    case linked(make: @Sendable (_ requestTimeout: Duration) -> HTTPTransport)
    /// This executable has none: hand the command to the named executable
    /// in the same directory.
    case helper(name: String)

    /// The helper of the `booksync` executable.
    package static let networkHelper = NetworkAccess.helper(name: "booksync-network")
}

extension NetworkAccess {
    /// Whether this executable links a transport (it is `booksync-network`).
    var isLinked: Bool {
        if case .linked = self { return true }
        return false
    }

    /// Replaces this process with `helper` beside the running executable, same
    /// arguments and environment. Returns only if that failed, with the reason.
    static func execute(helper: String, arguments: [String], environment: [String: String]) -> BooksyncError {
        // Ctrl-C already pressed: do not start the command over in the helper.
        if Task.isCancelled { return .interrupted }
        guard let own = currentExecutable() else {
            return .remote(.configuration("cannot find the booksync executable to locate \(helper) beside it"))
        }
        let path = FileSystem.split(own).directory + "/" + helper
        guard FileSystem.exists(path) else {
            return .remote(.configuration("\(path) is missing: remote commands run through it; install it beside booksync"))
        }
        // The helper starts as a fresh process would (this runs on a worker
        // thread, which blocks some signals), every signal at its default,
        // except that the stopping signals stay blocked across the exec: one
        // sent while the helper starts waits until its `main` listens for it,
        // instead of killing it before it can stop cleanly. Signals ignored
        // when booksync started (`nohup`) stay ignored.
        guard let before = StoppingSignals.beginHandoff() else { return .interrupted }
        if Task.isCancelled {
            StoppingSignals.endHandoff(restoring: before)
            return .interrupted
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        execve(path, argv, envp)
        let reason = String(cString: strerror(errno))
        for pointer in argv + envp { free(pointer) }
        StoppingSignals.endHandoff(restoring: before)  // not started: signals stop the command again
        return .remote(.configuration("cannot run \(path): \(reason)"))
    }

    /// The absolute path of the running executable, symlinks resolved.
    static func currentExecutable() -> String? {
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if n > 0 { return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        // No /proc (some chroots and sandboxes): the path it was started by, if it has one.
        guard let started = CommandLine.arguments.first, started.contains("/"), let resolved = realpath(started, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
        #elseif canImport(Darwin)
        var size: UInt32 = 0
        _ = _NSGetExecutablePath(nil, &size)
        var buffer = [CChar](repeating: 0, count: Int(size) + 1)
        guard _NSGetExecutablePath(&buffer, &size) == 0, let resolved = realpath(buffer, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
        #else
        return nil
        #endif
    }
}
