import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// What the mass-delete guard says when it refuses: numbers a user can check
/// against the collection, and a command that does what was refused.
@Suite struct MassDeleteAdviceTests {
    static let cases: [(BooksyncError, String)] = [
        (.massDelete(command: "push", deletes: 6, baseCount: 10, maximumPercent: 50),
         "push would delete 6 of 10 records, more than --max-delete 50%; check what happened, then run 'booksync push --force' "
            + "(or raise --max-delete) if it is intended"),
        // A watch adds up its deletions: 2 now after 3 earlier, of a base of 6 that was 9 before them.
        (.massDelete(command: "push", deletes: 5, baseCount: 9, maximumPercent: 50, alreadyDeleted: 3),
         "push would delete 2 more records; with the 3 this watch deleted before, that is 5 of the 9 records the base had before it "
            + "deleted any, more than --max-delete 50%; check what happened, then stop the watch and run 'booksync push --force' "
            + "(or start it again with a higher --max-delete) if it is intended"),
        (.massDelete(command: "seed", deletes: 4, baseCount: 6, maximumPercent: 50, rerun: "booksync seed --delete --force"),
         "seed --delete would delete 4 of the 6 documents in the target, more than --max-delete 50%; check what happened, "
            + "then run 'booksync seed --delete --force' (or raise --max-delete) if it is intended"),
    ]

    /// A watch's round after it deleted 3 records: the refusal carries them,
    /// so the sentence can explain "5 of 9" in a base of 6.
    @Test func aWatchRoundCarriesTheDeletionsItAddsUp() async throws {
        let scratch = try ScratchDirectory()
        var (collection, documents) = try await PullPipelineTests.synced(records: 6, in: scratch)
        for i in 0..<2 { documents[try RecordID(String(format: "b%04d", i))] = nil }
        var options = SyncOptions()
        options.round.deletesAlreadyMade = 3
        await #expect(throws: BooksyncError.massDelete(command: "pull", deletes: 5, baseCount: 9, maximumPercent: 50, alreadyDeleted: 3)) {
            try await collection.pull(remote: ScriptedRemote(documents: Array(documents.values)), options: options)
        }
    }

    @Test(arguments: cases)
    func theRefusalSaysWhatItCounts(error: BooksyncError, says: String) {
        #expect(error.description == says)
    }
}
