import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The editors' schema files and VS Code's settings (<doc:CollectionFormat>
/// ("Editing records")): written where they belong, refreshed only when the
/// config changed, never through a link a clone planted, and the user's
/// settings kept.
@Suite struct EditorSchemaFilesTests {
    static func collection(_ scratch: ScratchDirectory, subcollections: Subcollections = .none) throws -> CollectionDirectory {
        let root = scratch.path + "/books"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        return try CollectionDirectory.initialize(at: root, config: CollectionConfig(
            remote: FirestoreTarget(project: "p", collectionPath: "books"), subcollections: subcollections))
    }

    @Test func initWritesEveryFileAndASecondRunWritesNothing() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch, subcollections: Subcollections(entries: [.init(path: "reviews"), .init(path: "reviews/likes")]))
        let files = collection.editorSchemaFiles
        #expect(files.map(\.relativePath) == [".booksync/record.schema.json", ".booksync/subcollections/reviews/.record.schema.json",
                                             ".booksync/subcollections/reviews/likes/.record.schema.json"])
        #expect(files.map(\.hint) == ["./.booksync/record.schema.json", "../../.booksync/subcollections/reviews/.record.schema.json",
                                     "../../../../.booksync/subcollections/reviews/likes/.record.schema.json"])
        #expect(files.map(\.recordGlob) == ["*.json", "*/reviews/*.json", "*/reviews/*/likes/*.json"])
        for file in files { #expect(try FileSystem.readFile(file.path) == file.bytes) }
        #expect(try collection.writeEditorSchemas().map(\.written) == [false, false, false])
        #expect(collection.staleEditorSchemas().isEmpty)
    }

    @Test func aConfigEditMakesThemStaleUntilRewritten() throws {
        let scratch = try ScratchDirectory()
        var collection = try Self.collection(scratch)
        var config = collection.config
        config.schema = RecordSchema(requiredFields: [FieldRequirement(name: "title", type: .string)], optionalFields: [FieldRequirement(name: "year", type: .integer)])
        try FileSystem.writeAtomically(config.encoded(), to: collection.paths.config)
        collection = try CollectionDirectory.open(searchingFrom: collection.paths.root)
        #expect(collection.staleEditorSchemas().map(\.relativePath) == [".booksync/record.schema.json"])
        #expect(try collection.writeEditorSchemas().map(\.written) == [true])
        #expect(collection.staleEditorSchemas().isEmpty)
    }

    /// A clone may commit a link where a schema file or its folder goes:
    /// writing refuses it, and nothing outside changes.
    @Test(arguments: [".booksync/record.schema.json", ".booksync/subcollections", ".booksync/subcollections/reviews"])
    func aPlantedLinkIsNeverWrittenThrough(_ relative: String) throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch, subcollections: Subcollections(entries: [.init(path: "reviews")]))
        let outside = scratch.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try scratch.write("outside/.record.schema.json", "mine\n")
        try scratch.write("outside/record.schema.json", "mine\n")
        let target = relative.hasSuffix(".json") ? outside + "/record.schema.json" : outside
        let path = collection.paths.root + "/" + relative
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        // A changed config, so every file must be written.
        var config = collection.config
        config.schema = RecordSchema(requiredFields: [], optionalFields: [FieldRequirement(name: "x", type: .string)])
        config.subcollections = Subcollections(entries: [.init(path: "reviews", schema: config.schema)])
        try FileSystem.writeAtomically(config.encoded(), to: collection.paths.config)
        let reopened = try CollectionDirectory.open(searchingFrom: collection.paths.root)
        #expect(throws: BooksyncError.self) { try reopened.writeEditorSchemas() }
        #expect(try scratch.read("outside/record.schema.json") == "mine\n")
        #expect(try scratch.read("outside/.record.schema.json") == "mine\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).sorted() == [".record.schema.json", "record.schema.json"])
    }

    @Test func vscodeSettingsAreMergedNotClobbered() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch)
        try FileManager.default.createDirectory(atPath: scratch.path + "/.git", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scratch.path + "/.vscode", withIntermediateDirectories: true)
        try scratch.write(".vscode/settings.json", #"{"editor.tabSize": 4, "json.schemas": [{"fileMatch": ["/other/*.json"], "url": "./o.json"}]}"#)
        #expect(try VSCodeSettings.map(collection) == .written(path: scratch.path + "/.vscode/settings.json", created: false))
        let settings = try JSONParser.parseObject(Array(try scratch.read(".vscode/settings.json").utf8))
        #expect(settings["editor.tabSize"] == .integer(4))
        #expect(settings["json.schemas"] == .array([
            .map(["fileMatch": .array([.string("/other/*.json")]), "url": .string("./o.json")]),
            .map(["fileMatch": .array([.string("/books/*.json")]), "url": .string("./books/.booksync/record.schema.json")]),
        ]))
        #expect(try VSCodeSettings.map(collection) == .unchanged(path: scratch.path + "/.vscode/settings.json"))
    }

    @Test func settingsWithCommentsAreLeftForTheUser() throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch)
        try FileManager.default.createDirectory(atPath: collection.paths.root + "/.vscode", withIntermediateDirectories: true)
        let text = "{\n  // mine\n  \"editor.tabSize\": 4\n}\n"
        try scratch.write("books/.vscode/settings.json", text)
        guard case .needsHand(_, _, let snippet) = try VSCodeSettings.map(collection) else {
            Issue.record("a settings file with comments was rewritten")
            return
        }
        #expect(snippet.contains("\"url\": \"./.booksync/record.schema.json\""))
        #expect(try scratch.read("books/.vscode/settings.json") == text)
    }

    @Test(arguments: [".vscode", ".vscode/settings.json"])
    func aLinkedSettingsFileOrFolderIsRefused(_ relative: String) throws {
        let scratch = try ScratchDirectory()
        let collection = try Self.collection(scratch)
        let outside = scratch.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try scratch.write("outside/settings.json", "{}")
        if relative == ".vscode/settings.json" {
            try FileManager.default.createDirectory(atPath: collection.paths.root + "/.vscode", withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(atPath: collection.paths.root + "/" + relative,
                                                   withDestinationPath: relative == ".vscode" ? outside : outside + "/settings.json")
        #expect(throws: BooksyncError.self) { try VSCodeSettings.map(collection) }
        #expect(try scratch.read("outside/settings.json") == "{}")
    }
}
