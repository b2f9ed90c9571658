import Foundation
import Testing
import BooksyncTestSupport

/// `booksync completion bash` loaded into a real bash, as `source <(booksync
/// completion bash)` in ~/.bashrc does, then asked for completions the way
/// bash asks (COMP_WORDS, COMP_CWORD, the registered function). zsh and fish
/// are not installed where these tests run, so their scripts are pinned by the
/// golden scenarios completion-zsh and completion-fish only.
@Suite struct CompletionTests {
    /// Runs `script` in bash with the completion loaded from the built binary.
    static func bash(_ script: String, in directory: String) throws -> BinaryTests.Output {
        let loaded = """
            source <("$BOOKSYNC" completion bash) || exit 9
            complete -p booksync >/dev/null || exit 8
            comp() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _booksync; printf '%s\\n' "${COMPREPLY[@]}"; }
            \(script)
            """
        return try BinaryTests.run(["-c", loaded], in: directory, environment: ["BOOKSYNC": BinaryTests.executable],
                                   program: "/bin/bash")
    }

    @Test func registersTheFunction() throws {
        let scratch = try ScratchDirectory()
        let result = try Self.bash("complete -p booksync", in: scratch.path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "complete -F _booksync booksync\n")
        #expect(result.stderr.isEmpty)
    }

    static let cases: [(words: [String], expected: [String])] = [
        (["booksync", "st"], ["status"]),
        (["booksync", ""], ["init", "clone", "status", "diff", "pull", "push", "sync", "resolve", "seed", "validate", "verify", "fmt", "schema", "remote",
                            "merge-file", "merge-manifest", "completion", "man", "help"]),
        (["booksync", "--color", "a"], ["auto", "always"]),
        // `--color=n` reaches bash as three words: `=` breaks words.
        (["booksync", "--color", "=", "n"], ["never"]),
        // The value of -C is not the command: pu is.
        (["booksync", "-C", "books", "pu"], ["pull", "push"]),
        (["booksync", "--color=never", "fm"], ["fmt"]),
        (["booksync", "status", "--e"], ["--exit-code"]),
        (["booksync", "-q", "push", "--a"], ["--atomic"]),
        (["booksync", "status", "--ver"], ["--verbose", "--version"]),
        (["booksync", "push", "--max-delete", ""], []),
        (["booksync", "init", "--collection", ""], []),
        (["booksync", "completion", ""], ["bash", "zsh", "fish"]),
        (["booksync", "help", "me"], ["merge-file", "merge-manifest"]),
        (["booksync", "-C", "al"], ["alpha"]),
        (["booksync", "fmt", "no"], ["notes.json"]),
    ]

    @Test(arguments: cases.indices)
    func completes(_ index: Int) throws {
        let (words, expected) = Self.cases[index]
        let scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path + "/alpha", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: scratch.path + "/notes.json", contents: Data("{}".utf8))
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let result = try Self.bash("comp \(quoted)", in: scratch.path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(words)")
        let got = result.stdout.split(separator: "\n").map(String.init)
        #expect(got == expected, "\(words)")
    }
}
