import BooksyncKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line progress bar on stderr, shown only when stderr is a terminal and
/// the transfer lasts longer than a moment; redrawn at most ten times a second.
final class ProgressBar: Sendable {
    private struct State {
        var started: ContinuousClock.Instant?
        var lastDraw: ContinuousClock.Instant?
        var drawn = false
    }

    private let console: Console
    private let enabled: Bool
    private let state = Mutex(State())

    init(console: Console, enabled: Bool) {
        self.console = console
        self.enabled = enabled && isatty(2) != 0
    }

    var update: @Sendable (SyncProgress) -> Void {
        { [self] progress in self.draw(progress) }
    }

    private func draw(_ progress: SyncProgress) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let line: TerminalText? = state.withLock { s in
            if s.started == nil { s.started = now }
            guard now - s.started! > .milliseconds(300) else { return nil }
            if let last = s.lastDraw, now - last < .milliseconds(100), progress.done != progress.total { return nil }
            s.lastDraw = now
            s.drawn = true
            guard let total = progress.total, total > 0 else { return "\(progress.phase) \(progress.done)" }
            let width = 30
            let filled = min(width, progress.done * width / total)
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            return "\(progress.phase) [\(bar)] \(progress.done)/\(total)"
        }
        if let line { console.progress(line) }
    }

    /// Clears the bar so the results print on a clean line.
    func finish() {
        let drawn = state.withLock { $0.drawn }
        if drawn { console.progress("") }
    }
}
