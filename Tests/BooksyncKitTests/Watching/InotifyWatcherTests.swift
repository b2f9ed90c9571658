#if os(Linux)
import Foundation
import Testing
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit

/// The inotify watcher against the truth: after random bursts of creates,
/// edits, renames, deletes, `touch -r` and atomic saves, every path whose
/// stat differs between two full scans is in the journal's answer, and a
/// replaced folder or an overflowing queue (made for real, with more events
/// than the kernel queues) is never vouched for.
@Suite struct InotifyWatcherTests {
    static let folders = ["", "a", "b"]

    /// Every file of the watched folders with its stat: what a full scan sees.
    static func scan(_ root: String) -> [String: FileStat] {
        var found: [String: FileStat] = [:]
        for folder in folders {
            let path = folder.isEmpty ? root : root + "/" + folder
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                let relative = folder.isEmpty ? name : folder + "/" + name
                guard let stat = try? FileSystem.stat(root + "/" + relative), stat.kind == .regular else { continue }
                found[relative] = stat
            }
        }
        return found
    }

    /// The paths whose stat differs, or that appeared or disappeared.
    static func changed(_ before: [String: FileStat], _ after: [String: FileStat]) -> Set<String> {
        Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }
    }

    /// One random change to the files of the watched folders.
    static func mutate(_ root: String, random: inout SplitMix64, serial: inout Int) throws {
        let files = scan(root).keys.sorted()
        let folder = folders[random.below(folders.count)]
        func fresh() -> String {
            serial += 1
            return (folder.isEmpty ? "" : folder + "/") + "f\(serial).json"
        }
        let target = files.isEmpty ? nil : files[random.below(files.count)]
        switch (random.below(6), target) {
        case (0, _), (_, nil):
            try "{\"n\": \(serial)}".write(toFile: root + "/" + fresh(), atomically: false, encoding: .utf8)
        case (1, let file?):  // an edit in place, sometimes to the same size
            try "{\"n\": \(random.below(10))}".write(toFile: root + "/" + file, atomically: false, encoding: .utf8)
        case (2, let file?):  // a rename, within a folder or across
            try FileManager.default.moveItem(atPath: root + "/" + file, toPath: root + "/" + fresh())
        case (3, let file?):
            try FileManager.default.removeItem(atPath: root + "/" + file)
        case (4, let file?):  // touch -r: only the time changes
            let other = files[random.below(files.count)]
            let time = (try FileManager.default.attributesOfItem(atPath: root + "/" + other))[.modificationDate] as? Date ?? Date(timeIntervalSince1970: 1)
            try FileManager.default.setAttributes([.modificationDate: time.addingTimeInterval(-Double(1 + random.below(1_000)))],
                                                  ofItemAtPath: root + "/" + file)
        case (_, let file?):  // an editor's save: a temporary file renamed over it
            let temporary = root + "/" + (folder.isEmpty ? "" : folder + "/") + ".tmp\(serial)"
            try "{\"saved\": \(serial)}".write(toFile: temporary, atomically: false, encoding: .utf8)
            _ = rename(temporary, root + "/" + file)
        }
    }

    @Test func theJournalHoldsEveryChangeTheFullScanSees() throws {
        let scratch = try ScratchDirectory()
        for folder in Self.folders where !folder.isEmpty { try FileManager.default.createDirectory(atPath: scratch.path + "/" + folder, withIntermediateDirectories: true) }
        for i in 0..<60 { try "{}".write(toFile: scratch.path + "/" + Self.folders[i % 3] + (i % 3 == 0 ? "" : "/") + "seed\(i).json", atomically: false, encoding: .utf8) }
        let watcher = try InotifyWatcher(root: scratch.path, folders: Self.folders, instance: 1)
        var random = SplitMix64(seed: 0xB00C5)
        var serial = 0
        var operations = 0
        for round in 0..<200 {
            watcher.drain()
            let token = watcher.journal.token
            let before = Self.scan(scratch.path)
            for _ in 0..<(1 + random.below(20)) {
                try Self.mutate(scratch.path, random: &random, serial: &serial)
                operations += 1
            }
            watcher.drain()
            let truth = Self.changed(before, Self.scan(scratch.path))
            guard case .changed(let reported) = watcher.journal.changes(since: token) else {
                Issue.record("round \(round): no event was lost, yet the watcher cannot vouch")
                return
            }
            #expect(truth.isSubset(of: reported), "round \(round): missed \(truth.subtracting(reported).sorted())")
        }
        #expect(operations > 2_000)
    }

    /// More events than the kernel queues (`max_queued_events`, 16,384 by
    /// default) before the watcher reads: the queue overflows for real, and
    /// the older token is not vouched for; the next one is again.
    @Test func anOverflowingQueueIsNeverVouchedFor() throws {
        let scratch = try ScratchDirectory()
        let watcher = try InotifyWatcher(root: scratch.path, folders: [""], instance: 1)
        let before = watcher.journal.token
        let limit = Int((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16_384
        // Each file is a create, a modify and a close: a third of the limit and more.
        for i in 0..<(limit / 3 + 1_000) { _ = FileManager.default.createFile(atPath: scratch.path + "/n\(i).json", contents: Data("{}".utf8)) }
        watcher.drain()
        #expect(watcher.journal.changes(since: before) == .cannotVouch(.overflow))
        let after = watcher.journal.token
        try "{}".write(toFile: scratch.path + "/late.json", atomically: false, encoding: .utf8)
        watcher.drain()
        #expect(watcher.journal.changes(since: after) == .changed(["late.json"]))
    }

    /// A watched folder moved away and made again is not the folder watched:
    /// nothing in it is vouched for, whatever happens there next.
    @Test func aReplacedFolderIsNeverVouchedFor() throws {
        let scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path + "/a", withIntermediateDirectories: true)
        let watcher = try InotifyWatcher(root: scratch.path, folders: ["", "a"], instance: 1)
        let before = watcher.journal.token
        try FileManager.default.moveItem(atPath: scratch.path + "/a", toPath: scratch.path + "/a.old")
        try FileManager.default.createDirectory(atPath: scratch.path + "/a", withIntermediateDirectories: true)
        try "{}".write(toFile: scratch.path + "/a/new.json", atomically: false, encoding: .utf8)
        watcher.drain()
        #expect(watcher.journal.changes(since: before) == .cannotVouch(.folderReplaced("a")))
    }

    /// A watched folder that is a link is refused, as the scan refuses it.
    @Test func aLinkedFolderIsNotWatched() throws {
        let scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path + "/elsewhere", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: scratch.path + "/a", withDestinationPath: scratch.path + "/elsewhere")
        #expect(throws: InotifyWatcher.StartError.cannotWatch(folder: "a", errno: ENOTDIR)) {
            _ = try InotifyWatcher(root: scratch.path, folders: ["", "a"], instance: 1)
        }
    }
}

#endif
