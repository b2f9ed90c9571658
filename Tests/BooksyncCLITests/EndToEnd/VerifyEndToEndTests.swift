import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// What a clone can forge, and `verify` finds: a record edit committed with
/// a manifest entry whose hash matches it makes `status` say nothing changed;
/// `verify` compares contents and names the record.
@Suite struct VerifyEndToEndTests {
    /// The emulator lists numeric ids (`__id9__`, `__id10__`) by number, not
    /// by bytes; the check that a listing moves forward must agree with it
    /// (a byte-order check made every pull of such a collection fail).
    @Test func numericIDsListInTheServersOrder() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("numericids"), host: try Emulator.requireHost(), collection: "books")
        try await ws.rest.put(["__id9__", "__id10__", "__id123__", "a", "b"].map { (id: $0, fields: bookFields($0)) })
        try ws.initialize()
        let pull = try ws.run("pull")
        #expect(!pull.stderr.contains("must increase") && pull.status != 3, "\(pull.stdout) \(pull.stderr)")
        #expect(try ws.recordFiles()["a.json"] != nil)
    }

    @Test func aForgedBaseEntryHidesAnEditFromStatusButNotFromVerify() async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("verify"), host: try Emulator.requireHost(), collection: "books")
        try ws.initialize()
        for id in ["keep", "forged", "edited"] { try ws.write("\(id).json", bookFile(id)) }
        #expect(try ws.run("push").status == 0)
        #expect(try ws.run("verify").status == 0, "nothing differs after a push")

        // The forgery: an edit plus a manifest entry that claims it is the base.
        let forged = bookFile("forged", title: "Changed behind the base")
        try ws.write("forged.json", forged)
        let manifestPath = ws.root + "/.booksync/manifest.json"
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifestPath))) as? [String: Any])
        var records = try #require(manifest["records"] as? [String: [String: String]])
        records["forged"]?["hash"] = SHA256.contentHash(Array(forged.utf8)).text
        manifest["records"] = records
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: URL(fileURLWithPath: manifestPath))
        // An ordinary local edit, which status shows.
        try ws.write("edited.json", bookFile("edited", title: "Edited"))

        #expect(try ws.run("status", "--short").stdout == "M  edited\n", "status trusts the base: the forged record looks unchanged")
        let verify = try ws.run("verify")
        #expect(verify.status == 1, "\(verify.stderr)")
        #expect(verify.stdout == "differs  forged.json (the base says it matches the remote; it does not)\n", "\(verify.stdout)")
        #expect(verify.stderr.contains("3 records compared by content, 1 differ though the base says they match; 1 more differ as booksync status shows"), "\(verify.stderr)")

        // The way out: forget that base; pull then sees both sides and stores the conflict for resolve.
        #expect(try ws.run("pull", "--theirs").stdout.contains("forged") == false, "pull alone cannot see it")
        let repair = try ws.run("verify", "--repair")
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stdout.contains("forgot the base of 1 record"), "\(repair.stdout)")
        #expect(try ws.run("status", "--short").stdout.contains("AA forged"), "added on both sides once the base is forgotten")
        _ = try ws.run("pull")
        let resolved = try ws.run("resolve", "--theirs", "forged", "forged.json")
        #expect(resolved.stdout.contains("resolved forged.json with the remote version"), "\(resolved.stdout) \(resolved.stderr)")
        #expect(!resolved.stderr.contains("has no unresolved conflict"), "a record named twice is settled once: \(resolved.stderr)")
        #expect(ws.read("forged.json") == bookFile("forged"))
        #expect(try ws.run("verify").status == 0)
    }
}
