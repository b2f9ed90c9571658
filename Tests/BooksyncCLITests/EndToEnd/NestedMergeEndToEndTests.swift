import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

extension RESTClient {
    /// What an app's `updateData(["stats.views": 11])` sends: a PATCH whose
    /// update mask names nested field paths, so only those values change.
    func update(_ id: String, _ fields: Fields, mask: [FieldPath]) async throws {
        let query = mask.map { "updateMask.fieldPaths=" + $0.description.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
        let body = CanonicalJSON.encodeInline(.map(["fields": FirestoreValueCodec.encodeFields(fields, documentsRoot: root)]))
        let (status, answer) = try await request("PATCH", base + "/\(collection)/\(id)?" + query.joined(separator: "&"), body: body)
        #expect(status == 200, "update failed: \(CanonicalJSON.encodeInline(answer))")
    }
}

/// <doc:ThreeWaySync>, nested maps, end to end: an app updates nested fields through
/// update masks while an editor changes other keys of the same map in the
/// file; status, diff, pull, resolve and push name nested fields by path.
@Suite struct NestedMergeEndToEndTests {
    static let stats: Value = .map(["rating": .integer(4), "views": .integer(10), "x.y": .string("base")])

    func fields(_ ws: Workspace, _ file: String) throws -> Fields {
        try JSONParser.parseObject(Array(ws.read(file)!.utf8))
    }

    func json(_ text: String) throws -> Fields {
        try JSONParser.parseObject(Array(text.utf8))
    }

    func record(_ status: Fields, _ id: String) -> Fields? {
        guard case .array(let records)? = status["records"] else { return nil }
        for case .map(let record) in records where record["id"] == .string(id) { return record }
        return nil
    }

    @Test func anUpdateMaskAndAFileEditOfTheSameMapMerge() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("nested-merge"), host: try Emulator.requireHost())
        try await ws.rest.put([(id: "dune", fields: bookFields("dune", title: "Dune", extra: ["stats": Self.stats]))])
        try ws.initialize()
        #expect(try ws.run("pull").status == 0)

        // The editor changes stats.rating; the app sets stats.views by mask.
        try ws.write("dune.json", bookFile("dune", title: "Dune", extra: ["stats": .map(["rating": .integer(5), "views": .integer(10), "x.y": .string("base")])]))
        try await ws.rest.update("dune", ["stats": .map(["views": .integer(11)])], mask: [FieldPath(["stats", "views"])])

