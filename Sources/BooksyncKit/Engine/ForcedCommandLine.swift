import BooksyncCore

/// The command line a mass-delete refusal advises: the refused command
/// again with `--force`, and everything that made it what it was, so that
/// running it as printed does what was refused, no more and no less: a
/// remote named with `--remote` (one the environment chose is chosen
/// again), seed's `--delete` (without it, seed deletes nothing), and the
/// pathspecs (without them, the command would reach every record).
enum ForcedCommandLine {
    /// The line, each word quoted for a POSIX shell; nil when it is
    /// `booksync COMMAND --force` alone.
    /// - Parameters:
    ///   - command: the command refused (`push`, `seed`).
    ///   - remote: the remote it ran against.
    ///   - options: options of the command to keep, before `--force`.
    ///   - scope: the pathspecs the command ran with.
    ///   - fromWatcher: the scope is what a watch saw change, not pathspecs
    ///     a user typed: the advice is for the whole collection.
    static func advice(_ command: String, remote: SelectedRemote, options: [String] = [], scope: RecordScope = .everything,
                       fromWatcher: Bool = false) -> String? {
        var words = options
        if !remote.isOrigin, remote.reason == nil { words = ["--remote", remote.name] + words }
        let pathspecs = fromWatcher ? [] : scope.patterns.map(\.text)
        guard !words.isEmpty || !pathspecs.isEmpty else { return nil }
        words.append("--force")
        // `--` keeps a pathspec such as `-Nq1.json` from reading as an option.
        if pathspecs.contains(where: { $0.hasPrefix("-") }) { words.append("--") }
        return (["booksync", command] + words + pathspecs).map(ShellWord.quote).joined(separator: " ")
    }
}
