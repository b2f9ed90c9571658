import Foundation
import Testing
import BooksyncTestSupport

/// A dry run's summary says what it would do, never what it did: it wrote
/// nothing, so "pushed 2" would be untrue.
@Suite struct DryRunSummaryTests {
    /// (command line, its last line on stdout); no network is reached (push
    /// sends only what changed, and seed without --delete reads nothing).
    static let cases: [([String], String)] = [
        (["push", "--dry-run"], "dry run: nothing written; would push 2"),
        (["push", "-n", "a"], "dry run: nothing written; would push 1"),
        (["seed", "--dry-run"], "dry run: nothing written; would push 2"),
    ]

    @Test(arguments: cases)
    func theSummarySaysWhatWouldBeDone(arguments: [String], last: String) async throws {
        let scratch = try ScratchDirectory()
        // An emulator nobody listens on: a dry run never asks it anything.
        let environment = ["FIRESTORE_EMULATOR_HOST": "127.0.0.1:9", "GOOGLE_CLOUD_PROJECT": "", "GCLOUD_PROJECT": ""]
        #expect(await runBooksync(["init", "-q", "--firestore", "p", "--collection", "books", "--require", "none"], in: scratch.path,
                                  environment: environment).exitCode == 0)
        try scratch.write("a.json", "{\"id\": \"a\"}\n")
        try scratch.write("b.json", "{\"id\": \"b\"}\n")
        let result = await runBooksync(arguments, in: scratch.path, environment: environment)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").last.map(String.init) == last, "\(result.stdout)")
    }
}
