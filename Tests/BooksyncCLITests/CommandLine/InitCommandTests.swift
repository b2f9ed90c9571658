import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCLI
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// `init --require`, `--id-field` and project detection, run in-process.
@Suite struct InitCommandTests {
    /// No project variables, whatever the test runner's environment has.
    static let clean = ["GOOGLE_CLOUD_PROJECT": "", "GCLOUD_PROJECT": ""]

    func initialize(_ arguments: [String], environment: [String: String] = clean, in directory: String) async -> RunResult {
        await runBooksync(["init"] + arguments, in: directory, environment: environment)
    }

    func config(_ directory: String) throws -> CollectionConfig {
        try CollectionConfig.decode(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/.booksync/config.json"))))
    }

    /// (arguments, the error line) — every one a usage error (exit 2) that creates nothing.
    static let usageErrors: [([String], String)] = [
        (["--collection", "users", "--require", "name:str"],
         "booksync init: --require: unknown type 'str' in 'name:str' (types: string, integer, double, number, boolean, timestamp, bytes, reference, geopoint, map, array, any)"),
        (["--collection", "users", "--require", "name"],
         "booksync init: --require: 'name' needs a type: FIELD:TYPE such as title:string (types: string, integer, double, number, boolean, timestamp, bytes, reference, geopoint, map, array, any), or none alone"),
        (["--collection", "users", "--require", "a:string", "--require=a:integer"], "booksync init: --require: the field 'a' is given twice"),
        (["--collection", "users", "--require", "id:string"],
         "booksync init: --require: 'id' is always required (a string equal to the file name); leave it out of --require"),
        (["--collection", "users", "--require", "none", "--require", "a:map"],
         "booksync init: --require: none requires nothing but id, so it cannot be combined with FIELD:TYPE"),
        (["--collection", "users", "--id-field", ""], "booksync init: --id-field: the id field name is empty; give a field name such as docId, or none"),
        (["--collection", "users", "--id-field", "docId", "--require", "docId:string"],
         "booksync init: 'docId' cannot be both the id field and a required field: documents keep the record id in 'docId', and record files keep it in 'id'"),
        (["--collection", "users"],
         "booksync init: no Firestore project: pass --firestore PROJECT, set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT), or run init inside a Firebase project directory (a .firebaserc with a default project)"),
        (["--collection", "users", "--firestore", "a b"], "booksync init: --firestore: the project id contains whitespace or a control character"),
        (["--collection", "users", "--firestore", "../x"], "booksync init: --firestore: '..' is not a project id"),
        (["--collection", "users", "--firestore", "p/"], "booksync init: --firestore takes PROJECT, PROJECT/DATABASE or /DATABASE, not 'p/'"),
        (["--collection", "users", "--firestore", "p/a b"], "booksync init: --firestore: the database id contains whitespace or a control character"),
    ]

    @Test(arguments: usageErrors)
    func usageError(arguments: [String], message: String) async throws {
        let scratch = try ScratchDirectory()
        let result = await initialize(arguments, in: scratch.path)
        #expect(result.exitCode == 2)
        #expect(result.stderr.split(separator: "\n").first.map(String.init) == message)
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/.booksync"))
    }

    @Test func requireAndIDFieldAreWrittenToTheConfig() async throws {
        let scratch = try ScratchDirectory()
        let result = await initialize(["--firestore", "p", "--collection", "users", "--require", "name:string", "--require", "age:integer", "--id-field", "none"], in: scratch.path)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let config = try config(scratch.path)
        #expect(config.schema == RecordSchema(requiredFields: [FieldRequirement(name: "name", type: .string), FieldRequirement(name: "age", type: .integer)]))
        #expect(config.idField == .none)
        #expect(result.stdout.contains("  required: id, name (string), age (integer)\n"))
        #expect(result.stdout.contains("  id field: none (documents keep the record id only in their name)\n"))
        #expect(!result.stdout.contains("project: from"), "no detection message when --firestore names the project")
    }

    /// (arguments, environment, .firebaserc in the parent, expected project/database, the source line)
    static let detection: [([String], [String: String], String?, String, String)] = [
        ([], ["GOOGLE_CLOUD_PROJECT": "gcp", "GCLOUD_PROJECT": "gcloud"], nil, "gcp/(default)", "  project: from $GOOGLE_CLOUD_PROJECT"),
        ([], ["GOOGLE_CLOUD_PROJECT": "", "GCLOUD_PROJECT": "gcloud"], #"{"projects": {"default": "rc"}}"#, "gcloud/(default)", "  project: from $GCLOUD_PROJECT"),
        ([], clean, #"{"projects": {"default": "rc"}}"#, "rc/(default)", "  project: from the default project in ../.firebaserc"),
        (["--firestore", "/db2"], clean, #"{"projects": {"default": "rc"}}"#, "rc/db2", "  project: from the default project in ../.firebaserc"),
        (["--firestore", "/db2"], ["GOOGLE_CLOUD_PROJECT": "gcp"], nil, "gcp/db2", "  project: from $GOOGLE_CLOUD_PROJECT"),
    ]

    @Test(arguments: detection)
    func projectDetection(arguments: [String], environment: [String: String], firebaserc: String?, expected: String, line: String) async throws {
        let scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path + "/users", withIntermediateDirectories: true)
        if let firebaserc { try scratch.write(".firebaserc", firebaserc) }
        let result = await initialize(arguments + ["--collection", "users"], environment: environment, in: scratch.path + "/users")
        #expect(result.exitCode == 0, "\(result.stderr)")
        let remote = try config(scratch.path + "/users").remote
        #expect("\(remote.project)/\(remote.database)" == expected)
        #expect(result.stdout.contains(line + "\n"), "\(result.stdout)")
    }

    @Test func aMalformedFirebasercIsNamed() async throws {
        let scratch = try ScratchDirectory()
        try scratch.write(".firebaserc", "{\"projects\": {\"default\": }}")
        let result = await initialize(["--collection", "users"], in: scratch.path)
        #expect(result.exitCode == 2)
        #expect(result.stderr == ("booksync: error: \(scratch.path)/.firebaserc:1:26: not a valid .firebaserc: expected a value before '}'\n"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/.booksync"))
    }

    @Test func settingsOfAnExistingCollectionAreNotChangedByInitGit() async throws {
        let scratch = try ScratchDirectory()
        #expect(await initialize(["-q", "--firestore", "p", "--collection", "books"], in: scratch.path).exitCode == 0)
        let result = await initialize(["--git", "--require", "none"], in: scratch.path)
        #expect(result.exitCode == 2)
        #expect(result.stderr.hasPrefix("booksync init: --require, --optional, --strict, --id-field, --change-field, --where and --subcollection only apply when a collection is created; edit .booksync/config.json to change them"))
    }

    /// `init DIR` as `git init DIR` and `clone … DIR`: the folder is created
    /// with its parents, or an existing one (with files, which init never
    /// touches) is used.
    @Test(arguments: ["new/books", "./fresh", "existing"])
    func initTakesAFolder(folder: String) async throws {
        let scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path + "/existing", withIntermediateDirectories: true)
        try scratch.write("existing/dune.json", "{\"id\": \"dune\"}\n")
        let result = await initialize(["--firestore", "p", "--collection", "books", folder], in: scratch.path)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let root = (scratch.path + "/" + folder).replacingOccurrences(of: "/./", with: "/")
        #expect(result.stdout.hasPrefix("Initialized booksync collection in \(root)\n"), "\(result.stdout)")
        #expect(try config(root).remote.collectionPath == "books")
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/.booksync"), "the current folder is left alone")
        if folder == "existing" { #expect(try scratch.read("existing/dune.json") == "{\"id\": \"dune\"}\n") }
    }

    /// (the folder, what is there first, the error): nothing is created when init refuses.
    static let refusedFolders: [(String, String, String)] = [
        ("a.json", "file", "a.json exists and is not a folder"),
        ("outer/inner", "collection", "outer/inner is inside the collection outer; init next to it, not into it"),
        ("late", "none", "--require: unknown type 'str'"),
    ]

    @Test(arguments: refusedFolders)
    func initRefusesAFolderItCannotUse(folder: String, first: String, error: String) async throws {
        let scratch = try ScratchDirectory()
        if first == "file" { try scratch.write(folder, "{}") }
        if first == "collection" {
            try FileManager.default.createDirectory(atPath: scratch.path + "/outer", withIntermediateDirectories: true)
            #expect(await initialize(["-q", "--firestore", "p", "--collection", "books"], in: scratch.path + "/outer").exitCode == 0)
        }
        let extra = first == "none" ? ["--require", "a:str"] : []
        let result = await initialize(["--firestore", "p", "--collection", "books"] + extra + [folder], in: scratch.path)
        #expect(result.exitCode == 2, "\(result.stderr)")
        #expect(result.stderr.contains(error), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/" + folder + "/.booksync"))
        if first == "none" { #expect(!FileManager.default.fileExists(atPath: scratch.path + "/" + folder), "a usage error creates nothing") }
        let two = await initialize(["--firestore", "p", "--collection", "books", "a", "b"], in: scratch.path)
        #expect(two.exitCode == 2 && two.stderr.contains("init takes at most one DIR"), "\(two.stderr)")
    }

    /// (command line, the values of --require; nil for a usage error): the
    /// parser keeps every value of a repeated option, and an option's value is
    /// never taken for another option.
    static let repeated: [([String], [String]?)] = [
        (["init", "--require", "a:string", "--require=b:map", "--collection", "x"], ["a:string", "b:map"]),
        (["-C", "--require", "init", "--require", "a:string"], ["a:string"]),  // -C takes "--require" as its value
        (["init", "--collection", "--require", "--require", "none"], ["none"]),
        (["init", "--require", "a:string", "--", "--require", "b:string"], ["a:string"]),
        (["init", "--git", "-q", "--require"], nil),
    ]

    @Test(arguments: repeated)
    func repeatedOption(arguments: [String], values: [String]?) throws {
        // As `BooksyncCommand.run` reads a command line: find the command, parse the rest.
        let index = try #require(BooksyncCommand.locateCommand(arguments).commandIndex)
        var rest = arguments
        #expect(rest.remove(at: index) == InitCommand.name)
        let parsed = try? ArgumentParser.parse(rest, options: BooksyncCommand.globalOptions + InitCommand.options, command: InitCommand.name)
        #expect(parsed?.values(.require) == values, "\(arguments)")
    }
}
