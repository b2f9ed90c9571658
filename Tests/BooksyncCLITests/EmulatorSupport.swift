import Foundation
import Testing
import BooksyncTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// The Firestore emulator of the end-to-end tests: the one scripts/test
/// started (FIRESTORE_EMULATOR_HOST), or one started for this test run from
/// the installed emulator; without any, the test is skipped (scripts/test and
/// CI make that a failure). See `TestEmulator`.
enum Emulator {
    static var host: String? { try? TestEmulator.host() }

    static func requireHost() throws -> String {
        try TestEmulator.host()
    }

    /// A project id no other test uses, so tests are independent.
    static func uniqueProject(_ name: String) -> String {
        "t-" + name.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(16) + "-" + UUID().uuidString.prefix(8).lowercased()
    }
}

/// A direct REST writer and reader: "someone else" changing the remote, and the
/// ground truth for assertions. Uses the same codec as booksync on purpose only
/// for values; requests are built by hand.
struct RESTClient {
    let host: String
    let project: String
    let collection: String

    var root: String { "projects/\(project)/databases/(default)/documents" }
    var base: String { "http://\(host)/v1/\(root)" }

    func request(_ method: String, _ url: String, body: String? = nil) async throws -> (Int, Value) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        // Bulk writes of the tests' own setup meet the emulator at its busiest
        // (every suite starting at once): URLSession's 60 s once ran out
        // (NSURLErrorDomain -1001). Still bounded.
        request.timeoutInterval = 300
        request.setValue("Bearer owner", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as! HTTPURLResponse).statusCode
        let value = data.isEmpty ? Value.null : try JSONParser.parse(Array(data), decodeTags: false)
        return (status, value)
    }

    /// Creates or replaces documents (no precondition), 500 per commit.
    /// `stamping`: a field set to the server's time as an app does with
    /// `FieldValue.serverTimestamp()` (the change-field convention).
    func put(_ documents: [(id: String, fields: Fields)], stamping: String? = nil) async throws {
        for start in stride(from: 0, to: documents.count, by: 500) {
            let writes = documents[start..<min(start + 500, documents.count)].map { document in
                var write: [String: Value] = ["update": .map([
                    "name": .string("\(root)/\(collection)/\(document.id)"),
                    "fields": FirestoreValueCodec.encodeFields(document.fields, documentsRoot: root),
                ])]
                if let stamping {
                    write["updateTransforms"] = .array([.map(["fieldPath": .string(FieldPathSyntax.quoted(stamping)), "setToServerValue": .string("REQUEST_TIME")])])
                }
                return Value.map(write)
            }
            let (status, answer) = try await request("POST", base + ":commit", body: CanonicalJSON.encodeInline(.map(["writes": .array(writes)])))
            #expect(status == 200, "commit failed: \(CanonicalJSON.encodeInline(answer))")
        }
    }

    func delete(_ id: String) async throws {
        let (status, _) = try await request("POST", base + ":commit", body: CanonicalJSON.encodeInline(.map(["writes": .array([.map(["delete": .string("\(root)/\(collection)/\(id)")])])])))
        #expect(status == 200)
    }

    /// Every document: id → (updateTime, fields). Swift dictionaries key strings
    /// by canonical equivalence; `documents()` keeps ids that differ only by
    /// Unicode normalization apart.
    func all() async throws -> [String: (revision: String, fields: Fields)] {
        var result: [String: (revision: String, fields: Fields)] = [:]
        for document in try await documents() { result[document.id] = (document.revision, document.fields) }
        return result
    }

    func documents() async throws -> [(id: String, revision: String, fields: Fields)] {
        var result: [(id: String, revision: String, fields: Fields)] = []
        var token: String?
        repeat {
            var url = base + "/\(collection)?pageSize=300"
            if let token { url += "&pageToken=" + token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
            let (status, page) = try await request("GET", url)
            #expect(status == 200)
            guard case .map(let p) = page else { break }
            if case .array(let docs)? = p["documents"] {
                for case .map(let d) in docs {
                    guard case .string(let name)? = d["name"], case .string(let time)? = d["updateTime"] else { continue }
                    let id = String(name.split(separator: "/").last!)
                    result.append((id, time, try FirestoreValueCodec.decodeFields(d["fields"], documentsRoot: root)))
                }
            }
            if case .string(let next)? = p["nextPageToken"] { token = next } else { token = nil }
        } while token != nil
        return result
    }
}

/// A collection directory for an end-to-end test, with booksync run as a process.
final class Workspace {
    let scratch: ScratchDirectory
    let root: String
    let project: String
    let host: String
    let collection: String

    init(project: String, host: String, collection: String = "books", name: String = "books", scratch: ScratchDirectory? = nil) throws {
        self.scratch = try scratch ?? ScratchDirectory()
        self.root = self.scratch.path + "/" + name
        self.project = project
        self.host = host
        self.collection = collection
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    /// The emulator, no colour, and the watcher's sockets in the scratch
    /// directory (a watch killed by a test leaves its socket there, not in /tmp).
    var environment: [String: String] {
        ["FIRESTORE_EMULATOR_HOST": host, "NO_COLOR": "1", "BOOKSYNC_WATCH_DIR": scratch.path + "/watchers"]
    }

    @discardableResult
    func run(_ arguments: String...) throws -> BinaryTests.Output {
        try run(arguments)
    }

    @discardableResult
    func run(_ arguments: [String]) throws -> BinaryTests.Output {
        try BinaryTests.run(arguments, in: root, environment: environment)
    }

    func initialize(_ options: String...) throws {
        let result = try BinaryTests.run(["init", "--firestore", project, "--collection", collection] + options, in: root, environment: environment)
        #expect(result.status == 0, "init: \(result.stderr)")
    }

    func write(_ fileName: String, _ text: String) throws {
        try text.write(toFile: root + "/" + fileName, atomically: true, encoding: .utf8)
    }

    func read(_ fileName: String) -> String? {
        try? String(contentsOfFile: root + "/" + fileName, encoding: .utf8)
    }

    func remove(_ fileName: String) throws {
        try FileManager.default.removeItem(atPath: root + "/" + fileName)
    }

    /// Every file under the directory (including .booksync), by relative path.
    func snapshot() throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)!
        for case let relative as String in enumerator {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative))
            }
        }
        return files
    }

    /// Record files only (*.json directly in the directory).
    func recordFiles() throws -> [String: Data] {
        try snapshot().filter { !$0.key.contains("/") && $0.key.hasSuffix(".json") }
    }

    var rest: RESTClient { RESTClient(host: host, project: project, collection: collection) }
}

/// A record file in canonical form with the Book schema's fields.
func bookFile(_ id: String, title: String = "Title", author: String = "Author", genre: String = "fiction", extra: Fields = [:]) -> String {
    var fields: Fields = ["id": .string(id), "title": .string(title), "author": .string(author), "genre": .string(genre)]
    fields.merge(extra) { _, new in new }
    return String(decoding: CanonicalJSON.encode(fields, leadingKeys: RecordSchema.books.leadingKeys), as: UTF8.self)
}

func bookFields(_ id: String, title: String = "Title", extra: Fields = [:]) -> Fields {
    var fields: Fields = ["id": .string(id), "title": .string(title), "author": .string("Author"), "genre": .string("fiction")]
    fields.merge(extra) { _, new in new }
    return fields
}
