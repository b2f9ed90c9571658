import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// `booksync clone`: init plus the first pull, into a new folder.
@Suite struct CloneEndToEndTests {
    @Test func cloneCreatesTheFolderAndPullsEverything() async throws {
        let host = try Emulator.requireHost()
        let scratch = try ScratchDirectory()
        let project = Emulator.uniqueProject("clone")
        let rest = RESTClient(host: host, project: project, collection: "users/u1/books")
        try await rest.put(["dune", "emma"].map { (id: $0, fields: bookFields($0)) })
        let environment = ["FIRESTORE_EMULATOR_HOST": host, "NO_COLOR": "1"]
        let clone = try BinaryTests.run(["clone", "--firestore", project, "--collection", "users/u1/books"], in: scratch.path, environment: environment)
        #expect(clone.status == 0, "\(clone.stderr)")
        #expect(clone.stdout.contains("Initialized booksync collection in \(scratch.path)/books"), "\(clone.stdout)")
        #expect(clone.stdout.hasSuffix("pull     books/dune.json\npull     books/emma.json\npulled 2\n"), "\(clone.stdout)")
        let status = try BinaryTests.run(["status", "--short"], in: scratch.path + "/books", environment: environment)
        #expect(status.status == 0 && status.stdout.isEmpty, "\(status.stdout) \(status.stderr)")

        let named = try BinaryTests.run(["clone", "--firestore", project, "--collection", "users/u1/books", "-q", "library"], in: scratch.path,
                                        environment: environment)
        #expect(named.status == 0 && FileManager.default.fileExists(atPath: scratch.path + "/library/emma.json"), "\(named.stderr)")
        // Missing parents are made, as git clone makes them.
        let nested = try BinaryTests.run(["clone", "--firestore", project, "--collection", "users/u1/books", "-q", "data/2026/books"], in: scratch.path,
                                         environment: environment)
        #expect(nested.status == 0 && FileManager.default.fileExists(atPath: scratch.path + "/data/2026/books/dune.json"), "\(nested.stderr)")
        let again = try BinaryTests.run(["clone", "--firestore", project, "--collection", "users/u1/books"], in: scratch.path, environment: environment)
        #expect(again.status == 2 && again.stderr.contains("books already exists and is not an empty folder"), "\(again.stderr)")
        #expect(try BinaryTests.run(["clone", "--collection", "books", "a", "b"], in: scratch.path, environment: environment).status == 2)
        // Into another collection's folder, its scan would take the files for its own records.
        let inside = try BinaryTests.run(["clone", "--firestore", project, "--collection", "users/u1/books", "emma/reviews"], in: scratch.path + "/books",
                                         environment: environment)
        #expect(inside.status == 2 && inside.stderr.contains("is inside the collection"), "\(inside.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/books/emma"))
        let badPath = try BinaryTests.run(["clone", "--collection", "users/u1"], in: scratch.path, environment: environment)
        #expect(badPath.status == 2 && !FileManager.default.fileExists(atPath: scratch.path + "/u1"), "\(badPath.stderr)")
    }
}
