@_spi(Remote) import BooksyncKit
import Synchronization

/// `--progress auto|bar|plain|none`: how long transfers show their progress on stderr.
package enum ProgressChoice: String, Sendable, CaseIterable {
    /// A bar on a terminal, plain lines otherwise (a CI log).
    case auto
    /// A bar redrawn in place, even when stderr is not a terminal.
    case bar
    /// A line every few seconds (`downloading 12,000 of 100,000 (12%), 4,000/s, about 22 s left`).
    case plain
    /// Nothing.
    case none

    /// What to show: `auto` decides from the terminal (a dumb one cannot
    /// redraw a line, so it gets plain lines); the others are taken as they
    /// are. `-q` was applied before (`BooksyncCommand.progressChoice`).
    func style(stderrIsTerminal: Bool, environment: [String: String]) -> ProgressChoice {
        guard self == .auto else { return self }
        return stderrIsTerminal && environment[EnvironmentVariable.terminal] != "dumb" ? .bar : .plain
    }
}

/// Progress of a transfer on stderr, as `--progress` chose: a one-line bar
/// redrawn at most ten times a second once the transfer lasts longer than a
/// moment, or plain lines at a bounded rate (`ProgressMeter.Pacing`) that a
/// CI log can show as they come. Both say the rate and the time left when
/// the total is known.
final class ProgressDisplay: Sendable {
    private struct State {
        var meter: ProgressMeter
        var lastDraw: Duration?
        var drawn = false
    }

    private let console: Console
    private let style: ProgressChoice
    /// The time since the display was made; a test's clock in tests.
    private let now: @Sendable () -> Duration
    private let state: Mutex<State>

    init(console: Console, style: ProgressChoice, pacing: ProgressMeter.Pacing = ProgressMeter.Pacing(),
         now: (@Sendable () -> Duration)? = nil) {
        self.console = console
        self.style = style
        self.state = Mutex(State(meter: ProgressMeter(pacing: pacing)))
        let origin = ContinuousClock.now
        self.now = now ?? { ContinuousClock.now - origin }
    }

    /// Whether anything is shown: a remote count for the total is worth its reads only then.
    var showsProgress: Bool { style != .none }

    var update: @Sendable (SyncProgress) -> Void {
        { [self] progress in self.show(progress) }
    }

    private func show(_ progress: SyncProgress) {
        switch style {
        case .none, .auto: return
        case .plain:
            // Under the lock, so lines from parallel requests come out in the meter's order.
            state.withLock { s in
                for line in s.meter.record(progress, at: now()) { console.err(TerminalText(trusted: line)) }
            }
        case .bar:
            if let line = barLine(progress) { console.progress(line) }
        }
    }

    private func barLine(_ progress: SyncProgress) -> TerminalText? {
        state.withLock { s in
            // Read under the lock, so the meter sees times in order.
            let now = self.now()
            _ = s.meter.record(progress, at: now)
            guard let started = s.meter.started, now - started > .milliseconds(300) else { return nil }
            if let last = s.lastDraw, now - last < .milliseconds(100), progress.done != progress.total { return nil }
            s.lastDraw = now
            s.drawn = true
            return TerminalText(trusted: s.meter.barLine(progress, at: now, columns: console.stderrColumns ?? 80))
        }
    }

    /// Clears the bar so the results print on a clean line, or closes the
    /// last phase's plain lines (`downloading 40,300 in 8 s`). Safe to call twice.
    func finish() {
        switch style {
        case .none, .auto: return
        case .plain:
            let line = state.withLock { $0.meter.closingLine() }
            if let line { console.err(TerminalText(trusted: line)) }
        case .bar:
            let drawn = state.withLock { s in
                defer { s.drawn = false }
                return s.drawn
            }
            if drawn { console.progress("") }
        }
    }
}
