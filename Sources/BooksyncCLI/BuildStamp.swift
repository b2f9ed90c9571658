/// The commit a build was made from, for `--version`.
///
/// `git archive` writes it into this file: `.gitattributes` marks the file
/// `export-subst`, so the placeholder below becomes the commit's hash in an
/// exported tree, which is what `scripts/release` builds. A build from a work
/// tree keeps the placeholder and calls itself a development build.
enum BuildStamp {
    private static let exported = "$Format:%H$"

    /// The full hash of the commit (SHA-1, or SHA-256 in a repository that
    /// uses it), or nil in a development build.
    static var commit: String? {
        let hexDigits = exported.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        return [40, 64].contains(exported.utf8.count) && hexDigits ? exported : nil
    }

    /// `booksync 0.1.0 (commit 1a2b3c4d5e6f)` or `booksync 0.1.0 (development build)`.
    static func versionLine(version: String) -> String {
        "booksync \(version) (" + (commit.map { "commit " + $0.prefix(12) } ?? "development build") + ")"
    }
}
