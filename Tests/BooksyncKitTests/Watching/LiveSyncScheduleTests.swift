import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// When a live sync pushes and polls: debounce, the longest wait, retries and counted polls, on a virtual time line.
struct LiveSyncScheduleTests {
    static func id(_ name: String) -> RecordID { try! RecordID(name) }
    static func ms(_ n: Int64) -> Duration { .milliseconds(n) }

    static var settings: LiveSyncSchedule.Settings {
        var settings = LiveSyncSchedule.Settings()
        settings.debounce = ms(200)
        settings.longestWait = ms(1000)
        settings.pollInterval = ms(5000)
        settings.countEvery = 3
        settings.retryDelay = ms(2000)
        return settings
    }

    /// (changes at these times, asked at, expected action): a push waits for
    /// 200 ms of quiet, or 1 s after the first change.
    struct Debounce: Sendable, CustomTestStringConvertible {
        let changes: [Int64]
        let now: Int64
        let pushes: Bool
        var testDescription: String { "changes at \(changes) ms, asked at \(now) ms" }
    }

    static let debounceCases: [Debounce] = [
        Debounce(changes: [0], now: 100, pushes: false),
        Debounce(changes: [0], now: 200, pushes: true),
        Debounce(changes: [0, 150], now: 300, pushes: false),
        Debounce(changes: [0, 150], now: 350, pushes: true),
        Debounce(changes: [0, 150, 300, 450, 600, 750, 900], now: 999, pushes: false),
        Debounce(changes: [0, 150, 300, 450, 600, 750, 900], now: 1000, pushes: true),
    ]

    @Test(arguments: debounceCases)
    func aSaveIsPushedAfterQuietOrTheLongestWait(_ example: Debounce) {
        var schedule = LiveSyncSchedule(Self.settings)
        for time in example.changes { schedule.noteLocalChanges([Self.id("dune")], at: Self.ms(time)) }
        let now = example.now
        let due = schedule.due(at: Self.ms(now))
        #expect(due == (example.pushes ? .push([Self.id("dune")]) : nil))
        if !example.pushes {
            let wake = schedule.nextWake(after: Self.ms(now))
            #expect(wake != nil && wake! > Self.ms(now), "it says when to look again")
        }
    }

    /// A save made while a push runs is not taken as pushed.
    @Test func aSaveDuringAPushStaysPending() {
        var schedule = LiveSyncSchedule(Self.settings)
        schedule.noteLocalChanges([Self.id("dune")], at: Self.ms(0))
        #expect(schedule.due(at: Self.ms(200)) == .push([Self.id("dune")]))
        #expect(schedule.startPush(at: Self.ms(200)) == [Self.id("dune")])
        schedule.noteLocalChanges([Self.id("dune")], at: Self.ms(250))
        #expect(schedule.hasPendingChanges)
        #expect(schedule.due(at: Self.ms(450)) == .push([Self.id("dune")]))
    }

    /// A failed push keeps its records and waits `retryDelay`; "everything" stays everything.
    @Test func aFailedPushIsRetriedLater() {
        var schedule = LiveSyncSchedule(Self.settings)
        schedule.noteLocalChanges([], everything: true, at: Self.ms(0))
        #expect(schedule.due(at: Self.ms(200)) == .push(nil))
        let taken = schedule.startPush(at: Self.ms(200))
        #expect(taken == nil)
        schedule.noteLocalChanges([Self.id("emma")], at: Self.ms(300))
        schedule.pushFailed(taken, retrying: true, at: Self.ms(400))
        #expect(schedule.due(at: Self.ms(2399)) == nil, "not before the retry delay")
        #expect(schedule.due(at: Self.ms(2400)) == .push(nil))
        #expect(schedule.startPush(at: Self.ms(2400)) == nil)
        #expect(!schedule.hasPendingChanges)
    }

