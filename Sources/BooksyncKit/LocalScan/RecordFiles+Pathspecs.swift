import BooksyncCore

extension RecordFiles {
    /// The scope of command-line pathspecs (the manual's Scopes article): an id
    /// (`dune`, `dune/reviews/r1`), a file (`dune.json`, `./-Nq1.json`), a
    /// folder (`dune/reviews/`, `dune/`, `.`), or a glob (`'sci-*'`, `'**/r1.json'`). Paths
    /// and globs are relative to the current directory when it is inside the
    /// collection, else to the collection; no path may leave the collection
    /// or pass through a link inside it.
    /// `fromRoot`: relative to the collection only, never the current
    /// directory (a workspace hands each collection its part of a pathspec).
    /// A pathspec naming the whole collection (`.`) is no narrowing at all:
    /// the command runs, and guards, as without one.
    /// - Throws: `.invalidArgument` naming the pathspec.
    package func scope(_ arguments: [String], fromRoot: Bool = false) throws(BooksyncError) -> RecordScope {
        var patterns: [RecordScope.Pattern] = []
        for argument in arguments {
            let found = try pattern(argument, fromRoot: fromRoot)
            if case .glob("**") = found.kind { return .everything }
            patterns.append(found)
        }
        return RecordScope(patterns)
    }

    private func pattern(_ argument: String, fromRoot: Bool) throws(BooksyncError) -> RecordScope.Pattern {
        let shown = TerminalEscaping.abbreviate(argument)
        guard !argument.isEmpty else { throw .invalidArgument("an empty pathspec names no record") }
        if argument.contains(where: { $0 == "*" || $0 == "?" }) {
            var glob = argument
            while glob.hasPrefix("./") { glob.removeFirst(2) }
            guard !glob.hasPrefix("/"), !glob.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) else {
                throw .invalidArgument("pathspec '\(shown)': a glob is relative to the collection (no '/' first, no '.' or '..')")
            }
            return RecordScope.Pattern(.glob((fromRoot ? "" : currentFolderPrefix()) + glob), text: argument)
        }
        // `/` stays `/`: the root of the file system, outside the collection
        // like `/tmp`, never an empty path that would read as the current folder.
        let trimmed = argument.hasSuffix("/") && argument.contains(where: { $0 != "/" }) ? String(argument.dropLast()) : argument
        // A bare word is an id even where a folder has its name (`dune` and `dune/`):
        // the folder needs its slash, or a name that is no id (`dune/reviews`).
        let namesRecord = !argument.hasSuffix("/") && (argument.hasSuffix(".json") || (try? rules.recordID(argument)) != nil)
        if !namesRecord, argument.hasSuffix("/") || isFolder(trimmed, fromRoot: fromRoot) {
            // The folder as a file path below it would be: the same checks (inside, no link).
            let relative = try relativePath(ofFileArgument: (trimmed.isEmpty ? "." : trimmed) + "/x.json", rootOnly: fromRoot, shown: argument)
            let folder = String(relative.dropLast("x.json".count)).trimmingSuffix("/")
            guard !folder.isEmpty else { return RecordScope.Pattern(.glob("**"), text: argument) }
            return RecordScope.Pattern(.folder(folder), text: argument)
        }
        if argument.hasSuffix(".json") {
            return RecordScope.Pattern(.record(try recordID(ofFileArgument: argument, rootOnly: fromRoot)), text: argument)
        }
        do {
            return RecordScope.Pattern(.record(try rules.recordID(argument)), text: argument)
        } catch {
            throw .invalidArgument("pathspec '\(shown)': \(error.message)")
        }
    }

    /// Whether `argument` names a folder (from the current directory or the collection), never through a link.
    private func isFolder(_ argument: String, fromRoot: Bool) -> Bool {
        if argument == "." || argument == ".." { return true }
        let candidates = argument.hasPrefix("/") ? [argument]
            : (fromRoot ? [] : [FileSystem.currentDirectory() + "/" + argument]) + [paths.root + "/" + argument]
        return candidates.contains { (try? FileSystem.stat($0))?.kind == .directory }
    }

    /// The operands of `validate` and `fmt` split in two: files (a path to a
    /// `.json`, checked even when its name is no record's) and pathspecs
    /// (ids, folders, globs).
    static func filesAndPathspecs(_ operands: [String]) -> (files: [String], pathspecs: [String]) {
        var files: [String] = [], pathspecs: [String] = []
        for operand in operands {
            if isFileOperand(operand) { files.append(operand) } else { pathspecs.append(operand) }
        }
        return (files, pathspecs)
    }

    /// A path to a `.json` file, not a glob: what `validate` and `fmt` took before pathspecs.
    static func isFileOperand(_ operand: String) -> Bool {
        operand.hasSuffix(".json") && !operand.contains(where: { $0 == "*" || $0 == "?" })
    }

    /// The record files `pathspecs` select, absolute, in name order. A folder
    /// or glob also selects a file whose name is no record's (so `validate
    /// 'sci-*'` reports `sci-Bad Name.json`); a pathspec that selects no file
    /// is an error, as for status.
    func filePaths(selectedBy pathspecs: [String], fromRoot: Bool) throws(BooksyncError) -> [String] {
        guard !pathspecs.isEmpty else { return [] }
        let scope = try scope(pathspecs, fromRoot: fromRoot)
        let names = try self.names()
        guard !scope.isEverything else { return names.map(paths.recordFile) }
        var selected: [String] = []
        var ids: [RecordID] = []
        for name in names {
            if let id = (try? RecordID.fromRelativePath(name, subcollections: rules.subcollections)) ?? nil {
                guard scope.contains(id) else { continue }
                ids.append(id)
            } else if !scope.patterns.contains(where: { $0.matches(path: name) }) {
                continue
            }
            selected.append(name)
        }
        if let missing = scope.unmatched(ids).first(where: { pattern in !selected.contains(where: pattern.matches(path:)) }) {
            throw .invalidArgument("pathspec '\(TerminalEscaping.abbreviate(missing.text))' matches no record file")
        }
        return selected.map(paths.recordFile)
    }

    /// `dune/reviews/` when the current directory is that folder of the collection, else empty.
    private func currentFolderPrefix() -> String {
        let current = FileSystem.realPath(FileSystem.currentDirectory()) ?? FileSystem.currentDirectory()
        let root = FileSystem.realPath(paths.root) ?? paths.root
        guard current.hasPrefix(root + "/") else { return "" }
        return String(current.dropFirst(root.count + 1)) + "/"
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
