import Foundation
import Testing
import BooksyncCore
@_spi(Remote) import BooksyncKit
@_spi(Remote) import BooksyncStore
import BooksyncTestSupport

/// An app's store chooses its remote as the CLI does: with
/// FIRESTORE_EMULATOR_HOST set, a collection synced with production works
/// with the emulator's own state instead of refusing or mixing the two.
@Suite struct RecordStoreRemoteTests {
    @Test func theEmulatorGetsItsOwnStateInAnApp() async throws {
        let emulator = try TestEmulator.host()
        let second = try TestEmulator.secondHost()
        let scratch = try ScratchDirectory()
        let project = "t-storeremote-" + UUID().uuidString.prefix(8).lowercased()
        _ = try CollectionDirectory.initialize(at: scratch.path, config: CollectionConfig(remote: FirestoreTarget(project: project, collectionPath: "books")))
        let production = RecordStore<ShelfBook>.firestore(directory: scratch.path,
                                                          environment: ["BOOKSYNC_FIRESTORE_URL": "http://\(second)/v1/", "BOOKSYNC_ACCESS_TOKEN": "owner"])
        try await production.save(ShelfBook.sample())
        #expect(try await production.push().events.count == 1)
        let manifest = try String(contentsOfFile: scratch.path + "/.booksync/manifest.json", encoding: .utf8)

        let onEmulator = RecordStore<ShelfBook>.firestore(directory: scratch.path, environment: ["FIRESTORE_EMULATOR_HOST": emulator])
        let status = try await onEmulator.status()
        #expect(status.records.map(\.id.rawValue) == ["dune"], "added for the emulator's empty state")
        let push = try await onEmulator.push()
        #expect(push.events.map(\.kind) == [.pushed(.create)])
        #expect(try String(contentsOfFile: scratch.path + "/.booksync/manifest.json", encoding: .utf8) == manifest, "origin's base untouched")
        #expect(FileManager.default.fileExists(atPath: scratch.path + "/.booksync/local/emulator/manifest.json"))
        // Naming origin with the emulator set is refused, not mixed.
        let named = RecordStore<ShelfBook>.firestore(directory: scratch.path, environment: ["FIRESTORE_EMULATOR_HOST": emulator], remote: "origin")
        await #expect(throws: RecordStoreError.self) { try await named.status() }
    }
}
