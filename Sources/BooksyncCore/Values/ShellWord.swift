/// Quoting for the commands booksync suggests (`run 'booksync -C … init --git'`,
/// a refused push's `--force` line), so that a path or pathspec pasted into
/// a POSIX shell reaches booksync as the one word it was.
package enum ShellWord {
    /// `word` as a POSIX shell (and bash, zsh, fish) reads it back
    /// unchanged: as it is when it holds only letters, digits and
    /// `- _ . / % : + ,`, which no shell expands anywhere in a word, else in
    /// single quotes (a quote inside written `'\''`). Not `=`: zsh expands a
    /// word that starts with it to a command's path.
    package static func quote(_ word: String) -> String {
        let plain = !word.isEmpty && word.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: "%"), UInt8(ascii: ":"),
                 UInt8(ascii: "+"), UInt8(ascii: ","): true
            default: false
            }
        }
        guard !plain else { return word }
        var quoted = "'"
        for character in word { quoted += character == "'" ? "'\\''" : String(character) }
        return quoted + "'"
    }
}
