import BooksyncCore
@_spi(Remote) import BooksyncKit

/// Finds merge drivers installed by a booksync from before `--`: their
/// `booksync merge-file %O %A %B %P` takes a record file named `-Nq1abc.json`
/// (git's `%P`) for an option and fails, and git then keeps our side of the
/// file whole, silently dropping their changes. `status` checks on every run,
/// so the check reads the repository's config file directly instead of
/// starting git.
enum GitDriverCheck {
    /// The drivers of the repository around `collectionRoot` whose command is
    /// outdated, in `GitCommand.drivers` order; empty outside a repository or
    /// when its config cannot be read (the check never stops a command).
    static func outdatedDrivers(collectionRoot: String) -> [GitCommand.Driver] {
        guard let config = configFile(enclosing: collectionRoot),
              let bytes = try? FileSystem.readUserFile(config, limit: maximumConfigBytes) else { return [] }
        let commands = driverCommands(inConfig: String(decoding: bytes, as: UTF8.self))
        return GitCommand.drivers.filter { driver in commands[driver.key].map(isOutdated) ?? false }
    }

    /// A config larger than this is not read: the check is a courtesy, not worth a long read.
    static let maximumConfigBytes = 1 << 20

    /// Prints the one-line warning about the outdated drivers of the
    /// repository around `collectionRoot`, if any, with the command that
    /// updates them.
    static func warnIfOutdated(collectionRoot: String, context: CommandContext) {
        if let line = warning(outdatedDrivers(collectionRoot: collectionRoot), fix: fixCommand(collectionRoot: collectionRoot, context: context)) {
            context.console.err(line)
        }
    }

    /// The one-line warning for `drivers`, with the command that fixes them,
    /// or nil when there is nothing to warn about. `fix` is the `booksync
    /// init --git` command line that works from where the user is.
    static func warning(_ drivers: [GitCommand.Driver], fix: String) -> TerminalText? {
        guard !drivers.isEmpty else { return nil }
        let keys = drivers.map { "merge.\($0.key).driver" }.joined(separator: " and ")
        let one = drivers.count == 1
        return "booksync: warning: the git merge \(one ? "driver" : "drivers") \(keys) \(one ? "is" : "are") from an older booksync: "
            + "\(one ? "it takes" : "they take") a file named -….json for an option and git then keeps our side whole, dropping their changes; "
            + "run '\(fix)' to update \(one ? "it" : "them")"
    }

    /// `booksync init --git` as the user should type it: with `-C` when the
    /// collection is not the directory they are in (or above it).
    static func fixCommand(collectionRoot: String, context: CommandContext) -> String {
        let shown = context.display(collectionRoot)
        if shown == "." || shown.split(separator: "/").allSatisfy({ $0 == ".." }) {
            return "booksync init --git"
        }
        return "booksync -C \(ShellWord.quote(shown)) init --git"
    }

    /// Whether `command` runs booksync's `merge-file` or `merge-manifest` with
    /// git's `%P` but no `--` before it. Commands that are not booksync's, and
    /// installs from before `%P` (git's temporary files never start with
    /// `-`), are fine.
    static func isOutdated(_ command: String) -> Bool {
        let words = command.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard let verb = words.firstIndex(where: { $0 == MergeFileCommand.name || $0 == MergeManifestCommand.name }) else { return false }
        let operands = words[(verb + 1)...]
        guard let path = operands.firstIndex(of: "%P") else { return false }
        return !operands[..<path].contains("--")
    }

    /// The config file of the git repository that holds `directory`: the
    /// nearest `.git` above it, a directory or (a linked worktree, a
    /// submodule) a file `gitdir: PATH`, whose `commondir` holds the config
    /// the repository shares. nil outside a repository.
    static func configFile(enclosing directory: String) -> String? {
        var folder = FileSystem.absolute(directory)
        while true {
            let dotGit = folder == "/" ? "/.git" : folder + "/.git"
            if FileSystem.isDirectory(dotGit) { return dotGit + "/config" }
            if FileSystem.exists(dotGit) { return linkedConfigFile(dotGit, in: folder) }
            if folder == "/" { return nil }
            folder = FileSystem.split(folder).directory
        }
    }

    /// The config file a `.git` file leads to: `gitdir: PATH` (relative to
    /// the folder that holds it), then that directory's `commondir` if any.
    static func linkedConfigFile(_ dotGit: String, in folder: String) -> String? {
        func firstLine(_ path: String) -> String? {
            guard let bytes = try? FileSystem.readUserFile(path, limit: 4096) else { return nil }
            return String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first.map { String($0).trimmingWhitespace }
        }
        guard let line = firstLine(dotGit), line.hasPrefix("gitdir:") else { return nil }
        let gitDirectory = PathDisplay.resolve(String(line.dropFirst("gitdir:".count)).trimmingWhitespace, against: folder)
        guard let common = firstLine(gitDirectory + "/commondir"), !common.isEmpty else { return gitDirectory + "/config" }
        return PathDisplay.resolve(common, against: gitDirectory) + "/config"
    }

    /// The `merge.<name>.driver` values of a git config file, by `<name>`; the
    /// last one wins, as in git. Reads sections `[merge "name"]` (and the old
    /// `[merge.name]`), quoted values, escapes and comments; includes are not
    /// followed.
    static func driverCommands(inConfig text: String) -> [String: String] {
        var commands: [String: String] = [:]
        var subsection: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            var line = Substring(String(rawLine).trimmingWhitespace)
            if line.hasPrefix("[") {
                guard let close = line.firstIndex(of: "]") else { subsection = nil; continue }
                subsection = mergeSubsection(line[line.index(after: line.startIndex)..<close])
                line = Substring(String(line[line.index(after: close)...]).trimmingWhitespace)
            }
            guard let name = subsection, let equals = line.firstIndex(of: "=") else { continue }
            guard String(line[..<equals]).trimmingWhitespace.lowercased() == "driver" else { continue }
            commands[name] = value(line[line.index(after: equals)...])
        }
        return commands
    }

    /// The subsection of a `merge` section header (between the brackets), nil for any other section.
    static func mergeSubsection(_ header: Substring) -> String? {
        if let quote = header.firstIndex(of: "\"") {
            guard String(header[..<quote]).trimmingWhitespace.lowercased() == "merge" else { return nil }
            var name = ""
            var escaped = false
            for character in header[header.index(after: quote)...] {
                if escaped { name.append(character); escaped = false; continue }
                if character == "\\" { escaped = true; continue }
                if character == "\"" { return name }
                name.append(character)
            }
            return nil
        }
        // The deprecated [merge.name] form, which git reads in lower case.
        let parts = header.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "merge" else { return nil }
        return parts[1].lowercased()
    }

    /// A config value: quotes removed, `\"` `\\` `\n` `\t` unescaped, a
    /// comment (`#`, `;` outside quotes) dropped, outer white space trimmed.
    static func value(_ text: Substring) -> String {
        var result = ""
        var quoted = false
        var escaped = false
        for character in text {
            if escaped {
                result.append(character == "n" ? "\n" : character == "t" ? "\t" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if !quoted, character == "#" || character == ";" {
                break
            } else {
                result.append(character)
            }
        }
        return result.trimmingWhitespace
    }
}
