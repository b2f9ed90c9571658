import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import BooksyncTestSupport
@_spi(Remote) import BooksyncKit
@testable import BooksyncURLSession

/// `LoopbackWarmup`: before the first Firestore request to a server on this
/// machine, URLSession's transport opens connections with a `GET /`, so the
/// Firestore requests never open one (on Linux, a new connection's first
/// transfer spins a core until its answer comes).
@Suite(.hangGuard) struct LoopbackWarmupTests {
    /// Whether this platform warms (Linux) at all.
    static let warms = LoopbackWarmup.origin(of: "http://127.0.0.1:1/v1/projects/p/databases/d/documents") != nil

    /// Which requests warm which origin, and which never do.
    @Test(arguments: [
        ("http://127.0.0.1:8080/v1/projects/p/databases/(default)/documents:commit", "http://127.0.0.1:8080"),
        ("http://localhost:9/v1/projects/p/databases/(default)/documents/books", "http://localhost:9"),
        ("http://[::1]:8080/v1/projects/p/databases/d/documents", "http://[::1]:8080"),
        ("http://127.0.0.1:8080/token", nil),                            // a token server: never warmed
        ("http://127.0.0.1:8080/v1/projects/-/serviceAccounts/a@b:generateAccessToken", nil),  // IAM
        ("http://127.0.0.1:8080/v1beta1/projects/p/databases/d/documents", nil),
        ("https://127.0.0.1:8080/v1/projects/p/databases/d/documents", nil),
        ("http://firestore.googleapis.com/v1/projects/p/databases/d/documents", nil),  // not this machine
        ("http://user@127.0.0.1:8080/v1/projects/p/databases/d/documents", nil),
        ("http://169.254.169.254/computeMetadata/v1/instance", nil),
    ] as [(String, String?)])
    func warmedOrigins(url: String, origin: String?) {
        #if canImport(Darwin)
        #expect(LoopbackWarmup.origin(of: url) == nil, "Darwin's URLSession does not spin: nothing is warmed")
        #else
        #expect(LoopbackWarmup.origin(of: url) == origin)
        #endif
    }

