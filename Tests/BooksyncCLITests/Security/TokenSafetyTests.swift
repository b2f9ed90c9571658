import Foundation
import Synchronization
import Testing
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit
@testable import BooksyncURLSession

/// A hostile or broken HTTP server on 127.0.0.1, in Python: a main listener
/// whose first path segment picks its behaviour, and a trap listener that
/// should never be reached. Every request either receives is logged as a
/// JSON line (listener, method, path, Authorization header).
///
/// - `/redirectNNN/…`: answers NNN with a Location on the trap (307 to
///   127.0.0.1, others to `localhost`, another loopback host);
/// - `/echoNNN/…`: answers NNN with a Firestore error whose message repeats
///   the Authorization header; `/echoNNNtext/…` the same as plain text.
final class HostileServer {
    static let script = #"""
    import http.server, json, sys, threading
    log_path = sys.argv[1]
    lock = threading.Lock()
    def record(listener, handler):
        with lock, open(log_path, "a") as f:
            f.write(json.dumps({"listener": listener, "method": handler.command, "path": handler.path,
                                "authorization": handler.headers.get("Authorization")}) + "\n")
    def answer(handler, status, body, headers={}):
        handler.send_response(status)
        for k, v in headers.items(): handler.send_header(k, v)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args): pass
        def do_GET(self): self.handle_any()
        def do_POST(self): self.handle_any()
        def do_PATCH(self): self.handle_any()
        def do_DELETE(self): self.handle_any()
        def body(self):
            n = int(self.headers.get("Content-Length") or 0)
            if n: self.rfile.read(n)
    class Trap(Quiet):
        def handle_any(self):
            self.body(); record("trap", self)
            answer(self, 200, b"[]", {"Content-Type": "application/json"})
    class Main(Quiet):
        def handle_any(self):
            self.body(); record("main", self)
            mode = self.path.split("/")[1]
            auth = self.headers.get("Authorization", "")
            if mode.startswith("redirect"):
                status = int(mode[len("redirect"):])
                host = "127.0.0.1" if status == 307 else "localhost"
                answer(self, status, b"", {"Location": "http://%s:%d%s" % (host, trap.server_address[1], self.path)})
            elif mode.startswith("echo"):
                status = int(mode[4:7])
                names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED"}
                text = "Request had invalid authentication credentials. Authorization: " + auth
                if mode.endswith("text"):
                    answer(self, status, ("<html>" + "x" * 150 + text + "\nall headers:\n" + str(self.headers) + "</html>").encode())
                else:
                    body = json.dumps({"error": {"code": status, "message": text, "status": names[status]}}).encode()
                    answer(self, status, body, {"Content-Type": "application/json"})
            else:
                answer(self, 404, b"unknown mode")
    trap = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trap)
    main = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Main)
    for server in (trap, main): threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"main": main.server_address[1], "trap": trap.server_address[1]}), flush=True)
    sys.stdin.read()
    """#

    /// Declared first so that it stops before its scratch directory goes.
    let server: LoopbackScript
    let scratch: ScratchDirectory
    let mainPort: Int
    let trapPort: Int

    init() throws {
        scratch = try ScratchDirectory()
        try scratch.write("server.py", Self.script)
        server = try LoopbackScript(python: [scratch.path + "/server.py", scratch.path + "/requests.jsonl"])
        mainPort = try #require(server.ports["main"], "the test server did not start")
        trapPort = try #require(server.ports["trap"])
    }

    func url(_ mode: String) -> String { "http://127.0.0.1:\(mainPort)/\(mode)/v1/" }

    /// Every request logged so far.
    func requests() -> [[String: String]] {
        guard let text = try? scratch.read("requests.jsonl") else { return [] }
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }.map { $0.compactMapValues { $0 as? String } }
    }
}

/// End to end, the built booksync against `HostileServer`: the token goes
/// nowhere but the server it was meant for, and never into output; token
/// commands come only from the user and cannot hang booksync (issue 10).
@Suite struct TokenSafetyTests {
    static let secret = "ya29.s3cr3t-\(UUID().uuidString)"

    /// A fresh collection (init needs no server) and a user config directory
    /// of its own, so the real ~/.config never plays a part.
    final class Collection {
        let scratch: ScratchDirectory
        let root: String
        init() throws {
            scratch = try ScratchDirectory()
            root = scratch.path + "/books"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: scratch.path + "/xdg", withIntermediateDirectories: true)
            let initialized = try run(["init", "--firestore", "demo", "--collection", "books"])
            #expect(initialized.status == 0, "\(initialized.stderr)")
        }

        func run(_ arguments: [String], _ environment: [String: String] = [:]) throws -> BinaryTests.Output {
            let base = [
                "FIRESTORE_EMULATOR_HOST": "", "BOOKSYNC_ACCESS_TOKEN": "", "BOOKSYNC_TOKEN_COMMAND": "", "BOOKSYNC_FIRESTORE_URL": "",
                // Never the real metadata server: a closed loopback port answers "refused" at once.
                "GOOGLE_APPLICATION_CREDENTIALS": "", "CLOUDSDK_CONFIG": "", "GCE_METADATA_HOST": "127.0.0.1:9",
                "XDG_CONFIG_HOME": scratch.path + "/xdg", "HOME": scratch.path + "/home", "NO_COLOR": "1",
                "BOOKSYNC_REQUEST_TIMEOUT": "5", "BOOKSYNC_RETRY_DEADLINE": "5",
            ]
            return try BinaryTests.run(arguments, in: root, environment: base.merging(environment) { $1 })
        }

        /// Adds `remote.tokenCommand` to the committed config.json, as a stranger's repository could.
        func commitTokenCommand(_ command: String) throws {
            let path = root + "/.booksync/config.json"
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let quoted = String(decoding: try JSONSerialization.data(withJSONObject: [command], options: [.withoutEscapingSlashes]), as: UTF8.self).dropFirst().dropLast()
            try text.replacingOccurrences(of: "\"project\"", with: "\"tokenCommand\": \(quoted),\n    \"project\"").write(toFile: path, atomically: true, encoding: .utf8)
        }
    }

    @Test(arguments: ["redirect307", "redirect302"])
    func redirectsAreNotFollowed(mode: String) throws {
        let server = try HostileServer()
        let collection = try Collection()
        let result = try collection.run(["-v", "status"], ["BOOKSYNC_FIRESTORE_URL": server.url(mode), "BOOKSYNC_ACCESS_TOKEN": Self.secret])
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("answered \(mode.suffix(3)), a redirect to http://"), "\(result.stderr)")
        #expect(result.stderr.contains("booksync does not follow redirects"))
        let requests = server.requests()
        #expect(requests.contains { $0["listener"] == "main" }, "booksync did reach the server")
        #expect(!requests.contains { $0["listener"] == "trap" }, "a request followed the redirect: \(requests)")
        #expect(!(result.stdout + result.stderr).contains(Self.secret))
    }

    /// The transport itself, without FirestoreRemote: a 3xx comes back as the answer.
    @Test func transportHandsBackTheRedirect() async throws {
        let server = try HostileServer()
        let transport = URLSessionTransport.make(requestTimeout: .seconds(5))
        let response = try await transport(HTTPRequest(method: "POST", url: server.url("redirect307") + "x:runQuery",
                                                       headers: ["Authorization": "Bearer " + Self.secret], body: Array("{}".utf8), timeout: .seconds(5)))
        #expect(response.status == 307)
        #expect(response.headers["location"] == "http://127.0.0.1:\(server.trapPort)/redirect307/v1/x:runQuery")
        #expect(server.requests().filter { $0["listener"] == "trap" }.isEmpty)
    }

    @Test(arguments: ["echo401", "echo403", "echo400", "echo401text", "echo403text", "echo400text"])
    func echoedAuthorizationNeverReachesOutput(mode: String) throws {
        let server = try HostileServer()
        let collection = try Collection()
        try "{\"id\": \"dune\", \"title\": \"T\", \"author\": \"A\", \"genre\": \"g\"}\n".write(toFile: collection.root + "/dune.json", atomically: true, encoding: .utf8)
        for arguments in [["-v", "status"], ["-v", "push"], ["-v", "pull"], ["diff", "--json"]] {
            for credentials in [["BOOKSYNC_ACCESS_TOKEN": Self.secret], ["BOOKSYNC_TOKEN_COMMAND": "echo \(Self.secret)-cmd"]] {
                let result = try collection.run(arguments, credentials.merging(["BOOKSYNC_FIRESTORE_URL": server.url(mode)]) { $1 })
                #expect(result.status == 3, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains("[redacted]"), "\(arguments): \(result.stderr)")
                #expect(!(result.stdout + result.stderr).contains(Self.secret), "\(mode) \(arguments): \(result.stderr)")
            }
        }
        // The server did see the token: the echo was real.
        #expect(server.requests().contains { $0["authorization"] == "Bearer " + Self.secret })
        #expect(server.requests().contains { $0["authorization"] == "Bearer \(Self.secret)-cmd" })
    }

    /// <doc:Safety>: no program named inside a collection is ever run.
    @Test func committedTokenCommandIsNeverRun() throws {
        let server = try HostileServer()
        let collection = try Collection()
        let marker = collection.scratch.path + "/pwned"
        try collection.commitTokenCommand("touch \(marker); echo stolen-token")
        // Without other credentials: the clear "no credentials" error, not the stranger's program.
        let bare = try collection.run(["status"])
        #expect(bare.status == 3, "\(bare.stderr)")
        #expect(bare.stderr.contains("booksync: warning: ignoring remote.tokenCommand in .booksync/config.json"), "\(bare.stderr)")
        #expect(bare.stderr.contains("BOOKSYNC_TOKEN_COMMAND or as \"tokenCommand\" in \(collection.scratch.path)/xdg/booksync/config.json"))
        #expect(bare.stderr.contains("no Firestore credentials"))
        // With the user's own credentials: those are used, and the committed command still is not.
        for command in [["status"], ["pull"], ["push"], ["sync"], ["diff"]] {
            let result = try collection.run(command, ["BOOKSYNC_FIRESTORE_URL": server.url("echo400"), "BOOKSYNC_TOKEN_COMMAND": "echo users-own-token"])
            #expect(result.stderr.contains("ignoring remote.tokenCommand"), "\(command): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker), "the collection's token command ran")
        #expect(!server.requests().contains { $0["authorization"] == "Bearer stolen-token" })
        #expect(server.requests().allSatisfy { $0["authorization"] == "Bearer users-own-token" })
        // Local commands load the config as before.
        #expect(try collection.run(["status", "--offline"]).status == 0)
    }

    @Test func hangingTokenCommandIsStoppedInTime() throws {
        let collection = try Collection()
        let started = Date()
        let result = try collection.run(["status"], ["BOOKSYNC_TOKEN_COMMAND": "sleep 30", "BOOKSYNC_REQUEST_TIMEOUT": "2", "BOOKSYNC_FIRESTORE_URL": "http://127.0.0.1:9/v1/"])
        #expect(Date().timeIntervalSince(started) < 10, "booksync waited for the token command")
        #expect(result.status == 3)
        #expect(result.stderr.contains("the token command 'sleep 30' (from BOOKSYNC_TOKEN_COMMAND) printed no token within 2 s and was stopped"), "\(result.stderr)")
    }

    @Test func failingTokenCommandShowsItsHint() throws {
        let collection = try Collection()
        let result = try collection.run(["status"], [
            "BOOKSYNC_TOKEN_COMMAND": "echo 'ERROR: (gcloud.auth.print-access-token) You do not currently have an active account selected.' >&2; echo 'Please run: gcloud auth login' >&2; printf '\\033]0;evil\\007' >&2; exit 1",
            "BOOKSYNC_FIRESTORE_URL": "http://127.0.0.1:9/v1/",
        ])
        #expect(result.status == 3)
        #expect(result.stderr.contains("failed (exit 1): ERROR: (gcloud.auth.print-access-token) You do not currently have an active account selected. Please run: gcloud auth login"), "\(result.stderr)")
        #expect(result.stderr.contains("\\x1b]0;evil\\x07"), "escaped where every message is: \(result.stderr)")
        #expect(!result.stderr.contains("\u{1B}"), "a control character reached the terminal")
    }

    /// The user's config file is a safe place: its token command runs.
    @Test func userConfigTokenCommandIsUsed() throws {
        let server = try HostileServer()
        let collection = try Collection()
        try FileManager.default.createDirectory(atPath: collection.scratch.path + "/xdg/booksync", withIntermediateDirectories: true)
        try collection.scratch.write("xdg/booksync/config.json", #"{"tokenCommand": "echo token-from-user-config"}"#)
        let result = try collection.run(["status"], ["BOOKSYNC_FIRESTORE_URL": server.url("echo400")])
        #expect(result.status == 3)
        #expect(server.requests().contains { $0["authorization"] == "Bearer token-from-user-config" })
        #expect(!result.stderr.contains("token-from-user-config"))
    }
}

/// A metadata server that accepts the connection and never answers (a
/// firewall or a half-dead proxy on a machine off Google Cloud): it is asked
/// once per process, with `TokenExchange.metadataTimeout` and no retries, not
/// three times with back-off on every lookup (11.8 s per command).
@Suite struct SilentMetadataServerTests {
    /// Accepts every connection, holds it open, never reads or answers, and
    /// logs one line per connection accepted.
    static let script = #"""
    import json, socket, sys, threading
    log_path = sys.argv[1]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held = []
    def serve():
        while True:
            connection, _ = listener.accept()
            held.append(connection)
            with open(log_path, "a") as f:
                f.write("accepted\n")
    threading.Thread(target=serve, daemon=True).start()
    print(json.dumps({"port": listener.getsockname()[1]}), flush=True)
    sys.stdin.read()
    """#

    @Test(.hangGuard)
    func aSilentMetadataServerIsProbedOnceForTheProcess() async throws {
        let scratch = try ScratchDirectory()
        try scratch.write("silent.py", Self.script)
        let server = try LoopbackScript(python: [scratch.path + "/silent.py", scratch.path + "/accepted.log"])
        let port = try #require(server.ports["port"], "the silent server did not start")
        let sent = Mutex<[HTTPRequest]>([])
        let live = URLSessionTransport.make()
        let transport: HTTPTransport = { request throws(TransportError) in
            sent.withLock { $0.append(request) }
            return try await live(request)
        }
        let environment = ["HOME": scratch.path + "/home", "GCE_METADATA_HOST": "127.0.0.1:\(port)"]
        // Two lookups, as two remotes of one command would make: the second learns from the first.
        for lookup in 1...2 {
            let found = try #require(try CredentialSources.find(environment: environment, transport: transport, timeout: 30))
            let tokens = AccessTokens(source: .exchange(found.exchange))
            do {
                _ = try await tokens.token()
                Issue.record("lookup \(lookup): a token from a server that never answers")
            } catch {
                #expect(error.description.contains("no Firestore credentials: the metadata server 127.0.0.1:\(port) did not answer"), "\(error)")
            }
        }
        let accepted = ((try? scratch.read("accepted.log")) ?? "").split(separator: "\n").count
        #expect(accepted == 1, "one connection for the process: no retries, no second probe")
        let requests = sent.withLock { $0 }
        #expect(requests.count == 1)
        #expect(requests.allSatisfy { $0.timeout <= .seconds(TokenExchange.metadataTimeout) })
    }
}
