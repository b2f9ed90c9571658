import Synchronization
import Testing
@testable import BooksyncCLI
@_spi(Remote) @testable import BooksyncKit

/// Plain progress lines and their time left, driven by a clock of the test's
/// own: a remote that answers at a fixed rate must get a time left that comes
/// true, at a bounded number of lines.
@Suite struct ProgressMeterTests {
    /// Reports `every` seconds of `batch` documents until `total`, from
    /// `start`; returns each line with the time it was printed, and the time
    /// the last report came.
    static func run(total: Int?, finalCount: Int, batch: Int, every: Double, start: Double = 0, phase: String = "downloading",
                    meter: inout ProgressMeter) -> (lines: [(at: Double, text: String)], end: Double) {
        var lines: [(at: Double, text: String)] = []
        var done = 0
        var now = start
        while done < finalCount {
            now += every
            done = min(finalCount, done + batch)
            for line in meter.record(SyncProgress(phase: phase, done: done, total: total), at: .seconds(now)) { lines.append((now, line)) }
        }
        return (lines, now)
    }

    /// The seconds a line says are left: `about 22 s left`, `about 3 min 20 s left`.
    static func secondsLeft(_ line: String) -> Double? {
        guard let range = line.range(of: "about ") else { return nil }
        let words = line[range.upperBound...].split(separator: " ")
        var seconds = 0.0
        var index = 0
        while index + 1 < words.count, let number = Double(words[index]) {
            switch words[index + 1] {
            case "s": seconds += number
            case "min": seconds += number * 60
            case "h": seconds += number * 3600
            default: return nil
            }
            index += 2
        }
        return seconds
    }

