import Foundation
import Testing
@testable import BooksyncCore

/// A word in a suggested command reaches booksync unchanged through a POSIX shell.
@Suite struct ShellWordTests {
    @Test(arguments: [
        ("books", "books"),
        ("-books", "-books"),
        ("dir/a_b.json", "dir/a_b.json"),
        ("%C3%BC:+,", "%C3%BC:+,"),
        ("=books", "'=books'"),
        ("../my books", "'../my books'"),
        ("it's", "'it'\\''s'"),
        ("", "''"),
        ("$HOME", "'$HOME'"),
        ("*.json", "'*.json'"),
    ])
    func quotedAsExpected(word: String, quoted: String) {
        #expect(ShellWord.quote(word) == quoted)
    }

    /// The independent check: `/bin/sh` reads every quoted word back as the
    /// word: each printable ASCII character alone, first, last and doubled,
    /// and words with quotes, controls and non-ASCII letters. It runs in a
    /// folder of its own holding a file, so an unquoted glob would expand and
    /// an unquoted redirection or command would be seen, not harm the package.
    @Test func theShellReadsEachWordBack() throws {
        let printable = (0x20...0x7E).map { String(UnicodeScalar(UInt8($0))) }
        var words = printable.flatMap { [$0, $0 + "x", "x" + $0, $0 + $0] }
        words += ["../my books", "it's", "''", "a\\b", "$(touch made)", "`touch made`", "tab\there", "new\nline", "é ü", "", "~root", "{a,b}"]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shellword-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("x".utf8).write(to: folder.appendingPathComponent("a"))
        let script = words.map { "printf '%s\\0' " + ShellWord.quote($0) }.joined(separator: "\n")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        shell.currentDirectoryURL = folder
        let output = Pipe()
        shell.standardOutput = output
        try shell.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0)
        let read = data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
        #expect(read.count == words.count)
        for (word, got) in zip(words, read) where word != got { Issue.record("\(ShellWord.quote(word)) read back as \(got)") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["a"], "nothing ran")
    }
}
