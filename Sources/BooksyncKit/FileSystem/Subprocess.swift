#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs other programs (git, a token command) with `posix_spawn`, found on
/// `PATH`, with the environment of this process. Foundation's `Process` would
/// do the same, but linking Foundation costs every command milliseconds of
/// start-up (see `BooksyncCommand` and <doc:Architecture>).
package enum Subprocess {
    /// The exit status of `arguments` (127 if it could not be started), and
    /// what it printed on standard output if `captureOutput`. Standard error
    /// and input are /dev/null.
    package static func run(_ arguments: [String], captureOutput: Bool = false) -> (status: Int32, output: [UInt8]) {
        guard !arguments.isEmpty else { return (127, []) }
        var output: Pipe?
        if captureOutput {
            guard let pipe = Pipe() else { return (127, []) }
            output = pipe
        }
        guard let pid = spawn(arguments, output: output?.write, error: nil, newGroup: false) else {
            if let output { close(output.read) }
            return (127, [])
        }
        var printed: [UInt8] = []
        if let output {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(output.read, &buffer, buffer.count)
                if n > 0 {
                    printed += buffer[0..<n]
                } else if n < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(output.read)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return (exitStatus(status), printed)
    }

    /// What a bounded run produced: exit status (nil when it was killed for
    /// running out of time), standard output and standard error.
    package struct Captured: Sendable, Equatable {
        /// The exit status; 128 + the signal number when a signal ended it, 127
        /// when it could not be started, nil when it was killed for running out of time.
        package var status: Int32?
        /// Standard output, at most the `limit` given to `capture`.
        package var output: [UInt8]
        /// Standard error, at most the `limit` given to `capture`.
        package var error: [UInt8]
        /// Whether the program was killed for running out of time.
        package var timedOut: Bool { status == nil }
    }

    /// Runs `arguments` with standard input from /dev/null, capturing standard
    /// output and standard error (each up to `limit` bytes; the rest is read
    /// and dropped), for at most `timeout` seconds. The program runs in a
    /// process group of its own, and the whole group is killed when time runs
    /// out, so a shell's children (`sh -c 'sleep 30'`) go too and cannot hold
    /// the pipes open. Status 127 if it could not be started.
    package static func capture(_ arguments: [String], timeout: Double, limit: Int = 1 << 20) -> Captured {
        guard !arguments.isEmpty, let outPipe = Pipe() else { return Captured(status: 127, output: [], error: []) }
        guard let errPipe = Pipe() else {
            close(outPipe.read)
            close(outPipe.write)
            return Captured(status: 127, output: [], error: [])
        }
        // A new process group (its id is the child's pid), to kill as a whole.
        let spawned = spawn(arguments, output: outPipe.write, error: errPipe.write, newGroup: true)
        defer {
            close(outPipe.read)
            close(errPipe.read)
        }
        guard let pid = spawned else { return Captured(status: 127, output: [], error: []) }

        let deadline = ContinuousClock.now + .milliseconds(Int(max(0, timeout) * 1000))
        var output: [UInt8] = []
        var error: [UInt8] = []
        var open = [true, true]
        var exited: Int32?
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if exited == nil {
                var raw: Int32 = 0
                let reaped = waitpid(pid, &raw, WNOHANG)
                if reaped == pid { exited = exitStatus(raw) } else if reaped < 0, errno != EINTR { exited = 127 }
            }
            let left = deadline - ContinuousClock.now
            if left <= .zero {
                guard exited == nil else { break }  // exited; something it started still writes: enough
                // Still running: kill the group while its leader is unreaped (its id cannot be reused yet).
                kill(-pid, SIGKILL)
                var raw: Int32 = 0
                while waitpid(pid, &raw, 0) < 0, errno == EINTR {}
                return Captured(status: nil, output: output, error: error)
            }
            if !open[0] && !open[1] {
                if exited != nil { break }
                usleep(5_000)  // pipes closed, the program exiting
                continue
            }
            // Once the program has exited, take only what is already there: a
            // background child it left may hold the pipes open for ever.
            let wait = exited != nil ? 0 : Int32(min(left.components.seconds * 1000 + 1, 50))
            var fds = [outPipe.read, errPipe.read].enumerated().map { i, fd in pollfd(fd: open[i] ? fd : -1, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), wait)
            if ready < 0, errno != EINTR { break }
            if ready == 0, exited != nil { break }
            for i in 0..<2 where open[i] && fds[i].revents != 0 {
                let n = read(fds[i].fd, &buffer, buffer.count)
                if n > 0 {
                    if i == 0 {
                        if output.count < limit { output += buffer[0..<min(n, limit - output.count)] }
                    } else if error.count < limit {
                        error += buffer[0..<min(n, limit - error.count)]
                    }
                } else if n == 0 || errno != EINTR {
                    open[i] = false
                }
            }
        }
        return Captured(status: exited ?? 127, output: output, error: error)
    }

    /// A pipe whose ends are not inherited by programs other threads start
    /// meanwhile (they would hold the write end open).
    private struct Pipe {
        let read: Int32
        let write: Int32

        /// Nil if no pipe could be made.
        init?() {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { return nil }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            (read, write) = (ends[0], ends[1])
        }
    }

    /// Starts `arguments` (found on `PATH`, with this process's environment)
    /// with standard input from /dev/null and standard output and error into
    /// the given pipe write ends, or /dev/null; the write ends are closed here
    /// once the child holds them. Nil if the program could not be started.
    private static func spawn(_ arguments: [String], output: Int32?, error: Int32?, newGroup: Bool) -> pid_t? {
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        for (fd, end) in [(Int32(1), output), (2, error)] {
            if let end {
                posix_spawn_file_actions_adddup2(&actions, end, fd)
            } else {
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
            }
        }
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var attributes = freshProcessAttributes(newGroup: newGroup)
        defer { posix_spawnattr_destroy(&attributes) }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, &attributes, &cArguments, currentEnvironment)
        for end in [output, error] { if let end { close(end) } }
        return spawned == 0 ? pid : nil
    }

    #if canImport(Darwin)
    typealias SpawnAttributes = posix_spawnattr_t?
    #else
    typealias SpawnAttributes = posix_spawnattr_t
    #endif

    /// Spawn attributes for the signal state of a fresh process: a child
    /// inherits the calling thread's mask, and booksync's worker threads block
    /// most signals (a shell with SIGCHLD blocked waits for ever in `wait`).
    /// Destroy them with `posix_spawnattr_destroy`.
    static func freshProcessAttributes(newGroup: Bool) -> SpawnAttributes {
        #if canImport(Darwin)
        var attributes: posix_spawnattr_t? = nil
        #else
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawnattr_init(&attributes)
        let flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (newGroup ? POSIX_SPAWN_SETPGROUP : 0)
        posix_spawnattr_setflags(&attributes, Int16(flags))
        if newGroup { posix_spawnattr_setpgroup(&attributes, 0) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        return attributes
    }

    /// WIFEXITED / WEXITSTATUS, spelled out: the C macros are not imported.
    static func exitStatus(_ status: Int32) -> Int32 {
        status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// This process's environment block (`environ`, which Darwin does not declare).
    package static var currentEnvironment: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> {
        #if canImport(Darwin)
        return _NSGetEnviron()!.pointee!
        #else
        return environ
        #endif
    }
}
