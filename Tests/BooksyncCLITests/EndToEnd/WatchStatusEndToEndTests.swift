#if os(Linux)
import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// `booksync watch --no-sync` as a process, and `status --offline` asking it:
/// the same answers as a full scan, the watcher used once it has a scan to
/// start from, one watcher per collection, and nothing left when it stops.
/// Needs no emulator: nothing here reaches the network.
@Suite struct WatchStatusEndToEndTests {
    /// `status --offline --json` and its `--verbose` lines, asking the watcher
    /// of `environment` (or none).
    static func status(_ workspace: Workspace, watcherFolder: String) throws -> (json: String, verbose: String) {
        var environment = workspace.environment
        environment["BOOKSYNC_WATCH_DIR"] = watcherFolder
        let result = try BinaryTests.run(["status", "--offline", "--json", "--verbose"], in: workspace.root, environment: environment)
        return (result.stdout, result.stderr)
    }

    @Test func statusAsksTheWatcherAndSaysWhatAFullScanSays() async throws {
        let workspace = try Workspace(project: "demo-watch-status", host: "127.0.0.1:9")
        try workspace.initialize()
        for id in ["a", "b", "c"] { try workspace.write(id + ".json", bookFile(id)) }
        let watchers = workspace.environment["BOOKSYNC_WATCH_DIR"]!
        let nowhere = workspace.scratch.path + "/no-watchers"
        _ = try Self.status(workspace, watcherFolder: watchers)
        #expect(!FileManager.default.fileExists(atPath: watchers), "status never creates the watchers' folder, let alone starts one")

        let watch = try WatchEndToEndTests.RunningWatch(workspace, arguments: ["--no-sync", "--json"])
        try await watch.started()
        let first = try Self.status(workspace, watcherFolder: watchers)
        #expect(first.verbose.contains("watcher: the watcher has no earlier scan"), "\(first.verbose)")
        // What the first status left in the watchers' folder: a failure below says whether its scan record was there.
        let left = (try? FileManager.default.contentsOfDirectory(atPath: watchers).sorted()) ?? []
        let second = try Self.status(workspace, watcherFolder: watchers)
        #expect(second.verbose.contains("watcher: the watcher vouched for all but 3 files"), "\(second.verbose); first: \(first.verbose); left: \(left)")
        #expect(second.json == (try Self.status(workspace, watcherFolder: nowhere)).json)

        // Edits, a deletion, an invalid save and a name no record can have: each seen through the watcher.
        try workspace.write("a.json", bookFile("a", title: "changed"))
        try workspace.remove("b.json")
        try workspace.write("d.json", "{\"id\": ")
        try workspace.write("bad name.json", "{}")
        let watched = try Self.status(workspace, watcherFolder: watchers)
        #expect(watched.verbose.contains("watcher: the watcher vouched"), "\(watched.verbose)")
        #expect(watched.json == (try Self.status(workspace, watcherFolder: nowhere)).json)
        #expect(watched.json.contains("\"bad name.json\""))

        // One watcher per collection.
        let second_ = try workspace.run("watch", "--no-sync")
        #expect(second_.status != 0 && second_.stderr.contains("another watcher already serves this collection"), "\(second_.stderr)")

        #expect(try await watch.interrupt() == 130)
        #expect(watch.lines.last?["type"] == .string("stop"))
        let sockets = try FileManager.default.contentsOfDirectory(atPath: watchers).filter { $0.hasSuffix(".sock") }
        #expect(sockets.isEmpty, "the socket is removed: \(sockets)")
        let after = try Self.status(workspace, watcherFolder: watchers)
        #expect(!after.verbose.contains("watcher:"), "with no socket, no watcher is asked: \(after.verbose)")
        #expect(after.json == watched.json)
    }
}
#endif
