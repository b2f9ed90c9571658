import Foundation
import Testing
import BooksyncTestSupport

/// `booksync remote` lists every base the collection has: origin, the
/// remotes of remotes.json, and the emulator's own state that
/// FIRESTORE_EMULATOR_HOST selects when no remote is the emulator.
@Suite struct RemoteListTests {
    static let environment = ["GOOGLE_CLOUD_PROJECT": "", "GCLOUD_PROJECT": ""]
    static let origin = "origin\tfirestore p/(default) books (production, or FIRESTORE_EMULATOR_HOST; state .booksync, committed)"
    static let implicit = "emulator\tfirestore p/(default) books (emulator at FIRESTORE_EMULATOR_HOST, built in; "
        + "state .booksync/local/emulator, this machine only)"

    func list(_ directory: String) async -> [String] {
        let result = await runBooksync(["remote"], in: directory, environment: Self.environment)
        #expect(result.exitCode == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func theEmulatorsOwnStateIsListedOnceItHoldsOne() async throws {
        let scratch = try ScratchDirectory()
        #expect(await runBooksync(["init", "-q", "--firestore", "p", "--collection", "books"], in: scratch.path,
                                  environment: Self.environment).exitCode == 0)
        #expect(await list(scratch.path) == [Self.origin], "no emulator state yet")
        // What the first command against FIRESTORE_EMULATOR_HOST leaves when origin's base is production's.
        try FileManager.default.createDirectory(atPath: scratch.path + "/.booksync/local/emulator", withIntermediateDirectories: true)
        let staging = await runBooksync(["remote", "add", "staging", "--firestore", "p2"], in: scratch.path, environment: Self.environment)
        #expect(staging.exitCode == 0, "\(staging.stderr)")
        let listed = await list(scratch.path)
        #expect(listed.count == 3 && listed.first == Self.origin && listed[1] == Self.implicit && listed[2].hasPrefix("staging\t"), "\(listed)")
        // A remote named emulator takes the name: the built-in state is not listed besides it.
        let named = await runBooksync(["remote", "add", "emulator", "--emulator-host", "127.0.0.1:8080"], in: scratch.path,
                                      environment: Self.environment)
        #expect(named.exitCode == 0, "\(named.stderr)")
        #expect(await list(scratch.path).filter { $0.hasPrefix("emulator\t") }.count == 1)
    }
}
