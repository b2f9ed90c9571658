import Foundation
import Testing
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Every refusal names a way out that works: a push refused for a conflict
/// that pull already stored names the resolve commands (not "run booksync
/// pull", which would only report the same conflict again), and running the
/// command it names, word for word, lets the next push through.
@Suite struct ConflictAdviceTests {
    /// Deleted here, modified remotely (DU); its id needs its file name on a command line.
    static let deletedHere = "deleted \u{1B}[2J here"
    /// Modified here, deleted remotely (UD); a leading '-' would read as an option.
    static let deletedRemotely = "-deleted-remotely"
    /// Modified on both sides (UU).
    static let bothModified = "both"

    /// The commands in single quotes that a line suggests, e.g. `booksync resolve du --ours`.
    static func suggestedCommands(_ line: Substring) -> [[String]] {
        line.split(separator: "'", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 && $0.element.hasPrefix("booksync ") }
            .map { $0.element.split(separator: " ").dropFirst().map(String.init) }
    }

    enum Choice: String, CaseIterable { case ours, theirs }

    @Test(arguments: Choice.allCases)
    func pushNamesResolveAndFollowingItWorks(choice: Choice) async throws {
        let ws = try Workspace(project: Emulator.uniqueProject("advice-" + choice.rawValue), host: try Emulator.requireHost())
        let ids = [Self.deletedHere, Self.deletedRemotely, Self.bothModified]
        try await ws.rest.put(ids.map { (id: $0, fields: bookFields($0)) })
        try ws.initialize()
        #expect(try ws.run("pull").status == 0)
        func file(_ id: String) throws -> String { try RecordID(id).fileName }

        try ws.remove(try file(Self.deletedHere))
        try ws.write(try file(Self.deletedRemotely), bookFile(Self.deletedRemotely, title: "Ours"))
        try ws.write(try file(Self.bothModified), bookFile(Self.bothModified, title: "Ours"))
        try await ws.rest.put([(id: Self.deletedHere, fields: bookFields(Self.deletedHere, title: "Theirs")),
                               (id: Self.bothModified, fields: bookFields(Self.bothModified, title: "Theirs"))])
        try await ws.rest.delete(Self.deletedRemotely)

        // Before a pull, pull is the way: it stores the conflicts and names resolve.
        let stale = try ws.run("push")
        #expect(stale.status == 1)
        #expect(stale.stdout.contains("remote changed 'both' since your last pull; run 'booksync pull'"), "\(stale.stdout)")
        let pull = try ws.run("pull")
        #expect(pull.status == 1)
        #expect(pull.stdout.hasSuffix("3 conflicts\n"), "\(pull.stdout)")
        #expect(pull.stderr.contains("booksync: hint: settle each conflict with 'booksync resolve ID --ours' or '--theirs'"), "\(pull.stderr)")

        // After it, push names resolve for each record, never pull again.
        let refused = try ws.run("push")
        #expect(refused.status == 1)
        #expect(!refused.stdout.contains("booksync pull"), "\(refused.stdout)")
        let lines = refused.stdout.split(separator: "\n")
        func advice(_ id: String) throws -> Substring {
            let path = try file(id)
            return try #require(lines.first { $0.hasPrefix("conflict \(path): ") }, "no conflict line for \(path) in \(refused.stdout)")
        }
        let du = try advice(Self.deletedHere)
        #expect(du.contains("deleted here, modified remotely; settle it with 'booksync resolve \(try file(Self.deletedHere)) --ours' (push then deletes it remotely)"), "\(du)")
        let ud = try advice(Self.deletedRemotely)
        #expect(ud.contains("modified here, deleted remotely; settle it with 'booksync resolve ./\(try file(Self.deletedRemotely)) --ours' (push then re-creates it remotely)"), "\(ud)")
        let uu = try advice(Self.bothModified)
        #expect(uu.contains("changed on both sides; settle it with 'booksync resolve both --ours' or '--theirs'"), "\(uu)")

        // Follow the advice word for word: the suggested command with the chosen flag.
        for line in [du, ud] {
            let command = try #require(Self.suggestedCommands(line).first { $0.last == "--" + choice.rawValue }, "\(line)")
            let resolved = try BinaryTests.run(command, in: ws.root, environment: ws.environment)
            #expect(resolved.status == 0, "\(command): \(resolved.stdout)\(resolved.stderr)")
            if line == du, choice == .ours {
                #expect(resolved.stdout.contains("with the local delete; booksync push deletes it remotely"), "\(resolved.stdout)")
            }
        }
        let both = try #require(Self.suggestedCommands(uu).first)
        #expect(try BinaryTests.run(both.dropLast() + ["--" + choice.rawValue], in: ws.root, environment: ws.environment).status == 0)

        let push = try ws.run("push")
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        #expect(try ws.run("status", "--short").stdout.isEmpty)
        let remote = try await ws.rest.all()
        switch choice {
        case .ours:
            #expect(remote[Self.deletedHere] == nil, "our delete reached the remote")
            #expect(remote[Self.deletedRemotely]?.fields["title"] == .string("Ours"), "our edit re-created it")
            #expect(remote[Self.bothModified]?.fields["title"] == .string("Ours"))
        case .theirs:
            #expect(remote[Self.deletedHere]?.fields["title"] == .string("Theirs"))
            #expect(ws.read(try file(Self.deletedHere)) == bookFile(Self.deletedHere, title: "Theirs"), "restored here")
            #expect(remote[Self.deletedRemotely] == nil)
            #expect(ws.read(try file(Self.deletedRemotely)) == nil, "deleted here too")
            #expect(remote[Self.bothModified]?.fields["title"] == .string("Theirs"))
        }
    }
}
