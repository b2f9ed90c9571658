import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync merge-file`: git's merge driver for record files.
enum MergeFileCommand: Subcommand {
    static let name = "merge-file"
    static let summary = "git merge driver: merge two versions of a record file field by field"
    static let usage = "booksync merge-file BASE OURS THEIRS [PATH]"
    static let discussion = """
        Follows git's merge driver convention (%O %A %B %P, installed after --
        so that a PATH such as -Nq1abc.json is not read as an option): the
        merged record replaces OURS. Exit 0 when every field merged cleanly and
        the result is a valid record; exit 1 otherwise, naming PATH and the
        fields on stderr.
        Maps merge key by key at any depth; a conflicting field keeps our value
        and is named by its path (stats.rating). A merge that would break the
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
        let files = try MergeDriverFiles(arguments, context: context)
        let report = files.report

        var rules = RecordRules()
        var pathID: RecordID?
        if let path = files.path {
            let (directory, fileName) = FileSystem.split(path)
            do {
                pathID = try RecordID.fromFileName(fileName)
            } catch {
                report("\(error.message); merging by lines")
                _ = try files.lineMerge()
                return .attention
            }
            guard pathID != nil else {
                report("not a record file (records are <id>.json); merging by lines")
                return try files.lineMerge()
            }
            if let (id, collectionRules) = subcollectionRecord(path, directory: directory) {
                // dune/reviews/r1.json: the collection is further up, and the id is the path.
                pathID = id
                rules = collectionRules
            } else if FileSystem.isDirectory(directory + "/.booksync") {
                do {
                    rules = try CollectionDirectory.open(searchingFrom: directory).rules
                } catch {
                    report("cannot read the collection's rules (\(error)); merging by lines")
                    _ = try files.lineMerge()
                    return .attention
                }
            }
        }
        func parse(_ path: String, side: String, allowEmpty: Bool) throws -> Fields?? {
            let bytes = try FileSystem.readFile(path)
            if allowEmpty, MergeDriverFiles.isBlank(bytes) { return .some(nil) }
            switch rules.parse(bytes) {
            case .success(let fields): return .some(fields)
            case .failure(let diagnostic):
                report("\(side) version\(MergeDriverFiles.at(diagnostic.position)): \(diagnostic.message); falling back to git's line merge")
                return nil
            }
        }
        guard let base = try parse(files.base, side: "base", allowEmpty: true),
              let ours = try parse(files.ours, side: "our", allowEmpty: false) ?? nil,
              let theirs = try parse(files.theirs, side: "their", allowEmpty: false) ?? nil
        else {
            let status = try files.lineMerge()
            guard status == .success else { return status }
            return try checkLineMerge(files.ours, id: pathID, rules: rules, report: report)
        }
        guard let id = pathID ?? ours.recordID else {
            report("no PATH (git's %P) and our version has no valid 'id': cannot tell which record this is; kept ours")
            return .attention
        }
        let outcome = RecordFileMerge.merge(base: base, ours: ours, theirs: theirs, id: id, rules: rules)
        // The editor's hint is merged on its own, never a conflict: theirs
        // when only they changed it, else ours.
        let hints = [files.base, files.ours, files.theirs].map { rules.hint(inFile: try? FileSystem.readFile($0)) }
        let hint = hints[1] == hints[0] ? hints[2] : hints[1]
        try FileSystem.writeAtomically(rules.fileBytes(outcome.fields, id: id, hint: hint), to: files.ours)
        if !outcome.conflicts.isEmpty {
            report("conflicting field\(outcome.conflicts.count == 1 ? "" : "s") \(quoted(outcome.conflicts.map(\.description))) (kept ours); edit the file to settle")
        }
        if !outcome.problems.isEmpty {
            let kept: TerminalText = outcome.keptOursWhole ? "kept our whole record" : "kept our value of \(quoted(outcome.keptForValidity.map { FieldPath(field: $0).description }))"
            report("the merged record would be invalid: \(outcome.problems.map(\.message).joined(separator: "; ")); \(kept); edit the file to settle")
        }
        return outcome.isClean ? .success : .attention
    }

    /// The subcollection record `path` is (`books/dune/reviews/r1.json`) and
    /// its collection's rules, when the nearest collection above it
    /// configures that subcollection; nil for anything else.
    static func subcollectionRecord(_ path: String, directory: String) -> (RecordID, RecordRules)? {
        guard !FileSystem.isDirectory(directory + "/.booksync"),
              let collection = try? CollectionDirectory.open(searchingFrom: directory), !collection.rules.subcollections.isEmpty else { return nil }
        let absolute = FileSystem.absolute(path)
        let root = (FileSystem.realPath(collection.paths.root) ?? collection.paths.root) + "/"
        let real = (FileSystem.realPath(FileSystem.split(absolute).directory) ?? "") + "/" + FileSystem.split(absolute).name
        guard real.hasPrefix(root),
              let id = try? RecordID.fromRelativePath(String(real.dropFirst(root.count)), subcollections: collection.rules.subcollections),
              !id.isTopLevel else { return nil }
        return (id, collection.rules)
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

    /// Field paths (Firestore's dotted notation), quoted and escaped for the terminal.
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
        Follows git's merge driver convention (%O %A %B %P, installed after
        --): the merged manifest replaces OURS. Each record's entry (hash,
        revision) merges three-way: a
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
        let files = try MergeDriverFiles(arguments, context: context)
        let report = files.report
        // Path ids (dune/reviews/r1) are merged whatever either branch's config
        // says: the merged config is not known yet (git may be merging it too),
        // and each command reads the merged manifest against the config it has.
        func load(_ path: String, side: String) throws -> Manifest? {
            let bytes = try FileSystem.readFile(path)
            // An empty base: the manifest was added on both branches.
            if side == "base", MergeDriverFiles.isBlank(bytes) { return Manifest() }
            do {
                return try Manifest.decode(bytes, otherPathIDs: .kept)
            } catch {
                report("\(side) version\(MergeDriverFiles.at(error.position)): \(error.message); falling back to git's line merge")
                return nil
            }
        }
        guard let base = try load(files.base, side: "base"), let ours = try load(files.ours, side: "our"),
              let theirs = try load(files.theirs, side: "their")
        else {
            let status = try files.lineMerge()
            guard status == .success else { return status }
            if (try? Manifest.decode(FileSystem.readFile(files.ours), otherPathIDs: .kept)) != nil { return .success }
            report("merged by lines, but the result is not a valid manifest; edit it or take one side")
            return .attention
        }
        let result = ManifestMerge.merge(base: base, ours: ours, theirs: theirs)
        try FileSystem.writeAtomically(result.manifest.encoded(), to: files.ours)
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
        if let targets = result.targetConflict {
            report("the two branches synced with different targets (ours: \(targets.ours), theirs: \(targets.theirs)); "
                + "their entries cannot be merged, so this manifest is ours unchanged")
        }
        if result.configConflict {
            report("the two branches recorded different config.json fingerprints; the merged manifest records none, "
                + "so booksync re-validates every record once")
        }
        report("settle the record files, then 'git add' this manifest")
        return .attention
    }
}

/// The operands of a git merge driver, `BASE OURS THEIRS [PATH]` (git's
/// `%O %A %B %P`), resolved against the current directory.
struct MergeDriverFiles {
    let base: String
    let ours: String
    let theirs: String
    /// The path being merged (`%P`), if git passed it.
    let path: String?
    /// Prints a problem on stderr, naming the file as the user knows it.
    let report: (TerminalText) -> Void

    /// - Throws: `UsageError` unless there are three or four operands.
    init(_ arguments: ParsedArguments, context: CommandContext) throws(UsageError) {
        let operands = arguments.positionals
        let files = operands.map { PathDisplay.resolve($0, against: context.currentDirectory) }
        guard files.count == 3 || files.count == 4 else {
            throw arguments.usageError("expected BASE OURS THEIRS [PATH] (git's %O %A %B %P)")
        }
        (base, ours, theirs) = (files[0], files[1], files[2])
        path = files.count == 4 ? files[3] : nil
        // git passes its temporary files as %O %A %B: messages name %P instead.
        let label = operands[files.count == 4 ? 3 : 1]
        let prefix = ["booksync", arguments.command].compactMap { $0 }.joined(separator: " ")
        let console = context.console
        report = { message in console.err("\(prefix): \(name: label): \(message)") }
    }

    /// Where in a side the problem is, in words: git's temporary file is
    /// not the file the user knows, so `file:line:column` has no file to
    /// name, and `our version:1:49` would read as a name.
    static func at(_ position: SourcePosition?) -> String {
        position.map { " (line \($0.line), column \($0.column))" } ?? ""
    }

    /// git's own line merge of the three files into OURS, with conflict markers.
    func lineMerge() throws -> ExitCode {
        try GitCommand.lineMerge(base: base, ours: ours, theirs: theirs)
    }

    /// Whether a side is empty but for white space: a file added on both branches has an empty base.
    static func isBlank(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x09 || $0 == 0x0D }
    }
}

extension Fields {
    /// The record id a record's own `id` field names, if it is a valid one.
    var recordID: RecordID? {
        guard case .string(let text)? = self["id"] else { return nil }
        return try? RecordID(text)
    }
}
