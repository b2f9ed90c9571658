import Foundation
import Testing
@testable import BooksyncCore

/// A word in a suggested command reaches booksync unchanged through a POSIX shell.
@Suite struct ShellWordTests {
    @Test(arguments: [
        ("books", "books"),
        ("-books", "-books"),
        ("dir/a_b.json", "dir/a_b.json"),
        ("%3D:+,=", "%3D:+,="),
        ("../my books", "'../my books'"),
        ("it's", "'it'\\''s'"),
        ("", "''"),
        ("$HOME", "'$HOME'"),
        ("*.json", "'*.json'"),
    ])
    func quotedAsExpected(word: String, quoted: String) {
        #expect(ShellWord.quote(word) == quoted)
    }

    /// The independent check: `/bin/sh` reads every quoted word back as the word.
    @Test func theShellReadsEachWordBack() throws {
        let words = ["books", "-n", "../my books", "it's", "''", "a\\b", "$(touch x)", "`id`", "tab\there", "new\nline", "*", "~", "é ü", "!x", ""]
        let script = words.map { "printf '%s\\0' " + ShellWord.quote($0) }.joined(separator: "\n")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        let output = Pipe()
        shell.standardOutput = output
        try shell.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0)
        let read = data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
        #expect(read == words)
    }
}
