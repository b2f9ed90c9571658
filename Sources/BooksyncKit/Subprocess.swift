#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs other programs (git, a token command) with `posix_spawn`, found on
/// `PATH`, with the environment of this process. Foundation's `Process` would
/// do the same, but linking Foundation costs every command milliseconds of
/// start-up (see `BooksyncCommand` and the README's "Two executables").
public enum Subprocess {
    /// The exit status of `arguments` (127 if it could not be started), and
    /// what it printed on standard output if `captureOutput`. Standard error
    /// and input are /dev/null.
    public static func run(_ arguments: [String], captureOutput: Bool = false) -> (status: Int32, output: [UInt8]) {
        guard !arguments.isEmpty else { return (127, []) }
        var pipeEnds: [Int32] = [-1, -1]
        if captureOutput {
            guard pipe(&pipeEnds) == 0 else { return (127, []) }
            // Not inherited by programs other threads start meanwhile (they would hold the write end open).
            for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        }
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
            posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
            posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, &cArguments, currentEnvironment)
        if captureOutput { close(pipeEnds[1]) }
        guard spawned == 0 else {
            if captureOutput { close(pipeEnds[0]) }
            return (127, [])
        }
        var output: [UInt8] = []
        if captureOutput {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(pipeEnds[0], &buffer, buffer.count)
                if n > 0 {
                    output += buffer[0..<n]
                } else if n < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(pipeEnds[0])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        // WIFEXITED / WEXITSTATUS, spelled out: the C macros are not imported.
        let exited = status & 0x7F == 0
        return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), output)
    }

    /// This process's environment block (`environ`, which Darwin does not declare).
    public static var currentEnvironment: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> {
        #if canImport(Darwin)
        return _NSGetEnviron()!.pointee!
        #else
        return environ
        #endif
    }
}
