import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// `booksync watch` as a process against the emulator, with an editor
/// writing files and an app writing documents at the same time.
@Suite struct WatchEndToEndTests {
    /// A running `booksync watch`, its stdout and stderr in files (a pipe
    /// nobody reads could fill and stall it).
    final class RunningWatch {
        let process = Process()
        let output: String
        let errors: String

        init(_ workspace: Workspace, arguments: [String]) throws {
            output = workspace.scratch.path + "/watch-\(UUID().uuidString.prefix(6)).out"
            errors = output + ".err"
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            process.executableURL = URL(fileURLWithPath: BinaryTests.executable)
            process.arguments = ["watch"] + arguments
            process.currentDirectoryURL = URL(fileURLWithPath: workspace.root)
            process.environment = ProcessInfo.processInfo.environment.merging(workspace.environment) { _, new in new }
                .merging(["BOOKSYNC_PROGRESS": "none"]) { _, new in new }
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }

        var stdout: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        var stderr: String { (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "" }

        /// The JSON Lines printed so far, parsed.
        var lines: [Fields] {
            stdout.split(separator: "\n").compactMap { line in
                guard case .map(let fields)? = try? JSONParser.parse(Array(line.utf8), decodeTags: false) else { return nil }
                return fields
            }
        }

        /// Every event of every round line, as (command, action, id).
        var actions: [(command: String, action: String, id: String)] {
            lines.flatMap { line -> [(command: String, action: String, id: String)] in
                guard line["type"] == .string("round"), case .string(let command)? = line["command"],
                      case .array(let events)? = line["events"] else { return [] }
                return events.compactMap {
                    guard case .map(let event) = $0, case .string(let action)? = event["action"], case .string(let id)? = event["id"] else { return nil }
                    return (command, action, id)
                }
            }
        }

        /// Waits until it printed its start line (at most a minute).
        func started() async throws {
            do {
                try await waitUntil("the watch starts", timeout: 60) { self.lines.contains { $0["type"] == .string("start") } }
            } catch {
                Issue.record("no start line; stdout: \(stdout), stderr: \(stderr), running: \(process.isRunning)")
                throw error
            }
        }

        /// Ends it with Ctrl-C's signal and waits (at most two minutes).
        func interrupt() async throws -> Int32 {
            kill(process.processIdentifier, SIGINT)
            return try await waitForExit()
        }

        func waitForExit() async throws -> Int32 {
            try await WatchEndToEndTests.waitUntil("the watch exits", timeout: 120) { !self.process.isRunning }
            return process.terminationStatus
        }
    }

