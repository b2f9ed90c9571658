import Synchronization
import Testing
import BooksyncTestSupport
@testable import BooksyncCLI
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Plain progress lines of a real first pull (the engine, its late count of
/// the total, the display and a console), from a scripted remote that
/// answers at a fixed rate: the time left each line promises comes true.
///
/// The rate is the script's on a virtual clock, which the remote advances by
/// 100 ms per answer: on a machine busy with other tests, real sleeps of
/// 100 ms last seconds, and a test of the time left would test the scheduler.
@Suite struct ProgressLinesTests {
    /// A first pull (a dry run: the download is what is timed) from a remote
    /// of `documents` documents that answers 300 every 100 ms, on `clock`
    /// when given (and the real one otherwise).
    static func firstPull(documents count: Int, countTotalAfter: Duration?, pacing: ProgressMeter.Pacing, clock: VirtualClock? = nil,
                          knownTotal: Int? = nil)
        async throws -> (lines: [(at: Duration, text: String)], lastReport: Duration, remote: ScriptedRemote) {
        let scratch = try ScratchDirectory()
        let collection = try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: "p", collectionPath: "books")))
        let documents = try (0..<count).map { i in
            let id = try RecordID(String(format: "b%05d", i))
            let json = #"{"id": "\#(id.rawValue)", "title": "T\#(i)", "author": "A", "genre": "g"}"#
            return RemoteDocument(id: id, revision: "r1", content: .record(try collection.rules.load(Array(json.utf8), id: id).get()))
        }
        let remote = ScriptedRemote(documents: documents, delay: .milliseconds(100), listingBatch: 300, clock: clock,
                                    waitsForCount: clock != nil && countTotalAfter == .zero && knownTotal == nil)
        let origin = ContinuousClock.now
        let now: @Sendable () -> Duration = { clock?.now ?? ContinuousClock.now - origin }
        let lines = Mutex<[(at: Duration, text: String)]>([])
        let console = Console(stdout: { _ in }, stderr: { bytes in
            let at = now()
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") { lines.withLock { $0.append((at, String(line))) } }
        }, colorStdout: false, colorStderr: false)
        let display = ProgressDisplay(console: console, style: .plain, pacing: pacing, now: now)
        let lastReport = Mutex(Duration.zero)
        var options = SyncOptions()
        options.dryRun = true
        options.countTotalAfter = countTotalAfter
        options.knownTotal = knownTotal
        _ = try await collection.pull(remote: remote, options: options, progress: { progress in
            lastReport.withLock { $0 = now() }
            display.update(progress)
        })
        display.finish()
        return (lines.withLock { $0 }, lastReport.withLock { $0 }, remote)
    }

    @Test func aFixedRateRemoteGetsATimeLeftThatComesTrue() async throws {
        // 12,300 documents at 3,000 a second: 4.1 s on the virtual clock.
        let (lines, end, remote) = try await Self.firstPull(documents: 12_300, countTotalAfter: .zero,
                                                            pacing: ProgressMeter.Pacing(firstLineAfter: .seconds(1), lineEvery: .seconds(1)),
                                                            clock: VirtualClock())
        #expect(remote.countRequests.withLock { $0 } == 1)
        let predicting = lines.filter { $0.text.contains(" left") }
        #expect(predicting.count >= 2, "\(lines.map(\.text))")
        for line in predicting {
            #expect(line.text.hasPrefix("downloading ") && line.text.contains(" of 12,300 ("), "\(line.text)")
            let left = try #require(ProgressMeterTests.secondsLeft(line.text))
            let actual = (end - line.at) / .seconds(1)
            // Rounded to whole seconds: within half a second.
            #expect(abs(left - actual) <= 0.5, "\(line.text) at \(line.at); the download ended \(actual) s later")
        }
        #expect(lines.last?.text.hasPrefix("downloading 12,300 of 12,300 (100%) in ") == true, "\(lines.map(\.text))")
    }

    /// A transfer shorter than the wait for a count never asks for one (it
    /// would cost billed reads for a number nobody sees), and prints nothing.
    @Test func aShortTransferAsksNoCountAndPrintsNothing() async throws {
        // The count waits an hour of real time: a machine busy with other
        // tests has stalled this pull for over a minute.
        let (lines, _, remote) = try await Self.firstPull(documents: 900, countTotalAfter: .seconds(3_600), pacing: ProgressMeter.Pacing(),
                                                          clock: VirtualClock())
        #expect(remote.countRequests.withLock { $0 } == 0)
        #expect(lines.isEmpty)
    }

    /// Without `countTotalAfter` (an app's pull) the total stays unknown and
    /// the remote is never asked: lines give the count and the rate only.
    @Test func withoutCountingTheLinesHaveNoTimeLeft() async throws {
        let (lines, _, remote) = try await Self.firstPull(documents: 6_000, countTotalAfter: nil,
                                                          pacing: ProgressMeter.Pacing(firstLineAfter: .seconds(1), lineEvery: .seconds(1)),
                                                          clock: VirtualClock())
        #expect(remote.countRequests.withLock { $0 } == 0)
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { !$0.text.contains(" of ") && !$0.text.contains(" left") }, "\(lines.map(\.text))")
    }

    /// A total the caller knows (a clone's discovery counted the documents)
    /// is shown from the start and no `count()` is asked: the clone bills
    /// what its dry run said, to the read.
    @Test func aKnownTotalIsShownWithoutACount() async throws {
        let (lines, _, remote) = try await Self.firstPull(documents: 6_000, countTotalAfter: .zero,
                                                          pacing: ProgressMeter.Pacing(firstLineAfter: .seconds(1), lineEvery: .seconds(1)),
                                                          clock: VirtualClock(), knownTotal: 6_000)
        #expect(remote.countRequests.withLock { $0 } == 0)
        #expect(lines.contains { $0.text.contains(" of 6,000 (") }, "\(lines.map(\.text))")
    }
}
