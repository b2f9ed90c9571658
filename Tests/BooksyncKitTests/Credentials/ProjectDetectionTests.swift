import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// `init` without a project: `$GOOGLE_CLOUD_PROJECT`, then `$GCLOUD_PROJECT`,
/// then the nearest `.firebaserc` (<doc:Commands>).
@Suite struct ProjectDetectionTests {
    /// A tree `top/.firebaserc` (when given) and `top/app/books`, searched from `books`.
    final class Tree {
        let scratch: ScratchDirectory
        let top: String
        let start: String

        init(firebaserc: String?) throws {
            scratch = try ScratchDirectory()
            top = scratch.path + "/top"
            start = top + "/app/books"
            try FileManager.default.createDirectory(atPath: start, withIntermediateDirectories: true)
            if let firebaserc { try scratch.write("top/.firebaserc", firebaserc) }
        }
    }

    static let rc = #"{"projects": {"default": "from-rc", "prod": "other"}}"#

    /// (environment, .firebaserc, expected project and source; "rc" = the file)
    static let order: [([String: String], String?, String?, String?)] = [
        (["GOOGLE_CLOUD_PROJECT": "gcp", "GCLOUD_PROJECT": "gcloud"], rc, "gcp", "$GOOGLE_CLOUD_PROJECT"),
        (["GCLOUD_PROJECT": "gcloud"], rc, "gcloud", "$GCLOUD_PROJECT"),
        (["GOOGLE_CLOUD_PROJECT": "", "GCLOUD_PROJECT": "gcloud"], rc, "gcloud", "$GCLOUD_PROJECT"),
        (["GOOGLE_CLOUD_PROJECT": "", "GCLOUD_PROJECT": ""], rc, "from-rc", "rc"),
        ([:], rc, "from-rc", "rc"),
        ([:], #"{"projects": {}}"#, nil, nil),  // an error, below
        ([:], nil, nil, nil),
    ]

    @Test(arguments: order)
    func detectionOrder(environment: [String: String], firebaserc: String?, project: String?, source: String?) throws {
        let tree = try Tree(firebaserc: firebaserc)
        let found = try? ProjectDetection.detect(environment: environment, searchingFrom: tree.start)
        #expect(found?.project == project)
        #expect(found.map(\.sourceDescription) == source.map { $0 == "rc" ? tree.top + "/.firebaserc" : $0 })
    }

    @Test func theNearestFirebasercWins() throws {
        let tree = try Tree(firebaserc: Self.rc)
        try tree.scratch.write("top/app/.firebaserc", #"{"projects": {"default": "nearer"}}"#)
        let found = try ProjectDetection.detect(environment: [:], searchingFrom: tree.start)
        #expect(found == .init(project: "nearer", source: .firebaserc(path: tree.top + "/app/.firebaserc")))
    }

    @Test func nothingFoundIsNil() throws {
        let tree = try Tree(firebaserc: nil)
        #expect(try ProjectDetection.detect(environment: [:], searchingFrom: tree.start) == nil)
    }

    /// (.firebaserc text, the error after its path)
    static let broken: [(String, String)] = [
        (#"{"projects": "#, ":1:14: not a valid .firebaserc: unexpected end of file; expected a value"),
        ("// comment\n{}", ":1:1: not a valid .firebaserc: comments are not allowed in JSON"),
        (#"{"projects": ["a"]}"#, ": \"projects\" must be an object of aliases, such as {\"default\": \"my-project\"}"),
        (#"{"projects": {"default": 7}}"#, ": \"projects\".\"default\" must be a project id string"),
        (#"{"projects": {"default": "../../x"}}"#, ": \"projects\".\"default\": project id '../../x' contains '/'"),
        (#"{"projects": {"default": "a b"}}"#, ": \"projects\".\"default\": the project id contains whitespace or a control character"),
        (#"{"projects": {"prod": "p"}}"#,
         " names no default project (\"projects\": {\"default\": \"…\"}); run 'firebase use --add', or pass --firestore PROJECT"),
    ]

    @Test(arguments: broken)
    func brokenFirebasercIsAnErrorNamingIt(text: String, message: String) throws {
        let tree = try Tree(firebaserc: text)
        #expect(throws: BooksyncError.invalidArgument(tree.top + "/.firebaserc" + message)) {
            try ProjectDetection.detect(environment: [:], searchingFrom: tree.start)
        }
    }

    static let badVariables: [([String: String], String)] = [
        (["GOOGLE_CLOUD_PROJECT": "a/b"], "$GOOGLE_CLOUD_PROJECT: project id 'a/b' contains '/'"),
        (["GCLOUD_PROJECT": "x\ny"], "$GCLOUD_PROJECT: the project id contains whitespace or a control character"),
    ]

    @Test(arguments: badVariables)
    func badVariableIsAnErrorNamingIt(environment: [String: String], message: String) throws {
        let tree = try Tree(firebaserc: Self.rc)
        #expect(throws: BooksyncError.invalidArgument(message)) {
            try ProjectDetection.detect(environment: environment, searchingFrom: tree.start)
        }
    }

    /// A `.firebaserc` that is a link or a FIFO is refused by name, never
    /// followed or waited on (the safe `FileSystem.readFile`).
    @Test func linkAndFIFOAreRefused() throws {
        let tree = try Tree(firebaserc: nil)
        try tree.scratch.write("elsewhere.json", Self.rc)
        let path = tree.top + "/.firebaserc"
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: tree.scratch.path + "/elsewhere.json")
        #expect(throws: BooksyncError.invalidArgument(path + " is a symbolic link; booksync reads a .firebaserc only as a plain file "
            + "(it never follows links): pass --firestore PROJECT or set GOOGLE_CLOUD_PROJECT instead")) {
            try ProjectDetection.detect(environment: [:], searchingFrom: tree.start)
        }
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o644) == 0)
        #expect(throws: BooksyncError.invalidArgument(path + " is a FIFO (named pipe); booksync reads a .firebaserc only as a plain file "
            + "(it never follows links): pass --firestore PROJECT or set GOOGLE_CLOUD_PROJECT instead")) {
            try ProjectDetection.detect(environment: [:], searchingFrom: tree.start)
        }
    }
}
