import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit
#if canImport(Glibc)
import Glibc
#endif

/// FileSystem.writeAtomically: the new bytes or the old, no temporary file left, the mode kept.
@Suite struct FileSystemTests {
    @Test func atomicWriteReplacesAndLeavesNoTemporaryFile() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/a.json"
        try FileSystem.writeAtomically(Array("old".utf8), to: path)
        try FileSystem.writeAtomically(Array("new content".utf8), to: path, durable: true)
        #expect(try FileSystem.readFile(path) == Array("new content".utf8))
        #expect(try FileSystem.listDirectory(scratch.path) == ["a.json"])
    }

    @Test func writeIntoMissingDirectoryFailsWithPath() {
        #expect(throws: FileSystemError.self) { try FileSystem.writeAtomically([1], to: "/nonexistent-dir/x.json") }
        do { try FileSystem.writeAtomically([1], to: "/nonexistent-dir/x.json") } catch {
            #expect(error.description == "/nonexistent-dir/x.json: cannot create a temporary file: No such file or directory")
        }
    }
}

@Suite struct FileModeTests {
    @Test func atomicReplacementKeepsTheFileMode() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/private.json"
        try FileSystem.writeAtomically(Array("a".utf8), to: path)
        chmod(path, 0o600)
        try FileSystem.writeAtomically(Array("b".utf8), to: path)
        #expect(try FileSystem.stat(path).mode == 0o600)
    }
}