    /// A server that logs each request with the connection it came on, and
    /// answers `GET /` after 50 ms, so that warm-up requests overlap and each
    /// opens a connection. With `--silent-root`, it never answers `GET /`.
    static let script = #"""
    import http.server, json, socketserver, sys, threading
    log_path, silent_root = sys.argv[1], "--silent-root" in sys.argv
    lock = threading.Lock()
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *args): pass
        def record(self):
            with lock, open(log_path, "a") as f:
                f.write(json.dumps({"method": self.command, "path": self.path,
                                    "connection": "%s:%d" % self.client_address}) + "\n")
        def answer(self):
            n = int(self.headers.get("Content-Length") or 0)
            if n: self.rfile.read(n)
            self.record()
            if self.path == "/":
                threading.Event().wait(30 if silent_root else 0.05)
                if silent_root: return
            body = b"{}" if self.path.startswith("/v1/") else b"Ok\n"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        do_GET = do_POST = answer
    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    sys.stdin.read()
    """#

    /// The server of `script` in a scratch directory of its own, and its port.
    static func start(silentRoot: Bool) throws -> (ScratchDirectory, LoopbackScript, Int) {
        let scratch = try ScratchDirectory()
        try scratch.write("server.py", Self.script)
        let server = try LoopbackScript(python: [scratch.path + "/server.py", scratch.path + "/requests.jsonl"]
                                        + (silentRoot ? ["--silent-root"] : []))
        return (scratch, server, try #require(server.ports["port"]))
    }

    /// The requests the server logged, in order.
    static func requests(_ scratch: ScratchDirectory) throws -> [(method: String, path: String, connection: String)] {
        try scratch.read("requests.jsonl").split(separator: "\n").map {
            let entry = try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String])
            return (entry["method"] ?? "", entry["path"] ?? "", entry["connection"] ?? "")
        }
    }

    static let commitPath = "/v1/projects/p/databases/(default)/documents:commit"

    static func post(_ transport: HTTPTransport, port: Int, _ n: Int) async throws -> HTTPResponse {
        try await transport(HTTPRequest(method: "POST", url: "http://127.0.0.1:\(port)\(Self.commitPath)",
                                        headers: ["Content-Type": "application/json"], body: Array("{\"n\": \(n)}".utf8),
                                        timeout: .seconds(20)))
    }

    /// Four requests at once find warm connections: each came on a
    /// connection a `GET /` opened first, and no Firestore request opened one.
    @Test(.enabled(if: warms, "only Linux warms"))
    func firestoreRequestsComeOnWarmConnections() async throws {
        let (scratch, server, port) = try Self.start(silentRoot: false)
        let transport = URLSessionTransport.make(maximumConnections: 8)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<4 { group.addTask { try await Self.post(transport, port: port, n).status } }
            for try await status in group { #expect(status == 200) }
        }
        let requests = try Self.requests(scratch)
        #expect(requests.filter { $0.path == "/" }.count == 6, "maximumConnections - 2 warm-up requests: \(requests)")
        // A connection is warm when its first request was a warm-up.
        var firstOnConnection: [String: String] = [:]
        for request in requests where firstOnConnection[request.connection] == nil { firstOnConnection[request.connection] = request.path }
        let warm = Set(firstOnConnection.filter { $0.value == "/" }.keys)
        #expect(warm.count == 6, "overlapping warm-up requests open a connection each: \(requests)")
        let posts = requests.filter { $0.method == "POST" }
        #expect(posts.count == 4)
        for post in posts { #expect(warm.contains(post.connection), "\(post.connection) was not warmed first: \(requests)") }
        // A second round warms nothing again.
        #expect(try await Self.post(transport, port: port, 4).status == 200)
        #expect(try Self.requests(scratch).filter { $0.path == "/" }.count == 6)
        _ = server
    }

    /// A server that never answers `GET /` does not stop the Firestore
    /// request: it goes while the warm-up requests still wait, and gets its
    /// answer. (How long it waited first, `waitLimit`, is not timed here.)
    @Test(.enabled(if: warms, "only Linux warms"))
    func aServerThatNeverAnswersTheWarmUpStillGetsTheRequest() async throws {
        let (scratch, server, port) = try Self.start(silentRoot: true)
        let transport = URLSessionTransport.make(maximumConnections: 4, requestTimeout: .seconds(60))
        let response = try await Self.post(transport, port: port, 0)
        #expect(response.status == 200)
        let requests = try Self.requests(scratch)
        #expect(requests.filter { $0.path == "/" }.count == 2, "\(requests)")
        #expect(requests.last?.method == "POST", "the request went while the warm-up requests waited: \(requests)")
        _ = server
    }

    /// A request cancelled while it waits for the warm-up stops waiting. The
    /// wait limit here is an hour and the server never answers `GET /`: a
    /// wait that ignored the cancellation would hang until the time limit.
    @Test(.enabled(if: warms, "only Linux warms"))
    func aCancelledRequestStopsWaitingForTheWarmUp() async throws {
        let (scratch, server, port) = try Self.start(silentRoot: true)
        let delegate = SessionDelegate(maximumAnswerBytes: 1 << 20)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        // Its warm-up requests wait an hour for the silent server: cancel them with the session.
        defer { session.invalidateAndCancel() }
        let warmup = LoopbackWarmup(connections: 2, waitLimit: .seconds(3600), requestTimeout: 3600)
        let waiting = Task { await warmup.ready("http://127.0.0.1:\(port)", session: session, delegate: delegate) }
        // Once both warm-up requests are on the server (at most 20 s).
        for _ in 0..<200 where ((try? Self.requests(scratch)) ?? []).count < 2 { try await Task.sleep(for: .milliseconds(100)) }
        #expect(try Self.requests(scratch).count == 2)
        waiting.cancel()
        await waiting.value
        _ = server
    }
}
