import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@testable import BooksyncKit

/// One record the server will not take never blocks a push, and is named:
/// a field path past 1,500 bytes is refused by `validate` and by push before
/// anything is sent.
@Suite struct RefusedRecordEndToEndTests {
    /// A book whose map `m` holds one key of `keyBytes` bytes: its field path `m.<key>` is 2 bytes longer.
    static func book(_ id: String, keyBytes: Int) -> String {
        bookFile(id, extra: ["m": .map([String(repeating: "k", count: keyBytes): .integer(1)])])
    }

    func workspace(_ name: String) throws -> Workspace {
        try Workspace(project: Emulator.uniqueProject(name), host: try Emulator.requireHost())
    }

    /// 1,500 bytes is the limit, and the whole dotted path counts.
    @Test func validateRefusesAFieldPathPast1500BytesNamingFileAndField() throws {
        let scratch = try ScratchDirectory()
        let initialize = try BinaryTests.run(["init", "--firestore", "p", "--collection", "books"], in: scratch.path)
        #expect(initialize.status == 0, "\(initialize.stderr)")
        try Self.book("edge", keyBytes: 1_498).write(toFile: scratch.path + "/edge.json", atomically: true, encoding: .utf8)
        let accepted = try BinaryTests.run(["validate", "edge.json"], in: scratch.path)
        #expect(accepted.status == 0, "\(accepted.stdout)\(accepted.stderr)")

        try Self.book("long", keyBytes: 1_499).write(toFile: scratch.path + "/long.json", atomically: true, encoding: .utf8)
        let refused = try BinaryTests.run(["validate"], in: scratch.path)
        #expect(refused.status == 1)
        let line = (refused.stdout + refused.stderr).split(separator: "\n").first { $0.hasPrefix("long.json: ") }.map(String.init)
        #expect(line == "long.json: field path 'm.\(String(repeating: "k", count: 38))…' is 1501 bytes (the names down to the field, "
            + "joined by dots); Firestore allows at most 1500", "\(refused.stdout)\(refused.stderr)")
        #expect(!(refused.stdout + refused.stderr).contains("edge.json:"))
    }

    /// The issue's case: the long path is named as invalid before anything is
    /// sent, and the good records are pushed (exit 1, not 3).
    @Test func aLongFieldPathIsNamedAndTheOthersArePushed() async throws {
        let ws = try workspace("longpath")
        try ws.initialize()
        for id in ["a", "b", "c"] { try ws.write(id + ".json", bookFile(id)) }
        try ws.write("long.json", Self.book("long", keyBytes: 1_499))
        let push = try ws.run("push")
        #expect(push.status == 1, "\(push.stdout)\(push.stderr)")
        #expect(push.stdout.contains("invalid  long.json: field path 'm.kkk"), "\(push.stdout)\(push.stderr)")
        #expect(push.stdout.hasSuffix("pushed 3, 1 invalid\n"), "\(push.stdout)")
        #expect(try await ws.rest.all().keys.sorted() == ["a", "b", "c"])
    }
}
