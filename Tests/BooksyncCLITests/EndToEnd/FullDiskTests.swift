import Foundation
import Testing
import BooksyncTestSupport

/// A full disk, for real: a 512 KiB tmpfs mounted in a mount namespace of its
/// own (`unshare -m`, so it vanishes with the command), filled to the last
/// block. `fmt` of files that parse leaves them untouched and names the
/// real cause; it said "5 could not be parsed". Linux only: mount
/// namespaces and `unshare` are Linux's.
#if os(Linux)
@Suite struct FullDiskTests {
    @Test func fmtOnAFullDiskNamesTheCauseAndLeavesTheFiles() throws {
        let scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path + "/books", withIntermediateDirectories: true)
        let script = """
            set -e
            mount -t tmpfs -o size=512k tmpfs books
            cd books
            "$BOOKSYNC" -q init --firestore p --collection books
            for i in 1 2 3 4 5; do printf '{"id":"b%s","title":"T","author":"A","genre":"g"}' "$i" > "b$i.json"; done
            dd if=/dev/zero of=.fill bs=1k 2>/dev/null || true
            set +e
            "$BOOKSYNC" fmt
            echo "exit=$?"
            cat b1.json
            """
        let result = try runProgram("/usr/bin/unshare", ["-m", "/bin/sh", "-c", script], in: scratch.path,
                                    environment: ProcessInfo.processInfo.environment.merging(["BOOKSYNC": BinaryTests.executable]) { $1 })
        #expect(result.stdout.hasPrefix("exit=1\n"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.hasSuffix(#"{"id":"b1","title":"T","author":"A","genre":"g"}"#), "the file is left as it was: \(result.stdout)")
        #expect(result.stderr.contains("b1.json: cannot write: No space left on device"), "\(result.stderr)")
        #expect(result.stderr.contains("5 files checked, 0 formatted, 0 could not be parsed, 5 could not be read or written (cannot write: No space left on device)"),
                "\(result.stderr)")
    }
}
#endif
