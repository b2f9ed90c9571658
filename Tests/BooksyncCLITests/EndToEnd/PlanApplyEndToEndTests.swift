import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// `booksync plan --out` and `booksync apply` against the emulator: a plan is
/// applied exactly, or not at all when the files, the base or the remote
/// moved since it was made; applying twice writes once; an edited plan or
/// one for another target is refused.
@Suite struct PlanApplyEndToEndTests {
    /// Three synced books, then a local update of b1, a delete of b3 and a new b4.
    static func editedCollection() throws -> Workspace {
        let ws = try Workspace(project: Emulator.uniqueProject("plan"), host: try Emulator.requireHost())
        try ws.initialize()
        for id in ["b1", "b2", "b3"] { try ws.write("\(id).json", bookFile(id, title: "Old \(id)")) }
        let push = try ws.run("push")
        #expect(push.status == 0, "\(push.stderr)")
        try ws.write("b1.json", bookFile("b1", title: "New b1"))
        try ws.remove("b3.json")
        try ws.write("b4.json", bookFile("b4", title: "Fresh"))
        return ws
    }

    var planPath: (Workspace) -> String { { $0.scratch.path + "/plan.json" } }

    /// Makes the plan; nothing in the collection or the remote changes.
    func plan(_ ws: Workspace, _ extra: String...) async throws -> BooksyncTestOutput {
        let before = try ws.snapshot()
        let remoteBefore = try await ws.rest.all().mapValues(\.revision)
        let result = try ws.run(["plan", "--out", planPath(ws)] + extra)
        #expect(try ws.snapshot() == before, "plan wrote in the collection")
        #expect(try await ws.rest.all().mapValues(\.revision) == remoteBefore, "plan wrote remotely")
        return result
    }

    @Test func aCleanApplyWritesThePlanAndLeavesStatusClean() async throws {
        let ws = try Self.editedCollection()
        let planned = try await plan(ws)
        #expect(planned.status == 0, "\(planned.stderr)")
        #expect(planned.stdout.contains("update  b1.json") && planned.stdout.contains("delete  b3.json") && planned.stdout.contains("create  b4.json"))
        #expect(planned.stdout.contains("3 writes (1 create, 1 update, 1 delete)"), "\(planned.stdout)")
        let applied = try ws.run("apply", planPath(ws))
        #expect(applied.status == 0, "\(applied.stdout) \(applied.stderr)")
        let remote = try await ws.rest.all()
        #expect(remote["b1"]?.fields["title"] == .string("New b1"))
        #expect(remote["b3"] == nil && remote["b4"]?.fields["title"] == .string("Fresh"))
        let status = try ws.run("status", "--exit-code")
        #expect(status.status == 0, "\(status.stdout)")
    }

    @Test func aPlanAppliedTwiceWritesOnceAndSaysSo() async throws {
        let ws = try Self.editedCollection()
        #expect(try await plan(ws).status == 0)
        // A second clone of the same files and base (as a CI checkout is) applies it too, later.
        let clone = try Workspace(project: ws.project, host: ws.host, name: "clone")
        try FileManager.default.removeItem(atPath: clone.root)
        try FileManager.default.copyItem(atPath: ws.root, toPath: clone.root)
        #expect(try ws.run("apply", planPath(ws)).status == 0)
        let revisions = try await ws.rest.all().mapValues(\.revision)
        for place in [ws, clone] {
            let again = try place.run("apply", planPath(ws))
            #expect(again.status == 0 && again.stdout.contains("was already applied: nothing written (3 writes found in place)"), "\(again.stdout) \(again.stderr)")
            #expect(try await ws.rest.all().mapValues(\.revision) == revisions, "a second apply wrote")
            #expect(try place.run("status", "--exit-code").status == 0)
        }
    }

