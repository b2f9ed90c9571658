import BooksyncCore
@_spi(Remote) import BooksyncKit
import Synchronization

/// A command run from a folder that is not inside a collection: it acts on
/// every collection below (`WorkspaceDiscovery`), in path order, each under a
/// heading, as git works from anywhere in its work tree (the manual's Scopes article).
enum WorkspaceRun {
    /// The commands that work on a workspace.
    static let commands: Set<String> = ["status", "diff", "pull", "push", "sync", "validate", "fmt"]

    static func run(_ command: any Subcommand.Type, _ arguments: ParsedArguments, context: CommandContext) async -> ExitCode {
        do {
            return try await runChecked(command, arguments, context: context)
        } catch {
            return BooksyncCommand.reportFailure(error, command: command.name, console: context.console)
        }
    }

    private static func runChecked(_ command: any Subcommand.Type, _ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        let collections = try WorkspaceDiscovery.collections(below: context.directory)
        guard !collections.isEmpty else { throw BooksyncError.notACollection(context.directory) }
        let selected = try operands(arguments.positionals, collections: collections, arguments: arguments)
        let json = arguments.has(.json)
        var worst = ExitCode.success
        var documents: [String] = []
        for path in collections {
            guard let operands = selected[path] else { continue }
            let root = context.directory + "/" + path
            if !json {
                if worst != .success || path != collections.first(where: { selected[$0] != nil }) { context.console.out("") }
                context.console.out("== \(name: path)\(heading(root, remote: arguments.value(.remote), environment: context.environment))")
            }
            let captured = Captured()
            var inner = context.working(in: root, console: json ? context.console.capturingStdout { captured.append($0) } : nil)
            inner.operandsFromCollection = true
            let code: ExitCode
            var failure: String?
            do {
                code = try await command.run(arguments.withOperands(operands), context: inner)
            } catch let error as UsageError {
                // The same options in every collection: said once, and nothing more runs.
                throw error
            } catch let error as BooksyncError {
                failure = error.description
                code = BooksyncCommand.reportFailure(error, command: command.name, place: path, console: context.console)
            }
            inner.console.flush()
            if json { documents.append(entry(path: path, code: code, document: captured.text, failure: failure)) }
            worst = worse(worst, code)
            if code == .interrupted {
                // Say what did not run, so nobody takes the output for the whole workspace.
                let left = collections.drop { $0 != path }.dropFirst().filter { selected[$0] != nil }
                if !left.isEmpty {
                    let names = left.map { TerminalText("\(name: $0)") }.reduce(into: TerminalText("")) { all, name in all += all == "" ? name : ", " + name }
                    context.console.err("booksync: interrupted; not run: \(names)")
                }
                break
            }
        }
        // A workspace made by a whole-database clone: what appeared on the remote since.
        if command.name == StatusCommand.name, !json, !arguments.has(.offline), arguments.positionals.isEmpty, worst != .interrupted {
            worst = worse(worst, await RemoteLayoutCheck.reportForStatus(workspace: context.directory, arguments: arguments, context: context))
        }
        if json {
            var out = "{\n  \"version\": 1,\n  \"workspace\": " + quoted(context.directory) + ",\n  \"collections\": ["
            out += documents.isEmpty ? "]\n}" : "\n" + documents.joined(separator: ",\n") + "\n  ]\n}"
            context.console.out(TerminalText(json: out))
        }
        return worst
    }

    /// ` (firestore p/(default) books)`, or nothing when the config cannot be read (the command says why).
    /// The remote each collection's command will use, as it chooses it.
    private static func heading(_ root: String, remote: String?, environment: [String: String]) -> TerminalText {
        guard let collection = try? CollectionDirectory.open(searchingFrom: root).selectingRemote(remote, environment: environment) else { return "" }
        let target = collection.config.remote
        let name: TerminalText = collection.remote.isOrigin ? "" : "remote '\(name: collection.remote.name)', "
        return " (\(name)firestore \(name: target.project)/\(name: target.database) \(name: target.collectionPath))"
    }

    /// Each collection's operands: a pathspec starts with a collection's path
    /// (`books/dune.json`, `authors/`, `books`), which is taken off; with
    /// pathspecs, only the collections they name run. nil: the collection does not run.
    static func operands(_ given: [String], collections: [String], arguments: ParsedArguments) throws(UsageError) -> [String: [String]] {
        var result: [String: [String]] = [:]
        guard !given.isEmpty else {
            for path in collections { result[path] = [] }
            return result
        }
        for operand in given {
            var text = operand
            while text.hasPrefix("./") { text.removeFirst(2) }
            if text == "." || text.isEmpty {
                for path in collections { result[path] = ["."] }
                continue
            }
            // The longest collection path the operand starts with.
            let owner = collections.filter { text == $0 || text == $0 + "/" || text.hasPrefix($0 + "/") }.max { $0.count < $1.count }
            guard let owner else {
                throw arguments.usageError("pathspec '\(TerminalEscaping.abbreviate(operand))' is in none of this folder's collections ("
                    + collections.prefix(5).joined(separator: ", ") + (collections.count > 5 ? ", …" : "")
                    + "); start it with a collection's path, e.g. \(collections[0])/ID.json")
            }
            let rest = String(text.dropFirst(owner.count)).drop { $0 == "/" }
            var list = result[owner] ?? []
            if rest.isEmpty { list.append(".") } else { list.append(String(rest)) }
            result[owner] = list
        }
        // A collection named whole takes every record, whatever else names it.
        for (path, list) in result where list.contains(".") { result[path] = ["."] }
        return result
    }

    /// The order of badness of exit codes: a failure in one collection decides the whole.
    static func worse(_ a: ExitCode, _ b: ExitCode) -> ExitCode {
        let rank: [ExitCode: Int] = [.success: 0, .attention: 1, .usage: 2, .failure: 3, .refused: 4, .interrupted: 5]
        return (rank[b] ?? 0) > (rank[a] ?? 0) ? b : a
    }

    private static func entry(path: String, code: ExitCode, document: String, failure: String?) -> String {
        var text = "    {\"path\": " + quoted(path) + ", \"exit\": \(code.rawValue)"
        let trimmed = document.trimmingWhitespace
        text += ", \"result\": " + (trimmed.isEmpty ? "null" : trimmed.replacingNewlines(with: "\n    "))
        if let failure { text += ", \"error\": " + quoted(failure) }
        return text + "}"
    }

    private static func quoted(_ text: String) -> String {
        CanonicalJSON.encodeInline(.string(text))
    }
}

/// One collection's stdout, gathered for the workspace's JSON document.
private final class Captured: Sendable {
    private let lock = Mutex<[UInt8]>([])
    func append(_ bytes: [UInt8]) { lock.withLock { $0 += bytes } }
    var text: String { lock.withLock { String(decoding: $0, as: UTF8.self) } }
}

private extension String {
    func replacingNewlines(with separator: String) -> String {
        split(separator: "\n", omittingEmptySubsequences: false).joined(separator: separator)
    }
}
