import Foundation
import Testing
import BooksyncTestSupport

/// The completion scripts loaded into the real shells, as `source <(booksync
/// completion bash)` in ~/.bashrc and its zsh and fish forms do, and asked
/// for completions the way each shell asks: bash through COMP_WORDS and the
/// registered function, zsh through a real interactive zsh in a
/// pseudo-terminal with TAB pressed (fixtures/completion/zsh-capture.zsh),
/// fish through `complete -C`. One table of typed lines for all three.
/// scripts/test installs zsh and fish with apt-get; without them these
/// tests fail, never skip.
@Suite struct CompletionTests {
    /// Where `name` is installed: the first of PATH's folders that holds it
    /// (`/usr/bin/zsh` on Debian, `/bin/zsh` and Homebrew's fish and bash 5 on
    /// macOS), or the Debian path, which then fails the installed check.
    static func shell(_ name: String) -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/opt/homebrew/bin", "/usr/local/bin"]
        return folders.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/" + name
    }

    /// Runs `script` in bash with the completion loaded from the built binary.
    static func bash(_ script: String, in directory: String) throws -> BinaryTests.Output {
        let loaded = """
            source <("$BOOKSYNC" completion bash) || exit 9
            complete -p booksync >/dev/null || exit 8
            comp() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _booksync; printf '%s\\n' "${COMPREPLY[@]}"; }
            \(script)
            """
        return try BinaryTests.run(["-c", loaded], in: directory, environment: ["BOOKSYNC": BinaryTests.executable],
                                   program: Self.shell("bash"))
    }

    @Test func registersTheFunction() throws {
        let scratch = try ScratchDirectory()
        let result = try Self.bash("complete -p booksync", in: scratch.path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "complete -F _booksync booksync\n")
        #expect(result.stderr.isEmpty)
    }

    /// What is typed, and what every shell must offer (in any order).
    static let cases: [(line: String, expected: [String])] = [
        ("booksync st", ["status"]),
        ("booksync ", ["init", "clone", "discover", "status", "diff", "pull", "push", "sync", "plan", "apply", "compare", "watch", "resolve", "seed", "validate", "verify", "fmt", "schema", "remote",
                       "merge-file", "merge-manifest", "completion", "man", "help"]),
        ("booksync --color a", ["auto", "always"]),
        ("booksync --color=n", ["never"]),
        // The value of -C is not the command: pu is.
        ("booksync -C books pu", ["pull", "push"]),
        ("booksync --color=never fm", ["fmt"]),
        ("booksync status --e", ["--exit-code"]),
        ("booksync -q push --a", ["--atomic"]),
        ("booksync status --ver", ["--verbose", "--version"]),
        ("booksync push --max-delete ", []),
        ("booksync init --collection ", []),
        ("booksync completion ", ["bash", "zsh", "fish"]),
        ("booksync help me", ["merge-file", "merge-manifest"]),
        ("booksync schema --editor ", ["vscode"]),
        ("booksync -C al", ["alpha"]),
        ("booksync fmt no", ["notes.json"]),
    ]

    enum Shell: String, CaseIterable { case bash, zsh, fish }

    /// The words bash hands the function: split at spaces, and `=` is a word of its own.
    static func bashWords(_ line: String) -> [String] {
        line.split(separator: " ", omittingEmptySubsequences: false).flatMap { word -> [String] in
            guard let equals = word.firstIndex(of: "=") else { return [String(word)] }
            return [String(word[..<equals]), "=", String(word[word.index(after: equals)...])]
        }
    }

    /// What `shell` offers for `line`, in a directory holding alpha/ and notes.json.
    static func offered(_ shell: Shell, _ line: String, in directory: String) throws -> (status: Int32, stderr: String, words: [String]) {
        let result: BinaryTests.Output
        switch shell {
        case .bash:
            result = try Self.bash("comp " + bashWords(line).map { "'" + $0 + "'" }.joined(separator: " "), in: directory)
        case .zsh:
            result = try BinaryTests.run(["-f", Fixtures.root + "/completion/zsh-capture.zsh", BinaryTests.executable, line], in: directory,
                                         program: Self.shell("zsh"))
        case .fish:
            let script = "\"$BOOKSYNC\" completion fish | source; complete -C'\(line)'"
            result = try BinaryTests.run(["-N", "-c", script], in: directory, environment: ["BOOKSYNC": BinaryTests.executable], program: Self.shell("fish"))
        }
        var words = result.stdout.split(separator: "\n").map { String($0.split(separator: "\t", maxSplits: 1).first ?? "") }
        // fish offers `--color=never` whole and folders with their slash; the other shells the value alone.
        if shell == .fish, let typed = line.split(separator: " ").last, let equals = typed.firstIndex(of: "=") {
            let prefix = typed[...equals]
            words = words.map { $0.hasPrefix(prefix) ? String($0.dropFirst(prefix.count)) : $0 }
        }
        words = words.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        return (result.status, result.stderr, words.sorted())
    }

    @Test(arguments: Shell.allCases, cases.indices)
    func completes(_ shell: Shell, _ index: Int) throws {
        let (line, expected) = Self.cases[index]
        let program = Self.shell(shell.rawValue)
        try #require(FileManager.default.isExecutableFile(atPath: program), "\(shell) is not installed; scripts/test installs it with apt-get")
        let scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path + "/alpha", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: scratch.path + "/notes.json", contents: Data("{}".utf8))
        let got = try Self.offered(shell, line, in: scratch.path)
        #expect(got.status == 0, "\(shell) \(line): \(got.stderr)")
        #expect(got.stderr.isEmpty, "\(shell) \(line): \(got.stderr)")
        #expect(got.words == expected.sorted(), "\(shell): \(line)")
    }
}