    @Test func aRemoteEditAfterPlanningRefusesTheWholePlan() async throws {
        let ws = try Self.editedCollection()
        #expect(try await plan(ws).status == 0)
        try await ws.rest.put([(id: "b1", fields: bookFields("b1", title: "Someone else"))])
        let manifest = ws.read(".booksync/manifest.json")
        let remoteBefore = try await ws.rest.all().mapValues(\.revision)
        let applied = try ws.run("apply", planPath(ws))
        #expect(applied.status == 4, "\(applied.stdout) \(applied.stderr)")
        #expect(applied.stderr.contains("'b1' (b1.json): the remote changed it since the plan"), "\(applied.stderr)")
        #expect(applied.stderr.contains("nothing was written"))
        #expect(try await ws.rest.all().mapValues(\.revision) == remoteBefore, "b3 or b4 was written")
        #expect(ws.read(".booksync/manifest.json") == manifest)
    }

    @Test(arguments: ["edit", "delete", "recreate"]) func aFileChangedAfterPlanningRefusesTheWholePlan(_ change: String) async throws {
        let ws = try Self.editedCollection()
        #expect(try await plan(ws).status == 0)
        let expected: String
        switch change {
        case "edit":
            try ws.write("b4.json", bookFile("b4", title: "Fresher"))
            expected = "'b4' (b4.json): its file changed since the plan (planned sha256:"
        case "delete":
            try ws.remove("b1.json")
            expected = "'b1' (b1.json): its file was deleted since the plan"
        default:
            try ws.write("b3.json", bookFile("b3", title: "Back"))
            expected = "'b3' (b3.json): the plan deletes it, but its file exists again"
        }
        let remoteBefore = try await ws.rest.all().mapValues(\.revision)
        let applied = try ws.run("apply", planPath(ws))
        #expect(applied.status == 4 && applied.stderr.contains(expected), "\(applied.stderr)")
        #expect(try await ws.rest.all().mapValues(\.revision) == remoteBefore)
    }

    @Test func aPlanEditedByHandIsRefused() async throws {
        let ws = try Self.editedCollection()
        #expect(try await plan(ws).status == 0)
        let text = try String(contentsOfFile: planPath(ws), encoding: .utf8)
        try text.replacingOccurrences(of: "\"after\": \"New b1\"", with: "\"after\": \"Sneaky\"").write(toFile: planPath(ws), atomically: true, encoding: .utf8)
        let applied = try ws.run("apply", planPath(ws))
        #expect(applied.status == 4 && applied.stderr.contains("was changed after booksync wrote it"), "\(applied.stderr)")
        #expect(try await ws.rest.all()["b4"] == nil)
    }

    @Test func aPlanForAnotherTargetIsRefused() async throws {
        let ws = try Self.editedCollection()
        #expect(try await plan(ws).status == 0)
        let other = try Workspace(project: Emulator.uniqueProject("plan-other"), host: ws.host)
        try other.initialize()
        try other.write("b1.json", bookFile("b1", title: "New b1"))
        let applied = try other.run("apply", planPath(ws))
        #expect(applied.status == 4 && applied.stderr.contains("plan.json writes to projects/\(ws.project)/databases/(default)/documents/books on the emulator at"), "\(applied.stderr)")
        #expect(try await other.rest.all().isEmpty)
    }

