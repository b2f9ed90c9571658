import Testing
@_spi(Remote) @testable import BooksyncKit

/// The journal's answers: the paths since a token, or "cannot vouch" once
/// events were lost or for a token it never gave.
@Suite struct ChangeJournalTests {
    @Test func pathsChangedSinceEachToken() {
        var journal = ChangeJournal(instance: 7)
        let start = journal.token
        journal.record("dune.json")
        let middle = journal.token
        journal.record("a/b.json")
        journal.record("dune.json")
        #expect(journal.changes(since: start) == .changed(["dune.json", "a/b.json"]))
        #expect(journal.changes(since: middle) == .changed(["dune.json", "a/b.json"]))
        #expect(journal.changes(since: journal.token) == .changed([]))
    }

    @Test func lostEventsAreNeverVouchedFor() {
        var journal = ChangeJournal(instance: 7)
        let before = journal.token
        journal.record("dune.json")
        journal.loseTrack(.overflow)
        let after = journal.token
        journal.record("emma.json")
        #expect(journal.changes(since: before) == .cannotVouch(.overflow))
        #expect(journal.changes(since: after) == .changed(["emma.json"]))
        journal.loseTrack(.folderReplaced("dune/reviews"))
        #expect(journal.changes(since: after) == .cannotVouch(.folderReplaced("dune/reviews")))
    }

    @Test(arguments: [
        ChangeJournal.Token(instance: 8, sequence: 0),  // another run of the watcher
        ChangeJournal.Token(instance: 7, sequence: 99),  // from the future
    ])
    func unknownTokensAreNeverVouchedFor(token: ChangeJournal.Token) {
        var journal = ChangeJournal(instance: 7)
        journal.record("dune.json")
        #expect(journal.changes(since: token) == .cannotVouch(.unknownToken))
    }

    @Test(arguments: [("12:34", ChangeJournal.Token(instance: 12, sequence: 34)), ("12", nil), ("a:1", nil), ("1:2:3", nil), ("", nil), ("-1:2", nil)])
    func tokensReadBackFromText(text: String, token: ChangeJournal.Token?) {
        #expect(ChangeJournal.Token(text) == token)
        if let token { #expect(token.description == text) }
    }

    /// Memory is bounded by distinct paths: one path saved ten thousand
    /// times is one entry, answers stay exact across the log's compactions,
    /// and one path more than the journal keeps forgets them all, which
    /// older tokens are told.
    @Test func theJournalKeepsDistinctPathsUpToItsLimit() {
        var journal = ChangeJournal(instance: 7, maximumPaths: 3)
        let start = journal.token
        for _ in 0..<10_000 { journal.record("dune.json") }
        let middle = journal.token
        journal.record("emma.json")
        for _ in 0..<5_000 { journal.record("dune.json") }
        #expect(journal.changes(since: start) == .changed(["dune.json", "emma.json"]))
        #expect(journal.changes(since: middle) == .changed(["dune.json", "emma.json"]))
        journal.record("a.json")
        let beforeLimit = journal.token
        journal.record("b.json")
        #expect(journal.changes(since: beforeLimit) == .cannotVouch(.forgotten))
        let after = journal.token
        journal.record("c.json")
        #expect(journal.changes(since: after) == .changed(["c.json"]))
    }
}
