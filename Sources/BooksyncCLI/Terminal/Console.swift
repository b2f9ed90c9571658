import Synchronization
@_spi(Remote) import BooksyncKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the CLI writes: results to stdout, diagnostics to stderr, buffered so
/// that 100,000 status lines are a handful of writes, not 100,000.
///
/// It writes only `TerminalText`: everything that came from outside is escaped
/// on the way in (the manual's Safety article), so this is the one gate to the terminal.
package final class Console: Sendable {
    package typealias Sink = @Sendable ([UInt8]) -> Void

    private let stdoutSink: Sink
    private let stderrSink: Sink
    private let buffer = Mutex<[UInt8]>([])
    /// Whether stdout may carry ANSI colour (decided from --color, the TTY and NO_COLOR).
    package let colorStdout: Bool
    package let colorStderr: Bool
    /// Whether stderr is a terminal, where a progress bar can be redrawn in place.
    package let stderrIsTerminal: Bool
    /// The width of that terminal, when known: a redrawn line must not wrap.
    package let stderrColumns: Int?

    package init(stdout: @escaping Sink, stderr: @escaping Sink, colorStdout: Bool, colorStderr: Bool, stderrIsTerminal: Bool = false,
                 stderrColumns: Int? = nil) {
        self.stdoutSink = stdout
        self.stderrSink = stderr
        self.colorStdout = colorStdout
        self.colorStderr = colorStderr
        self.stderrIsTerminal = stderrIsTerminal
        self.stderrColumns = stderrColumns
    }

    /// The process's real stdout and stderr.
    package static func standard(color: ColorChoice, environment: [String: String]) -> Console {
        Console(
            stdout: { writeAll(1, $0) }, stderr: { writeAll(2, $0) },
            colorStdout: color.enabled(isTerminal: isatty(1) != 0, environment: environment),
            colorStderr: color.enabled(isTerminal: isatty(2) != 0, environment: environment),
            stderrIsTerminal: isatty(2) != 0, stderrColumns: terminalColumns(environment: environment))
    }

    /// A console that writes nothing (a workspace's check of a command's options).
    func discarding() -> Console {
        Console(stdout: { _ in }, stderr: { _ in }, colorStdout: false, colorStderr: false)
    }

    /// A console whose stdout goes to `capture` and whose stderr is this one's
    /// (a workspace's `--json` gathers each collection's document).
    func capturingStdout(_ capture: @escaping Sink) -> Console {
        Console(stdout: capture, stderr: stderrSink, colorStdout: false, colorStderr: colorStderr, stderrIsTerminal: stderrIsTerminal,
                stderrColumns: stderrColumns)
    }

    /// A line on stdout.
    func out(_ line: TerminalText) {
        let flushNow: [UInt8]? = buffer.withLock { b in
            b.append(contentsOf: line.rendered.utf8)
            b.append(0x0A)
            guard b.count >= 64 * 1024 else { return nil }
            defer { b.removeAll(keepingCapacity: true) }
            return b
        }
        if let flushNow { stdoutSink(flushNow) }
    }

    /// A line on stderr; stdout is flushed first so the two interleave sensibly.
    func err(_ line: TerminalText) {
        flush()
        stderrSink(Array((line.rendered + "\n").utf8))
    }

    /// Replaces the progress line on stderr (carriage return, erase line); an
    /// empty `line` just clears it.
    func progress(_ line: TerminalText) {
        stderrSink(Array(("\r\u{1B}[K" + line.rendered).utf8))
    }

    package func flush() {
        let pending = buffer.withLock { b in
            defer { b.removeAll(keepingCapacity: true) }
            return b
        }
        if !pending.isEmpty { stdoutSink(pending) }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return  // a closed pipe: nothing sensible left to do with the output
            }
            offset += n
        }
    }
}

/// The columns of the terminal on stderr: its window size on Linux, else
/// `COLUMNS` when the shell exported it; nil when neither says.
private func terminalColumns(environment: [String: String]) -> Int? {
    #if os(Linux)
    var size = winsize()
    if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
    #endif
    return environment[EnvironmentVariable.columns].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
}

/// `--color auto|always|never`.
package enum ColorChoice: String, Sendable, CaseIterable {
    case auto, always, never

    /// Colour on a terminal only, and never when NO_COLOR is set (no-color.org) or TERM is dumb.
    func enabled(isTerminal: Bool, environment: [String: String]) -> Bool {
        if let noColor = environment[EnvironmentVariable.noColor], !noColor.isEmpty { return false }
        switch self {
        case .never: return false
        case .always: return true
        case .auto: return isTerminal && environment[EnvironmentVariable.terminal] != "dumb"
        }
    }
}

/// "1 file", "2 files".
func plural(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}

/// `4,100`: thousands grouped with commas, whatever the locale, so output
/// and logs read the same everywhere.
func grouped(_ number: Int) -> String {
    let digits = String(number.magnitude)
    var out = ""
    for (index, digit) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(digit)
    }
    return (number < 0 ? "-" : "") + out
}
