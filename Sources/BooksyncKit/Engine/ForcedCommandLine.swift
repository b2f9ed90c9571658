import BooksyncCore

extension CollectionDirectory {
    /// The command line a mass-delete refusal advises: the refused command
    /// again with `--force`, and everything that made it what it was, so
    /// that running it as printed does what was refused, no more and no
    /// less: a remote named with `--remote` (one the environment chose is
    /// chosen again), seed's `--delete` (without it, seed deletes nothing),
    /// and the pathspecs (without them, the command would reach every record).
    /// nil when that is `booksync COMMAND --force` alone.
    /// - Parameters:
    ///   - command: the command refused (`push`, `seed`).
    ///   - options: options of the command to keep, before `--force`.
    ///   - scope: the pathspecs the command ran with.
    ///   - fromWatcher: the scope is what a watch saw change, not pathspecs
    ///     a user typed: the advice is for the whole collection.
    package func forcedCommandLine(_ command: String, options: [String] = [], scope: RecordScope = .everything,
                                   fromWatcher: Bool = false) -> String? {
        var words = options
        if !remote.isOrigin, remote.reason == nil { words = ["--remote", remote.name] + words }
        let pathspecs = fromWatcher ? [] : scope.patterns.map(\.text)
        guard !words.isEmpty || !pathspecs.isEmpty else { return nil }
        words.append("--force")
        // `--` keeps a pathspec such as `-Nq1.json` from reading as an option.
        if pathspecs.contains(where: { $0.hasPrefix("-") }) { words.append("--") }
        return (["booksync", command] + words + pathspecs).map(Self.shellWord).joined(separator: " ")
    }

    /// `word` as a POSIX shell reads it back unchanged: as it is when it
    /// holds only characters no shell treats specially, else in single
    /// quotes (a quote inside written `'\''`).
    static func shellWord(_ word: String) -> String {
        let plain = !word.isEmpty && word.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: "%"), UInt8(ascii: "="),
                 UInt8(ascii: ":"), UInt8(ascii: "+"), UInt8(ascii: ","): true
            default: false
            }
        }
        return plain ? word : "'" + word.replacingAll("'", with: "'\\''") + "'"
    }
}

private extension String {
    /// Every `target` replaced (BooksyncKit's own, without Foundation).
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for character in self { if character == target { out += replacement } else { out.append(character) } }
        return out
    }
}