    /// Polls come every interval, every third one counted; a failed poll is tried again sooner.
    @Test func pollsAreCountedEveryNth() {
        var schedule = LiveSyncSchedule(Self.settings)
        #expect(schedule.due(at: Self.ms(4999)) == nil)
        var now: Int64 = 5000
        var counted: [Bool] = []
        for _ in 0..<6 {
            guard case .pull(let counting)? = schedule.due(at: Self.ms(now)) else {
                Issue.record("no poll at \(now) ms")
                return
            }
            counted.append(counting)
            schedule.polled(counting: counting, .readChanges, at: Self.ms(now))
            now += 5000
        }
        #expect(counted == [false, false, true, false, false, true])
        schedule.polled(counting: false, .failedRetrying, at: Self.ms(now))
        #expect(schedule.due(at: Self.ms(now + 1999)) == nil)
        #expect(schedule.due(at: Self.ms(now + 2000)) == .pull(counting: false), "a failure does not count as a poll")
    }

    /// Failures in a row wait twice as long each time, up to a minute, so a
    /// failure that does not pass costs a request a minute; a success starts over.
    @Test func repeatedFailuresBackOff() {
        var schedule = LiveSyncSchedule(Self.settings)
        var now: Int64 = 5000
        #expect(schedule.due(at: Self.ms(now)) == .pull(counting: false))
        var waits: [Int64] = []
        for _ in 0..<8 {
            schedule.polled(counting: false, .failedRetrying, at: Self.ms(now))
            var next = now + 1
            while schedule.due(at: Self.ms(next)) == nil { next += 1 }
            waits.append(next - now)
            now = next
        }
        #expect(waits == [2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000])
        schedule.polled(counting: false, .readChanges, at: Self.ms(now))
        schedule.polled(counting: false, .failedRetrying, at: Self.ms(now + 5000))
        #expect(schedule.due(at: Self.ms(now + 6999)) == nil)
        #expect(schedule.due(at: Self.ms(now + 7000)) == .pull(counting: false), "a success starts the backoff over")

        var withoutPolls = Self.settings
        withoutPolls.pollInterval = nil
        var pushes = LiveSyncSchedule(withoutPolls)
        pushes.noteLocalChanges([Self.id("dune")], at: Self.ms(0))
        var at: Int64 = 200
        var pushWaits: [Int64] = []
        for _ in 0..<3 {
            let taken = pushes.startPush(at: Self.ms(at))
            pushes.pushFailed(taken, retrying: true, at: Self.ms(at))
            var next = at + 1
            while pushes.due(at: Self.ms(next)) != .push([Self.id("dune")]) { next += 1 }
            pushWaits.append(next - at)
            at = next
        }
        #expect(pushWaits == [2000, 4000, 8000])
        _ = pushes.startPush(at: Self.ms(at))
        pushes.pushSucceeded()
        pushes.noteLocalChanges([Self.id("emma")], at: Self.ms(at))
        pushes.pushFailed([Self.id("emma")], retrying: true, at: Self.ms(at + 300))
        #expect(pushes.due(at: Self.ms(at + 2299)) == nil)
        #expect(pushes.due(at: Self.ms(at + 2300)) == .push([Self.id("emma")]))
    }

    /// Pushes go first: a due push and a due poll give the push.
    @Test func aPushGoesBeforeAPoll() {
        var schedule = LiveSyncSchedule(Self.settings)
        schedule.noteLocalChanges([Self.id("dune")], at: Self.ms(4900))
        #expect(schedule.due(at: Self.ms(5100)) == .push([Self.id("dune")]))
        _ = schedule.startPush(at: Self.ms(5100))
        #expect(schedule.due(at: Self.ms(5100)) == .pull(counting: false))
    }

    /// Without polling nothing is due but pushes.
    @Test func withoutAnIntervalItNeverPolls() {
        var settings = Self.settings
        settings.pollInterval = nil
        let schedule = LiveSyncSchedule(settings)
        #expect(schedule.due(at: .seconds(3600)) == nil)
        #expect(schedule.nextWake(after: .zero) == nil)
    }

