@_spi(Remote) import BooksyncKit

/// The rate and time left of a transfer, and when a plain progress line is
/// due, from progress reports and the times they came at: the pure part of
/// `ProgressDisplay`, so tests can drive it with a clock of their own.
///
/// The rate is measured over the last ten seconds of the current phase, not
/// since the start, so the time left follows a transfer that slows down (a
/// throttled server) instead of promising the early pace.
struct ProgressMeter {
    /// A plain line at most this often, and the first only once the transfer
    /// has lasted this long: a short transfer prints nothing.
    struct Pacing: Sendable {
        var firstLineAfter: Duration = .seconds(2)
        var lineEvery: Duration = .seconds(5)
    }

    private struct Sample {
        let at: Duration
        let done: Int
    }

    let pacing: Pacing
    /// The transfer's latest report.
    private(set) var latest: SyncProgress?
    /// When the first report of all came: the transfer's start.
    private(set) var started: Duration?
    /// When the current phase's first and latest reports came.
    private var phaseStarted: Duration = .zero
    private var lastReport: Duration = .zero
    /// At most two a second, the last ten seconds of the current phase.
    private var samples: [Sample] = []
    private var lastLine: Duration?
    /// Whether the current phase has had a line, so its end gets one too.
    private var phaseHasLine = false
    /// Whether the current phase's end has had its line.
    private var phaseEnded = false

    init(pacing: Pacing = Pacing()) {
        self.pacing = pacing
    }

    /// Takes in a report that came `at` (time since any fixed origin).
    /// - Returns: The lines a log should get now: none mostly, the line that
    ///   closes the phase before when the phase changed, a line every
    ///   `lineEvery`, and the line that closes a phase whose total is reached.
    mutating func record(_ progress: SyncProgress, at now: Duration) -> [String] {
        var lines: [String] = []
        if started == nil { started = now }
        // A phase closed at its total that goes on (the total was too low) is open again.
        if phaseEnded, progress.phase == latest?.phase, progress.done > latest?.done ?? 0 { phaseEnded = false }
        if progress.phase != latest?.phase {
            if let closing = closingLine() { lines.append(closing) }
            phaseStarted = now
            samples = []
            phaseHasLine = false
            phaseEnded = false
        }
        // A count that went back (a caller counting each part from zero) starts
        // the rate over: measured across the drop it would be negative.
        if let done = samples.last?.done, progress.done < done { samples = [] }
        latest = progress
        lastReport = now
        if samples.last.map({ now - $0.at >= .milliseconds(500) }) ?? true {
            samples.append(Sample(at: now, done: progress.done))
        }
        // Keep one sample at least ten seconds old, so the window spans ten seconds.
        while samples.count > 2, now - samples[1].at >= .seconds(10) { samples.removeFirst() }
        if let total = progress.total, progress.done >= total {
            if let closing = closingLine() { lines.append(closing) }
        } else if now - started! >= pacing.firstLineAfter, lastLine.map({ now - $0 >= pacing.lineEvery }) ?? true {
            lines.append(progress.phase + " " + describe(progress, at: now))
            lastLine = now
            phaseHasLine = true
        }
        return lines
    }

    /// The line that closes the current phase (`uploading 8,000 of 8,000
    /// (100%) in 8 s`) if the phase had a line and has not been closed; the
    /// time is from the phase's first report to its last.
    mutating func closingLine() -> String? {
        guard phaseHasLine, !phaseEnded, let latest else { return nil }
        phaseEnded = true
        lastLine = lastReport
        return latest.phase + " " + Self.count(latest) + " in " + Self.duration(lastReport - phaseStarted)
    }

    /// Documents per second over the last ten seconds of the phase; nil
    /// before there are two reports half a second apart.
    func rate(at now: Duration) -> Double? {
        guard let first = samples.first, let latest, now - first.at >= .milliseconds(500) else { return nil }
        return Double(latest.done - first.done) / ((now - first.at) / .seconds(1))
    }

    /// Seconds until the total is reached at the current rate; nil without a
    /// total or a rate, or when nothing is left.
    func secondsLeft(at now: Duration) -> Double? {
        guard let latest, let total = latest.total, total > latest.done, let rate = rate(at: now), rate > 0 else { return nil }
        return Double(total - latest.done) / rate
    }

    /// `12,000 of 100,000 (12%), 4,000/s, about 22 s left`, or what of it is
    /// known: `12,000, 4,000/s` without a total.
    func describe(_ progress: SyncProgress, at now: Duration) -> String {
        ([Self.count(progress)] + pace(at: now, about: "about ")).joined(separator: ", ")
    }

    /// `4,100/s` and `about 22 s left`, each when known.
    private func pace(at now: Duration, about: String) -> [String] {
        var parts: [String] = []
        if let rate = rate(at: now) { parts.append(grouped(Int(rate.rounded())) + "/s") }
        if let left = secondsLeft(at: now) { parts.append(about + Self.duration(.seconds(left)) + " left") }
        return parts
    }

    /// `downloading [#              ] 12,000/100,000 4,000/s 22 s left`: one
    /// column short of `columns` at most (a line redrawn in place must not
    /// wrap), dropping the time left, then the rate, then the bar to fit.
    func barLine(_ progress: SyncProgress, at now: Duration, columns: Int = 80) -> String {
        let limit = max(1, columns - 1)
        var bar = ""
        var counted = grouped(progress.done)
        if let total = progress.total, total > 0 {
            let width = 15
            let filled = min(width, progress.done * width / total)
            bar = "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]"
            counted += "/" + grouped(total)
        }
        var pace = self.pace(at: now, about: "")
        func line() -> String { ([progress.phase, bar, counted] + pace).filter { !$0.isEmpty }.joined(separator: " ") }
        while line().count > limit, !pace.isEmpty { pace.removeLast() }
        if line().count > limit { bar = "" }
        return String(line().prefix(limit))
    }

    /// `12,000 of 100,000 (12%)`, or `12,000` without a total. The percentage
    /// is rounded down, so 100% means done.
    static func count(_ progress: SyncProgress) -> String {
        guard let total = progress.total, total > 0 else { return grouped(progress.done) }
        let percent = min(100, progress.done * 100 / total)
        return "\(grouped(progress.done)) of \(grouped(total)) (\(percent)%)"
    }

    /// `22 s`, `3 min 20 s`, `14 min`, `1 h 5 min`: as precise as is useful.
    static func duration(_ duration: Duration) -> String {
        let seconds = max(1, Int((duration / .seconds(1)).rounded()))
        switch seconds {
        case ..<60: return "\(seconds) s"
        case ..<600: return seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds / 60) min \(seconds % 60) s"
        case ..<3570: return "\((seconds + 30) / 60) min"
        default:
            let minutes = (seconds + 30) / 60
            return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
        }
    }
}