        #expect(try ws.run("status", "--short").stdout == "MM dune\n")
        let status = try ws.run("status", "--json")
        #expect(record(try json(status.stdout), "dune")?["class"] == .string("mergeable"), "\(status.stdout)")
        let diff = try ws.run("diff", "dune")
        #expect(diff.stdout.contains("  stats.rating (changed locally)\n    base:   4\n    local:  5\n    remote: 4\n"), "\(diff.stdout)")
        #expect(diff.stdout.contains("  stats.views (changed remotely)\n    base:   10\n    local:  10\n    remote: 11\n"), "\(diff.stdout)")
        let diffJSON = try ws.run("diff", "dune", "--json")
        guard case .array(let records)? = try json(diffJSON.stdout)["records"], case .map(let dune)? = records.first,
              case .array(let changed)? = dune["fields"] else { Issue.record("\(diffJSON.stdout)"); return }
        #expect(changed.map { entry -> Value? in if case .map(let e) = entry { e["path"] } else { nil } }
            == [.array([.string("stats"), .string("rating")]), .array([.string("stats"), .string("views")])])

        let pull = try ws.run("pull")
        #expect(pull.status == 0, "\(pull.stdout)\(pull.stderr)")
        let merged: Value = .map(["rating": .integer(5), "views": .integer(11), "x.y": .string("base")])
        #expect(try fields(ws, "dune.json")["stats"] == merged)
        #expect(try ws.run("push").status == 0)
        #expect(try await ws.rest.all()["dune"]?.fields["stats"] == merged)
        #expect(try ws.run("status", "--short").stdout == "")
    }

    @Test func theSameNestedKeyChangedOnBothSidesIsAConflictNamedByPath() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("nested-conflict"), host: try Emulator.requireHost())
        try await ws.rest.put([(id: "dune", fields: bookFields("dune", title: "Dune", extra: ["stats": Self.stats]))])
        try ws.initialize()
        #expect(try ws.run("pull").status == 0)

        // Both change stats.rating and the key "x.y" (a dot in its name);
        // the editor also retitles, the app also sets stats.views.
        try ws.write("dune.json", bookFile("dune", title: "Dune!", extra: ["stats": .map(["rating": .integer(2), "views": .integer(10), "x.y": .string("editor")])]))
        try await ws.rest.update("dune", ["stats": .map(["rating": .integer(3), "views": .integer(11), "x.y": .string("app")])],
                                 mask: [FieldPath(["stats", "rating"]), FieldPath(["stats", "views"]), FieldPath(["stats", "x.y"])])

        #expect(try ws.run("status", "--short").stdout == "UU dune\n")
        let statusJSON = try json(try ws.run("status", "--json").stdout)
        #expect(record(statusJSON, "dune")?["conflictFields"] == .array([.string("stats.rating"), .string("stats.`x.y`")]))
        #expect(record(statusJSON, "dune")?["conflictPaths"]
            == .array([.array([.string("stats"), .string("rating")]), .array([.string("stats"), .string("x.y")])]))
        let plan = try json(try ws.run("pull", "--dry-run", "--json").stdout)
        guard case .array(let phases)? = plan["phases"], case .map(let phase)? = phases.first,
              case .array(let events)? = phase["events"], case .map(let event)? = events.first
        else { Issue.record("no pull event"); return }
        #expect(event["conflictFields"] == .array([.string("stats.rating"), .string("stats.`x.y`")]))
        #expect(event["conflictPaths"] == record(statusJSON, "dune")?["conflictPaths"])
        let pull = try ws.run("pull")
        #expect(pull.status == 1)
        #expect(pull.stdout.contains("both modified (fields 'stats.rating', 'stats.`x.y`')"), "\(pull.stdout)")
        let status = try ws.run("status")
        #expect(status.stdout.contains("(fields 'stats.rating', 'stats.`x.y`')"), "\(status.stdout)")
        let diff = try ws.run("diff", "dune")
        #expect(diff.stdout.contains("  stats.`x.y` (conflict)\n"), "\(diff.stdout)")
        #expect(diff.stdout.contains("  stats.views (changed remotely)\n"), "\(diff.stdout)")

        // --theirs takes the app's value at each conflicting path, and keeps
        // the editor's title and the app's views.
        let resolve = try ws.run("resolve", "dune", "--theirs")
        #expect(resolve.status == 0, "\(resolve.stdout)\(resolve.stderr)")
        let resolved = try fields(ws, "dune.json")
        #expect(resolved["title"] == .string("Dune!"))
        #expect(resolved["stats"] == .map(["rating": .integer(3), "views": .integer(11), "x.y": .string("app")]))
        #expect(try ws.run("push").status == 0)
        let remote = try await ws.rest.all()["dune"]?.fields
        #expect(remote?["title"] == .string("Dune!"))
        #expect(remote?["stats"] == resolved["stats"])
        #expect(try ws.run("status", "--short").stdout == "")
    }

    /// git's merge driver merges nested keys and names a nested conflict by path.
    @Test func mergeFileMergesNestedKeys() throws {
        let scratch = try ScratchDirectory()
        let base = scratch.path + "/base", ours = scratch.path + "/ours", theirs = scratch.path + "/theirs"
        let stats = { (rating: Int64, views: Int64) in ["stats": Value.map(["rating": .integer(rating), "views": .integer(views)])] }
        try bookFile("x", extra: stats(4, 10)).write(toFile: base, atomically: true, encoding: .utf8)
        try bookFile("x", extra: stats(5, 10)).write(toFile: ours, atomically: true, encoding: .utf8)
        try bookFile("x", extra: stats(4, 11)).write(toFile: theirs, atomically: true, encoding: .utf8)
        let clean = try BinaryTests.run(["merge-file", base, ours, theirs], in: scratch.path)
        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(try String(contentsOfFile: ours, encoding: .utf8) == bookFile("x", extra: stats(5, 11)))

        try bookFile("x", extra: stats(5, 10)).write(toFile: ours, atomically: true, encoding: .utf8)
        try bookFile("x", extra: stats(3, 12)).write(toFile: theirs, atomically: true, encoding: .utf8)
        let conflict = try BinaryTests.run(["merge-file", base, ours, theirs], in: scratch.path)
        #expect(conflict.status == 1)
        #expect(conflict.stderr.contains("conflicting field 'stats.rating' (kept ours)"), "\(conflict.stderr)")
        #expect(try String(contentsOfFile: ours, encoding: .utf8) == bookFile("x", extra: stats(5, 12)))
    }
}