    /// A refused push (the mass-delete guard) is not retried by itself, but
    /// its records go with the next push a save starts: no save is dropped.
    @Test func aRefusedPushsRecordsGoWithTheNextPush() {
        var schedule = LiveSyncSchedule(Self.settings)
        schedule.noteLocalChanges([Self.id("b1"), Self.id("gone")], at: Self.ms(0))
        let taken = schedule.startPush(at: Self.ms(200))
        schedule.pushFailed(taken, retrying: false, at: Self.ms(300))
        #expect(!schedule.hasPendingChanges && schedule.hasDeferredChanges)
        #expect(schedule.due(at: Self.ms(4000)) == nil, "not retried by itself")
        schedule.noteLocalChanges([Self.id("gone")], at: Self.ms(4000))
        #expect(schedule.due(at: Self.ms(4200)) == .push([Self.id("gone")]))
        #expect(schedule.startPush(at: Self.ms(4200)) == [Self.id("b1"), Self.id("gone")], "the deferred save goes too")
        #expect(!schedule.hasDeferredChanges)
    }

    /// Polls keep their rate: one that overran its interval does not shift the
    /// ones after it, and the missed ones are skipped, not made up.
    @Test func pollsKeepTheirRate() {
        var schedule = LiveSyncSchedule(Self.settings)
        schedule.polled(counting: false, .readChanges, at: Self.ms(5300))
        #expect(schedule.due(at: Self.ms(9999)) == nil)
        #expect(schedule.due(at: Self.ms(10000)) == .pull(counting: false), "due at 10 s, not 10.3 s")
        schedule.polled(counting: false, .readChanges, at: Self.ms(21000))
        #expect(schedule.due(at: Self.ms(24999)) == nil)
        #expect(schedule.due(at: Self.ms(25000)) != nil, "15 and 20 s were skipped")
    }

    /// A poll that had to list every name slows the polls to `listingInterval`;
    /// a refused counted poll comes back at its interval, not every 2 s.
    @Test func costlyOrRefusedPollsAreNotRepeatedQuickly() {
        var schedule = LiveSyncSchedule(Self.settings)
        schedule.polled(counting: false, .listedEveryName, at: Self.ms(5000))
        #expect(schedule.due(at: Self.ms(304_999)) == nil)
        #expect(schedule.due(at: Self.ms(305_000)) != nil)
        var readBack = LiveSyncSchedule(Self.settings)
        readBack.polled(counting: false, .readBackMany, at: Self.ms(5000))
        #expect(readBack.due(at: Self.ms(69_999)) == nil, "a bulk write is not read back at every poll")
        #expect(readBack.due(at: Self.ms(70_000)) != nil)
        var refused = LiveSyncSchedule(Self.settings)
        refused.polled(counting: true, .failed, at: Self.ms(5100))
        #expect(refused.due(at: Self.ms(9999)) == nil)
        #expect(refused.due(at: Self.ms(10000)) == .pull(counting: false), "the next count comes at its turn")
    }

    /// A save that is settling holds the poll back (at most `longestWait`):
    /// a poll's round would otherwise hold the save up.
    @Test func aSettlingSaveGoesBeforeADuePoll() {
        var schedule = LiveSyncSchedule(Self.settings)
        schedule.noteLocalChanges([Self.id("dune")], at: Self.ms(4950))
        #expect(schedule.due(at: Self.ms(5000)) == nil, "the poll waits for the save to settle")
        #expect(schedule.nextWake(after: Self.ms(5000)) == Self.ms(5150))
        #expect(schedule.due(at: Self.ms(5150)) == .push([Self.id("dune")]))
        _ = schedule.startPush(at: Self.ms(5150))
        #expect(schedule.due(at: Self.ms(5160)) == .pull(counting: false))
    }
}