    /// Waits, polling, until `condition` holds; fails the test after `timeout` seconds.
    static func waitUntil(_ what: String, timeout: Double, _ condition: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try await !condition() {
            guard Date() < deadline else {
                throw WaitFailed(what: what)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    struct WaitFailed: Error, CustomStringConvertible {
        let what: String
        var description: String { "timed out waiting until \(what)" }
    }

    /// Saves as editors do: a temporary file renamed over the record file.
    static func save(in root: String, _ id: String, title: String) throws {
        let path = root + "/" + id + ".json"
        try bookFile(id, title: title).write(toFile: path + ".tmp~", atomically: false, encoding: .utf8)
        guard rename(path + ".tmp~", path) == 0 else { throw WaitFailed(what: "rename of \(id)") }
    }

    static func remoteTitles(_ workspace: Workspace) async throws -> [String: String] {
        try await workspace.rest.all().compactMapValues { document in
            if case .string(let title)? = document.fields["title"] { title } else { nil }
        }
    }

    static func fileTitle(_ workspace: Workspace, _ id: String) -> String? {
        guard let text = workspace.read(id + ".json"),
              case .map(let fields)? = try? JSONParser.parse(Array(text.utf8), decodeTags: false),
              case .string(let title)? = fields["title"] else { return nil }
        return title
    }

    /// An editor saving (sometimes a half-written file first) and an app
    /// writing documents at the same time: every last save reaches the
    /// emulator, every last app write reaches its file, the half-written
    /// saves are reported and never sent, a conflict is stored and reported,
    /// and Ctrl-C stops it with a summary.
    @Test
    func editorAndAppWritingAtOnceLoseNothing() async throws {
        let workspace = try Workspace(project: Emulator.uniqueProject("watch"), host: try Emulator.requireHost())
        try workspace.initialize("--change-field", "updatedAt")
        for id in ["e0", "e1", "e2", "a0", "a1", "both"] { try workspace.write(id + ".json", bookFile(id, title: "start")) }
        #expect(try workspace.run("push").status == 0)
        // Both sides change the same field before the watch starts: its first pull finds the conflict.
        try workspace.write("both.json", bookFile("both", title: "ours"))
        try await workspace.rest.put([("both", bookFields("both", title: "theirs"))], stamping: "updatedAt")

        let watch = try RunningWatch(workspace, arguments: ["--interval", "0.5", "--json"])
        try await watch.started()

        // The editor: 15 saves over three files, every fifth caught half-written for a moment.
        let root = workspace.root
        let rest = workspace.rest
        async let editor: Void = {
            for i in 0..<15 {
                let id = "e\(i % 3)"
                if i % 5 == 4 {
                    try String(bookFile(id, title: "half \(i)").prefix(30)).write(toFile: root + "/" + id + ".json", atomically: true, encoding: .utf8)
                    try await Task.sleep(for: .milliseconds(400))
                }
                try Self.save(in: root, id, title: "save \(i)")
                try await Task.sleep(for: .milliseconds(150))
            }
        }()
        // The app: 10 writes over two documents, as Firestore clients stamp them.
        async let app: Void = {
            for i in 0..<10 {
                let id = "a\(i % 2)"
                try await rest.put([(id, bookFields(id, title: "app \(i)"))], stamping: "updatedAt")
                try await Task.sleep(for: .milliseconds(250))
            }
        }()
        _ = try await (editor, app)

        let expectedRemote = ["e0": "save 12", "e1": "save 13", "e2": "save 14"]
        try await Self.waitUntil("every last save is on the emulator", timeout: 120) {
            let titles = try await Self.remoteTitles(workspace)
            return expectedRemote.allSatisfy { titles[$0.key] == $0.value }
        }
        try await Self.waitUntil("every last app write is in its file", timeout: 120) {
            Self.fileTitle(workspace, "a0") == "app 8" && Self.fileTitle(workspace, "a1") == "app 9"
        }
        // Other commands run while it watches: it holds the lock only during a round.
        try await Self.waitUntil("status runs beside the watch", timeout: 60) {
            try workspace.run("status", "--offline").status != 3
        }

        let status = try await watch.interrupt()
        #expect(status == 130, "\(watch.stderr)")
        let actions = watch.actions
        #expect(actions.contains { $0.action == "conflict" && $0.id == "both" }, "\(watch.stdout)")
        #expect(actions.contains { $0.command == "push" && $0.action == "invalid" }, "half-written saves are reported: \(watch.stdout)")
        #expect(actions.contains { $0.command == "pull" && $0.action == "write" && $0.id.hasPrefix("a") })
        #expect(!actions.contains { $0.command == "pull" && $0.id.hasPrefix("e") }, "the editor's files are never overwritten")
        #expect(Self.fileTitle(workspace, "both") == "ours", "the conflict leaves the file alone")
        #expect(try await Self.remoteTitles(workspace)["both"] == "theirs")
        let stop = try #require(watch.lines.last)
        #expect(stop["type"] == .string("stop"))
        guard case .integer(let writes)? = stop["writes"], case .integer(let billed)? = stop["billedReads"] else {
            Issue.record("no summary: \(watch.stdout)")
            return
        }
        #expect(writes >= 3 && writes <= 15, "each push writes only what changed")
        #expect(billed > 0)
        #expect(watch.stderr.isEmpty || !watch.stderr.contains("error"), "\(watch.stderr)")
    }

    /// kill -9 at any moment loses nothing: saves made while it was dead
    /// or cut off mid-round are found by the next watch, and the collection
    /// ends up in step with the emulator.
    @Test
    func killedWatchesLoseNoSave() async throws {
        let workspace = try Workspace(project: Emulator.uniqueProject("watchkill"), host: try Emulator.requireHost())
        try workspace.initialize("--change-field", "updatedAt")
        let ids = (0..<6).map { "k\($0)" }
        for id in ids { try workspace.write(id + ".json", bookFile(id, title: "start")) }
        #expect(try workspace.run("push").status == 0)
        var generator = SplitMix64(seed: 31)
        var last: [String: String] = [:]
        var save = 0
        for _ in 0..<4 {
            let watch = try RunningWatch(workspace, arguments: ["--interval", "1", "--json"])
            try await watch.started()
            let saves = 3 + Int(generator.next() % 6)
            for _ in 0..<saves {
                let id = ids[Int(generator.next() % UInt64(ids.count))]
                try Self.save(in: workspace.root, id, title: "save \(save)")
                last[id] = "save \(save)"
                save += 1
                try await Task.sleep(for: .milliseconds(Int(generator.next() % 300)))
            }
            kill(watch.process.processIdentifier, SIGKILL)
            _ = try await watch.waitForExit()
        }
        // A last watch finds what the killed ones left.
        let watch = try RunningWatch(workspace, arguments: ["--interval", "1", "--json"])
        try await watch.started()
        try await Self.waitUntil("every save made before the kills is on the emulator", timeout: 120) {
            let titles = try await Self.remoteTitles(workspace)
            return last.allSatisfy { titles[$0.key] == $0.value }
        }
        #expect(try await watch.interrupt() == 130, "\(watch.stderr)")
        let status = try workspace.run("status")
        #expect(status.status == 0, "in step after the kills: \(status.stdout)\(status.stderr)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: workspace.root).filter { !$0.hasSuffix(".json") && !$0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "no temporary file left: \(leftovers)")
    }

    /// Subcollection folders made while it watches (a new document's
    /// `dune/reviews/`) are watched from then on: a review created in one,
    /// and a later edit of it, reach the emulator.
    @Test func newSubcollectionFoldersAreWatched() async throws {
        let workspace = try Workspace(project: Emulator.uniqueProject("watchsub"), host: try Emulator.requireHost())
        try workspace.initialize("--change-field", "updatedAt", "--subcollection", "reviews")
        try workspace.write("emma.json", bookFile("emma", title: "Emma"))
        #expect(try workspace.run("push").status == 0)
        let watch = try RunningWatch(workspace, arguments: ["--interval", "1", "--json"])
        try await watch.started()
        try FileManager.default.createDirectory(atPath: workspace.root + "/dune/reviews", withIntermediateDirectories: true)
        try Self.save(in: workspace.root, "dune", title: "Dune")
        try #"{"id": "r1", "stars": 4}"#.write(toFile: workspace.root + "/dune/reviews/r1.json", atomically: true, encoding: .utf8)
        func stars() async throws -> Value? {
            let (status, body) = try await workspace.rest.request("GET", workspace.rest.base + "/books/dune/reviews/r1")
            guard status == 200, case .map(let document) = body, case .map(let fields)? = document["fields"],
                  case .map(let stars)? = fields["stars"] else { return nil }
            return stars["integerValue"]
        }
        try await Self.waitUntil("the new review is on the emulator", timeout: 120) { try await stars() == .string("4") }
        // Edited in place, now that its folder is watched.
        try #"{"id": "r1", "stars": 5}"#.write(toFile: workspace.root + "/dune/reviews/r1.json", atomically: false, encoding: .utf8)
        try await Self.waitUntil("the edited review is on the emulator", timeout: 120) { try await stars() == .string("5") }
        #expect(try await watch.interrupt() == 130, "\(watch.stderr)")
        #expect(try await Self.remoteTitles(workspace)["dune"] == "Dune")
    }

    /// The mass-delete guard adds up a watch's deletions: removing files a
    /// few at a time cannot empty the collection round by round. A save that
    /// went into the refused round is not dropped: it goes with the next push.
    @Test func deletionsAddUpAndARefusedRoundDropsNoSave() async throws {
        let workspace = try Workspace(project: Emulator.uniqueProject("watchdel"), host: try Emulator.requireHost())
        try workspace.initialize("--change-field", "updatedAt")
        let ids = (0..<10).map { "d\($0)" }
        for id in ids { try workspace.write(id + ".json", bookFile(id, title: "start")) }
        #expect(try workspace.run("push").status == 0)
        let watch = try RunningWatch(workspace, arguments: ["--interval", "0", "--json"])
        try await watch.started()
        for id in ["d0", "d1", "d2"] { try workspace.remove(id + ".json") }
        try await Self.waitUntil("3 of 10 are deleted remotely", timeout: 120) { try await workspace.rest.all().count == 7 }
        // 3 more, with an edit in the same round: 6 of 10 since the watch started is over 50%.
        try Self.save(in: workspace.root, "d9", title: "edited")
        for id in ["d3", "d4", "d5"] { try workspace.remove(id + ".json") }
        try await Self.waitUntil("the round is refused", timeout: 120) {
            watch.lines.contains { $0["type"] == .string("error") && $0["command"] == .string("push") }
        }
        #expect(try await workspace.rest.all().count == 7, "nothing of the refused round was deleted")
        // Putting the files back is the way out; the edit goes with that push.
        for id in ["d3", "d4", "d5"] { try Self.save(in: workspace.root, id, title: "start") }
        try await Self.waitUntil("the deferred edit reaches the emulator", timeout: 120) {
            try await Self.remoteTitles(workspace)["d9"] == "edited"
        }
        #expect(try await watch.interrupt() == 130, "\(watch.stderr)")
        let errors = watch.lines.filter { $0["type"] == .string("error") }
        #expect(errors.count == 1, "the refusal is told once: \(watch.stdout)")
        // The 3 of this round after the watch's 3: counted as the guard counts, and said so.
        if case .string(let message)? = errors.first?["message"] {
            #expect(message.hasPrefix("push would delete 3 more records; with the 3 this watch deleted before, that is 6 of the 10 records"),
                    "\(message)")
        }
    }
}
