import BooksyncCore
import BooksyncKit

/// `booksync merge-file`: git's merge driver for record files.
enum MergeFileCommand: Subcommand {
    static let name = "merge-file"
    static let summary = "git merge driver: merge two versions of a record file field by field"
    static let usage = "booksync merge-file BASE OURS THEIRS [PATH]"
    static let discussion = """
        Follows git's merge driver convention (%O %A %B %P): the merged record
        replaces OURS. Exit 0 when every field merged cleanly and the result is a
        valid record; exit 1 otherwise, naming PATH and the fields on stderr.
        A conflicting field keeps our value. A merge that would break the
        collection's rules (their side dropped a required field or changed its
        type, the id no longer matches the file name, a Firestore limit) keeps
        our value of the fields that broke them, or our whole record. PATH
        (git's %P) gives the record id and locates the collection's config.json
        for its rules; without PATH the id is ours and the Book schema applies.
        A side that is not valid JSON falls back to git's line-based merge
        (conflict markers). Enable it with 'booksync init --git' or the lines
        that 'booksync init' prints.
        """
    static let options: [Option] = []

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        let files = arguments.positionals.map { PathDisplay.resolve($0, against: context.currentDirectory) }
        guard files.count == 3 || files.count == 4 else {
            throw UsageError(message: "expected BASE OURS THEIRS [PATH] (git's %O %A %B %P)", command: name)
        }
        // git passes its temporary files as %O %A %B: messages name %P instead.
        let label = arguments.positionals[files.count == 4 ? 3 : 1]
        func report(_ message: TerminalText) { context.console.err("booksync merge-file: \(name: label): \(message)") }

        var rules = RecordRules()
        var pathID: RecordID?
        if files.count == 4 {
            let (directory, fileName) = FileSystem.split(files[3])
            do {
                pathID = try RecordID.fromFileName(fileName)
            } catch {
                report("\(error.message); merging by lines")
                _ = try GitCommand.lineMerge(base: files[0], ours: files[1], theirs: files[2])
                return .attention
            }
            guard pathID != nil else {
                report("not a record file (records are <id>.json); merging by lines")
                return try GitCommand.lineMerge(base: files[0], ours: files[1], theirs: files[2])
            }
            if FileSystem.isDirectory(directory + "/.booksync") {
                do {
                    rules = try CollectionDirectory.open(searchingFrom: directory).rules
                } catch {
                    report("cannot read the collection's rules (\(error)); merging by lines")
                    _ = try GitCommand.lineMerge(base: files[0], ours: files[1], theirs: files[2])
                return .attention
                }
            }
        }
        func parse(_ path: String, side: String, allowEmpty: Bool) throws -> Fields?? {
            let bytes = try FileSystem.readFile(path)
            if allowEmpty, bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x09 || $0 == 0x0D }) { return .some(nil) }
            switch rules.parse(bytes) {
            case .success(let fields): return .some(fields)
            case .failure(let diagnostic):
                report("\(side) version\(StatusRenderer.located(diagnostic)); falling back to git's line merge")
                return nil
            }
        }
        guard let base = try parse(files[0], side: "base", allowEmpty: true),
              let ours = try parse(files[1], side: "our", allowEmpty: false) ?? nil,
              let theirs = try parse(files[2], side: "their", allowEmpty: false) ?? nil
        else {
            let status = try GitCommand.lineMerge(base: files[0], ours: files[1], theirs: files[2])
            guard status == .success else { return status }
            return try checkLineMerge(files[1], id: pathID, rules: rules, report: report)
        }
        guard let id = pathID ?? ours.recordID else {
            report("no PATH (git's %P) and our version has no valid 'id': cannot tell which record this is; kept ours")
            return .attention
        }
        let outcome = RecordFileMerge.merge(base: base, ours: ours, theirs: theirs, id: id, rules: rules)
        try FileSystem.writeAtomically(rules.canonicalBytes(outcome.fields), to: files[1])
        if !outcome.conflicts.isEmpty {
            report("conflicting field\(outcome.conflicts.count == 1 ? "" : "s") \(quoted(outcome.conflicts)) (kept ours); edit the file to settle")
        }
        if !outcome.problems.isEmpty {
            let kept: TerminalText = outcome.keptOursWhole ? "kept our whole record" : "kept our value of \(quoted(outcome.keptForValidity))"
            report("the merged record would be invalid: \(outcome.problems.map(\.message).joined(separator: "; ")); \(kept); edit the file to settle")
        }
        return outcome.isClean ? .success : .attention
    }

    /// A clean line merge of files that were not all JSON still has to be a valid record.
    static func checkLineMerge(_ path: String, id: RecordID?, rules: RecordRules, report: (TerminalText) -> Void) throws -> ExitCode {
        let bytes = try FileSystem.readFile(path)
        let problem: String?
        switch rules.parse(bytes) {
        case .failure(let diagnostic):
            problem = (diagnostic.position.map { "\($0): " } ?? "") + diagnostic.message
        case .success(let fields):
            if let id = id ?? fields.recordID {
                problem = rules.problems(in: fields, id: id).first?.message
            } else {
                problem = "no valid 'id'"
            }
        }
        guard let problem else { return .success }
        report("merged by lines, but the result is not a valid record (\(problem)); edit the file to settle")
        return .attention
    }

    /// Field names, quoted and escaped for the terminal.
    static func quoted(_ names: [String]) -> TerminalText {
        names.map { "'\(name: $0)'" as TerminalText }.joined(separator: ", ")
    }
}