    /// A plan made under one scope (config.json "scope") is refused under
    /// another, naming both, and nothing is written: b4, inside the old scope,
    /// is outside the new one. Under its own scope again, it applies.
    @Test func aPlanMadeUnderAnotherScopeIsRefused() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("plan-scope"), host: try Emulator.requireHost())
        try ws.initialize("--where", "rating >= 3")
        for rating in 1...5 { try ws.write("b\(rating).json", bookFile("b\(rating)", extra: ["rating": .integer(Int64(rating))])) }
        #expect(try ws.run("push").status == 1, "b1 and b2 are outside the scope")
        try ws.write("b4.json", bookFile("b4", title: "New b4", extra: ["rating": .integer(4)]))
        let planned = try await plan(ws)
        #expect(planned.status == 1 && planned.stdout.contains("update  b4.json"), "\(planned.stdout)\(planned.stderr)")
        #expect(try ws.scratch.read("plan.json").contains(#""scope": "rating >= 3""#))
        let config = ws.root + "/.booksync/config.json"
        let original = try String(contentsOfFile: config, encoding: .utf8)
        try original.replacingOccurrences(of: "rating >= 3", with: "rating >= 5").write(toFile: config, atomically: true, encoding: .utf8)
        let remoteBefore = try await ws.rest.all().mapValues(\.revision)
        let refused = try ws.run("apply", planPath(ws))
        #expect(refused.status == 4, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("plan.json was made for the collection's scope 'rating >= 3', but config.json now sets the scope 'rating >= 5'"),
                "\(refused.stderr)")
        #expect(refused.stderr.contains("make the plan again (booksync plan). Nothing was written"), "\(refused.stderr)")
        #expect(try await ws.rest.all().mapValues(\.revision) == remoteBefore)
        try original.write(toFile: config, atomically: true, encoding: .utf8)
        let applied = try ws.run("apply", planPath(ws))
        #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
        #expect(try await ws.rest.all()["b4"]?.fields["title"] == .string("New b4"))
    }

    /// A remote change since the last pull is held in the plan (exit 1),
    /// shown in the Markdown, and not written by apply.
    @Test func aRecordChangedRemotelyIsHeld() async throws {
        let ws = try Self.editedCollection()
        try await ws.rest.put([(id: "b1", fields: bookFields("b1", title: "Remote b1"))])
        let planned = try await plan(ws, "--markdown")
        #expect(planned.status == 1, "\(planned.stderr)")
        #expect(planned.stdout.contains("| b1 | the remote changed it since your last pull\\; run booksync pull\\, then plan again |"), "\(planned.stdout)")
        #expect(planned.stdout.contains("2 writes (1 create, 1 delete), 8 field changes; 1 record held"), "\(planned.stdout)")
        let applied = try ws.run("apply", "--atomic", planPath(ws))
        #expect(applied.status == 0, "\(applied.stderr)")
        let remote = try await ws.rest.all()
        #expect(remote["b1"]?.fields["title"] == .string("Remote b1") && remote["b3"] == nil && remote["b4"] != nil)
    }

    @Test(arguments: ["plan.json", ".booksync/base/pack", "notes.txt", "-"])
    func planOutInsideTheCollectionIsRefused(_ out: String) throws {
        let ws = try Self.editedCollection()
        let before = try ws.snapshot()
        let result = try ws.run("plan", "--out", out)
        #expect(result.status == 2 && result.stderr.contains("inside the collection"), "\(result.stderr)")
        #expect(try ws.snapshot() == before)
    }

    /// The mass-delete guard applies again: a plan that deletes most records
    /// (made with --force) needs --force to be applied.
    @Test func applyKeepsTheMassDeleteGuard() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("plan-guard"), host: try Emulator.requireHost())
        try ws.initialize()
        let ids = (1...8).map { "g\($0)" }
        for id in ids { try ws.write("\(id).json", bookFile(id)) }
        #expect(try ws.run("push").status == 0)
        // Five of eight deleted: over the default 50%.
        for id in ids.prefix(5) { try ws.remove("\(id).json") }
        #expect(try await plan(ws).status == 4)
        #expect(try await plan(ws, "--force").status == 0)
        let refused = try ws.run("apply", planPath(ws))
        #expect(refused.status == 4 && refused.stderr.contains("booksync apply --force"), "\(refused.stderr)")
        #expect(try await ws.rest.all().count == 8)
        let forced = try ws.run("apply", "--force", planPath(ws))
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try await ws.rest.all().keys.sorted() == ["g6", "g7", "g8"])
    }
}

typealias BooksyncTestOutput = BinaryTests.Output
