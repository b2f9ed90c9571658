import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The `bookshelf-example` app (Sources/bookshelf-example: the usual Firebase
/// BookRepository on booksync's RecordStore) run as a process against the
/// emulator, on the demo catalogue: what it says, what its files hold, and
/// what Firestore holds afterwards.
@Suite struct BookshelfExampleTests {
    static let example = FileSystem.split(BinaryTests.executable).directory + "/bookshelf-example"
    static let addedID = "a-memory-called-empire"

    @Test func addEditorEditAndARemoteChangeMergeAcrossTwoDevices() async throws {
        let catalogue = try Workspace(project: Emulator.uniqueProject("bookshelf"), host: try Emulator.requireHost(), name: "catalogue")
        try catalogue.initialize()
        for name in try FileManager.default.contentsOfDirectory(atPath: EndToEndTests.demoBooks) where name.hasSuffix(".json") {
            try FileManager.default.copyItem(atPath: EndToEndTests.demoBooks + "/" + name, toPath: catalogue.root + "/" + name)
        }
        #expect(try catalogue.run("push").status == 0)
        let laptop = catalogue.scratch.path + "/laptop"
        let phone = catalogue.scratch.path + "/phone"

        let run = try BinaryTests.run([catalogue.project, laptop, phone], in: catalogue.scratch.path,
                                      environment: catalogue.environment, program: Self.example)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "laptop: syncBooks() → pulled 30 books; pushed nothing")
        #expect(lines.contains("laptop: fetchBooks() → 30 books; Dune by Frank Herbert, published 1965-08-01, rated 4.25, 412 pages"))
        #expect(lines.contains("laptop: addBook(\"A Memory Called Empire\") → wrote \(Self.addedID).json"))
        #expect(lines.contains("phone: updateBook(dune, pages: 900), syncBooks() → pulled nothing; pushed dune"))
        #expect(lines.contains("laptop: syncBooks() → pulled dune (merged); pushed \(Self.addedID), dune"))
        #expect(lines.contains { $0.hasPrefix("laptop: updateBook(dune, tags + \"classic\") from the copy fetched before the edit → rated 4.75 (the editor's, kept), tags ") && $0.hasSuffix(", classic") })
        #expect(lines.contains("laptop: dune now rated 4.75 (the editor's) with 900 pages (the phone's) and the tag classic (the app's)"))
        #expect(lines.contains("phone: sees \"A Memory Called Empire\" by Arkady Martine, published 2019-03-26, set at 41.0082, 28.9784"))
        #expect(lines.last == "status on both devices: clean, in sync")
        #expect(run.stderr.isEmpty)

        // Both devices hold the same files, the merge and the new book included.
        for name in ["dune.json", "\(Self.addedID).json"] {
            let one = try #require(FileManager.default.contents(atPath: laptop + "/" + name))
            #expect(FileManager.default.contents(atPath: phone + "/" + name) == one, "\(name) differs between the devices")
        }
        let rules = RecordRules()
        let dune = try rules.parse(Array(try #require(FileManager.default.contents(atPath: laptop + "/dune.json")))).get()
        #expect(dune["rating"] == .double(4.75) && dune["pages"] == .integer(900))
        guard case .array(let tags)? = dune["tags"] else { Issue.record("dune has no tags"); return }
        #expect(tags.last == .string("classic"), "the laptop app's save merged with the editor's edit made after its read")
        #expect(dune["isbn"] == .string("978-0441013593"), "the phone's update kept the fields its DTO does not declare")

        let addedBytes = Array(try #require(FileManager.default.contents(atPath: laptop + "/\(Self.addedID).json")))
        let added = try rules.parse(addedBytes).get()
        #expect(addedBytes == rules.canonicalBytes(added), "the store writes canonical files")
        let expected: Fields = [
            "id": .string(Self.addedID), "title": .string("A Memory Called Empire"), "author": .string("Arkady Martine"),
            "genre": .string("science fiction"),
            "published": .timestamp(Timestamp(microsecondsSinceEpoch: 1_553_558_400_123_456)),
            "rating": .double(4.1), "pages": .integer(462),
            "tags": .array([.string("empire"), .string("memory"), .string("poetry")]),
            "authorRef": .reference("authors/arkady-martine"),
            "firstPrinting": .map(["copies": .integer(15_000), "publisher": .reference("publishers/tor")]),
            "cover": .bytes([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF]),
            "setting": .geoPoint(latitude: 41.0082, longitude: 28.9784),
            // No "subtitle": the generated BookDTO leaves a nil optional out.
        ]
        #expect(added == expected)

        // Firestore holds what the files hold, value for value and type for type.
        let remote = try await catalogue.rest.all()
        #expect(remote.count == 31)
        #expect(remote[Self.addedID]?.fields == expected)
        #expect(remote["dune"]?.fields == dune)

        // The CLI sees the same collection: nothing to do in either directory.
        for directory in [laptop, phone] {
            let status = try BinaryTests.run(["status", "--short"], in: directory, environment: catalogue.environment)
            #expect(status.status == 0 && status.stdout.isEmpty, "\(directory): \(status.stdout)\(status.stderr)")
        }
    }

    @Test func withoutTheEmulatorItExplainsItsUsage() throws {
        let scratch = try ScratchDirectory()
        let run = try BinaryTests.run(["p", scratch.path + "/a", scratch.path + "/b"], in: scratch.path,
                                      environment: ["FIRESTORE_EMULATOR_HOST": ""], program: Self.example, cleanEnvironment: true)
        #expect(run.status == 2)
        #expect(run.stdout.hasPrefix("usage: FIRESTORE_EMULATOR_HOST=host:port bookshelf-example PROJECT LAPTOP-DIR PHONE-DIR"))
    }
}