/// `booksync merge-manifest`: git's merge driver for `.booksync/manifest.json`.
enum MergeManifestCommand: Subcommand {
    static let name = "merge-manifest"
    static let summary = "git merge driver: merge two versions of the manifest record by record"
    static let usage = "booksync merge-manifest BASE OURS THEIRS [PATH]"
    static let discussion = """
        Follows git's merge driver convention (%O %A %B %P): the merged manifest
        replaces OURS. Each record's entry (hash, revision) merges three-way: a
        change on one side (added, changed, removed) is taken, the same change
        on both is kept. Exit 0 when nothing conflicts. A record changed
        differently on both sides, or removed on one and changed on the other,
        is a conflict: it is left out of the merged manifest (which stays
        valid), so booksync compares its file with the remote by content on the
        next status or pull, and it is named on stderr; exit 1. The config
        fingerprint merges the same way. A side that is not a manifest falls
        back to git's line-based merge. Enable it with 'booksync init --git'.
        """
    static let options: [Option] = []
    /// Conflicting records named one per line, up to this many.
    static let listedConflicts = 50

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        let files = arguments.positionals.map { PathDisplay.resolve($0, against: context.currentDirectory) }
        guard files.count == 3 || files.count == 4 else {
            throw UsageError(message: "expected BASE OURS THEIRS [PATH] (git's %O %A %B %P)", command: name)
        }
        let label = arguments.positionals[files.count == 4 ? 3 : 1]
        func report(_ message: TerminalText) { context.console.err("booksync merge-manifest: \(name: label): \(message)") }
        func load(_ path: String, side: String) throws -> Manifest? {
            let bytes = try FileSystem.readFile(path)
            // An empty base: the manifest was added on both branches.
            if side == "base", bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x09 || $0 == 0x0D }) { return Manifest() }
            do {
                return try Manifest.decode(bytes)
            } catch {
                report("\(side) version" + (error.position.map { ":\($0)" } ?? "") + ": \(error.message); falling back to git's line merge")
                return nil
            }
        }
        guard let base = try load(files[0], side: "base"), let ours = try load(files[1], side: "our"),
              let theirs = try load(files[2], side: "their")
        else {
            let status = try GitCommand.lineMerge(base: files[0], ours: files[1], theirs: files[2])
            guard status == .success else { return status }
            if (try? Manifest.decode(FileSystem.readFile(files[1]))) != nil { return .success }
            report("merged by lines, but the result is not a valid manifest; edit it or take one side")
            return .attention
        }
        let result = ManifestMerge.merge(base: base, ours: ours, theirs: theirs)
        try FileSystem.writeAtomically(result.manifest.encoded(), to: files[1])
        if result.isClean { return .success }
        if !result.conflicts.isEmpty {
            let count = result.conflicts.count
            report("\(plural(count, "record")) synced differently on the two branches; the merged manifest leaves "
                + (count == 1 ? "it" : "them") + " out, so the next 'booksync status' or 'pull' compares "
                + (count == 1 ? "its file" : "each file") + " with the remote by content (a difference is a conflict to resolve):")
            for conflict in result.conflicts.prefix(listedConflicts) {
                context.console.err("  '\(conflict.id)': \(conflict.reason)")
            }
            if count > listedConflicts { context.console.err("  ... and \(count - listedConflicts) more") }
        }
        if result.configConflict {
            report("the two branches recorded different config.json fingerprints; the merged manifest records none, "
                + "so booksync re-validates every record once")
        }
        report("settle the record files, then 'git add' this manifest")
        return .attention
    }
}

extension Fields {
    /// The record id a record's own `id` field names, if it is a valid one.
    var recordID: RecordID? {
        guard case .string(let text)? = self["id"] else { return nil }
        return try? RecordID(text)
    }
}