    /// A count that starts over within a phase (each part of a whole-database
    /// discovery once counted from zero) never shows a negative rate.
    @Test func aCountThatGoesBackNeverShowsANegativeRate() {
        var meter = ProgressMeter()
        var lines = Self.run(total: nil, finalCount: 40_000, batch: 1_000, every: 0.25, phase: "listing", meter: &meter).lines
        lines += Self.run(total: nil, finalCount: 20_000, batch: 500, every: 0.25, start: 10, phase: "listing", meter: &meter).lines
        #expect(lines.count >= 3, "\(lines)")
        for line in lines { #expect(!line.text.contains("-"), "\(line.text)") }
        #expect(lines.last?.text.hasSuffix("2,000/s") == true, "the second part's own rate: \(lines.map(\.text))")
    }

    @Test func aFixedRateGetsATimeLeftThatComesTrue() {
        var meter = ProgressMeter()
        // 4,000 documents a second: 500 every 0.125 s, 100,000 in all.
        let (lines, end) = Self.run(total: 100_000, finalCount: 100_000, batch: 500, every: 0.125, meter: &meter)
        #expect(lines.first?.text == "downloading 8,500 of 100,000 (8%), 4,000/s, about 23 s left")
        #expect(lines.first?.at == 2.125)
        #expect(lines.last?.text == "downloading 100,000 of 100,000 (100%) in 25 s")
        let predicting = lines.filter { $0.text.contains(" left") }
        #expect(predicting.count == 5)
        for line in predicting {
            let left = try! #require(Self.secondsLeft(line.text))
            // Rounded to whole seconds: within one second of the real end.
            #expect(abs(line.at + left - end) <= 1, "\(line.text) at \(line.at) s; ended at \(end) s")
        }
        // At most one line every five seconds, and the closing one.
        for (earlier, later) in zip(predicting, predicting.dropFirst()) { #expect(later.at - earlier.at >= 5) }
    }

    /// A server that slows down to a quarter of its pace: ten seconds later
    /// the time left is the new pace's, not the first one's.
    @Test func theTimeLeftFollowsASlowdown() {
        var meter = ProgressMeter()
        _ = Self.run(total: 60_000, finalCount: 20_000, batch: 500, every: 0.125, meter: &meter)  // 4,000/s for 5 s
        let (lines, end) = Self.run(total: 60_000, finalCount: 40_000, batch: 125, every: 0.125, start: 5, meter: &meter)  // then 1,000/s
        let late = lines.filter { $0.at >= 16 && $0.text.contains(" left") }
        #expect(!late.isEmpty)
        let remaining = 60_000 - 40_000
        for line in late {
            let left = try! #require(Self.secondsLeft(line.text))
            #expect(line.text.contains("1,000/s"), "\(line.text)")
            #expect(abs(line.at + left - (end + Double(remaining) / 1_000)) <= 1, "\(line.text) at \(line.at) s")
        }
    }

    @Test func aShortTransferPrintsNothing() {
        var meter = ProgressMeter()
        let (lines, _) = Self.run(total: 6_000, finalCount: 6_000, batch: 500, every: 0.125, meter: &meter)  // 1.5 s
        #expect(lines.isEmpty)
        #expect(meter.closingLine() == nil)
    }

    /// Without a total: the count and the rate, and a closing line with the
    /// time it took when the next phase starts.
    @Test func withoutATotalTheCountAndRateAndAClosingLineAtThePhaseChange() {
        var meter = ProgressMeter()
        let (lines, _) = Self.run(total: nil, finalCount: 30_000, batch: 1_000, every: 0.25, phase: "listing", meter: &meter)
        #expect(lines.map(\.text) == ["listing 9,000, 4,000/s", "listing 29,000, 4,000/s"])
        let next = meter.record(SyncProgress(phase: "downloading", done: 10, total: 20), at: .seconds(7.75))
        #expect(next == ["listing 30,000 in 7 s"])
        #expect(meter.closingLine() == nil)
    }

    @Test(arguments: [
        (0, "0"), (999, "999"), (1_000, "1,000"), (12_345, "12,345"), (100_000, "100,000"), (1_234_567, "1,234,567"), (-4_100, "-4,100"),
    ])
    func thousandsAreGroupedWithCommas(number: Int, text: String) {
        #expect(grouped(number) == text)
    }

    @Test(arguments: [
        (0.2, "1 s"), (22.4, "22 s"), (59.6, "1 min"), (200, "3 min 20 s"), (599, "9 min 59 s"), (840, "14 min"), (3_569, "59 min"), (3_580, "1 h"), (3_930, "1 h 6 min"), (7_200, "2 h"),
    ])
    func timeLeftIsAsPreciseAsUseful(seconds: Double, text: String) {
        #expect(ProgressMeter.duration(.seconds(seconds)) == text)
    }

    /// A redrawn line must not wrap: the time left goes first, then the
    /// rate, then the bar, and at worst the line is cut.
    @Test(arguments: [
        (80, "downloading [#              ] 120,000/1,000,000 4,000/s 3 min 40 s left"),
        (66, "downloading [#              ] 120,000/1,000,000 4,000/s"),
        (55, "downloading [#              ] 120,000/1,000,000"),
        (40, "downloading 120,000/1,000,000"),
        (20, "downloading 120,000"),
    ])
    func theBarFitsTheTerminal(columns: Int, expected: String) {
        var meter = ProgressMeter()
        _ = Self.run(total: 1_000_000, finalCount: 120_000, batch: 5_000, every: 1.25, meter: &meter)
        let line = meter.barLine(SyncProgress(phase: "downloading", done: 120_000, total: 1_000_000), at: .seconds(30), columns: columns)
        #expect(line == expected)
        #expect(line.count < columns)
    }

    /// A count lower than what is downloaded in the end (documents created
    /// after it): the counter drops the total when it is passed, and the
    /// phase closed at the old total goes on and closes again with the real count.
    @Test func aTotalThatWasTooLowIsDroppedAndThePhaseGoesOn() {
        let reports = Mutex<[SyncProgress]>([])
        let counter = ProgressCounter(phase: "downloading", total: nil, report: { progress in reports.withLock { $0.append(progress) } })
        counter.add(10_000)
        counter.add(10_000)
        counter.learnTotal(50_000)
        counter.add(30_000)
        counter.add(10_000)
        #expect(reports.withLock { $0.map(\.total) } == [nil, nil, 50_000, nil])
        var meter = ProgressMeter()
        var lines: [String] = []
        for (second, progress) in reports.withLock({ $0 }).enumerated() {
            lines += meter.record(progress, at: .seconds(Double(second) * 3))
        }
        #expect(lines == ["downloading 20,000, 3,333/s", "downloading 50,000 of 50,000 (100%) in 6 s"])
        #expect(meter.closingLine() == "downloading 60,000 in 9 s")
    }

    /// `-q` is applied before (`CommandLineTests.theProgressChoiceOrder`).
    @Test(arguments: [
        // choice, stderr a terminal, TERM, shown
        (ProgressChoice.auto, true, "xterm", ProgressChoice.bar),
        (.auto, false, "xterm", .plain),
        (.auto, true, "dumb", .plain),
        (.plain, true, "xterm", .plain),
        (.bar, false, "xterm", .bar),
        (.none, true, "xterm", .none),
    ])
    func autoDecidesFromTheTerminal(choice: ProgressChoice, terminal: Bool, term: String, shown: ProgressChoice) {
        #expect(choice.style(stderrIsTerminal: terminal, environment: ["TERM": term]) == shown)
    }
}
