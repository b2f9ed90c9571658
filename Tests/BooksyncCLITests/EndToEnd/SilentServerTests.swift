import Foundation
import Testing
import BooksyncTestSupport
@_spi(Remote) @testable import BooksyncKit
@testable import BooksyncURLSession

/// The live transport against a server on 127.0.0.1 that accepts every
/// connection, reads the request and never answers: the request's deadline
/// holds, and a cancelled request returns at once (`DeadlineRace`), so a
/// command whose sibling request failed never waits for this one.
@Suite(.hangGuard) struct SilentServerTests {
    /// Declared first so that it stops before its scratch directory goes.
    let server: LoopbackScript
    let scratch: ScratchDirectory
    let url: String

    init() throws {
        scratch = try ScratchDirectory()
        // The same server as the silent metadata server's test: accepts, never answers.
        try scratch.write("silent.py", SilentMetadataServerTests.script)
        server = try LoopbackScript(python: [scratch.path + "/silent.py", scratch.path + "/accepted.log"])
        url = "http://127.0.0.1:\(try #require(server.ports["port"], "the silent server did not start"))/v1/x:runAggregationQuery"
    }

    @Test func aCancelledRequestReturnsThoughTheServerNeverAnswers() async throws {
        let transport = URLSessionTransport.make(requestTimeout: .seconds(3600))
        let silent = HTTPRequest(method: "POST", url: url, body: Array("{}".utf8), timeout: .seconds(3_600))
        let request = Task { () -> TransportError? in
            do {
                _ = try await transport(silent)
                return nil
            } catch let error as TransportError {
                return error
            } catch {
                return nil
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        request.cancel()
        #expect(await request.value?.kind == .cancelled)
    }

    /// URLSession on Linux refused bracketed IPv6 hosts ("network error
    /// -1000"); an IPv6 loopback host is reached as localhost.
    @Test(arguments: [
        ("http://[::1]:8080/v1/x", "http://localhost:8080/v1/x"),
        ("http://[0:0:0:0:0:0:0:1]/v1/", "http://localhost/v1/"),
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1/"),
        ("https://firestore.googleapis.com/v1/", "https://firestore.googleapis.com/v1/"),
        ("http://[::2]:8080/v1/", "http://[::2]:8080/v1/"),
    ])
    func anIPv6LoopbackHostIsReachedAsLocalhost(url: String, reached: String) {
        #expect(URLSessionTransport.reachableURL(url) == reached)
    }

    /// End to end: a server listening on ::1 alone answers a request to `http://[::1]:PORT/`.
    @Test func aServerOnIPv6LoopbackIsReached() async throws {
        try scratch.write("v6.py", #"""
            import http.server, json, socket, sys, threading
            class V6(http.server.ThreadingHTTPServer):
                address_family = socket.AF_INET6
            class Answer(http.server.BaseHTTPRequestHandler):
                def log_message(self, *args): pass
                def do_POST(self):
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    body = b'[{"readTime": "2026-01-01T00:00:00Z"}]'
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
            server = V6(("::1", 0), Answer)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            print(json.dumps({"main": server.server_address[1]}), flush=True)
            sys.stdin.read()
            """#)
        let v6 = try LoopbackScript(python: [scratch.path + "/v6.py"])
        let port = try #require(v6.ports["main"], "no IPv6 loopback here")
        let response = try await URLSessionTransport.make(requestTimeout: .seconds(10))(
            HTTPRequest(method: "POST", url: "http://[::1]:\(port)/v1/x:runQuery", body: Array("{}".utf8), timeout: .seconds(10)))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self).contains("readTime"))
    }

    /// A server that sends a body without end is cut off once the body passes
    /// the transport's cap, with a sentence naming it, instead of being read
    /// into memory until the request times out. (The server stops after 64 MiB
    /// and holds the connection open: without the cap the request ends only
    /// at its 20 s timeout, and memory stays bounded meanwhile.)
    @Test func anEndlessAnswerIsCutOffAtTheCap() async throws {
        try scratch.write("endless.py", #"""
            import http.server, json, sys, threading, time
            class Endless(http.server.BaseHTTPRequestHandler):
                def log_message(self, *args): pass
                def do_POST(self):
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    if self.path.endswith("small"):
                        body = b'[{"readTime": "2026-01-01T00:00:00Z"}]'
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                        return
                    self.end_headers()  # no length: the body ends when the connection does
                    chunk = b'[' + b'{"readTime": "2026-01-01T00:00:00Z"}, ' * 1800
                    try:
                        for _ in range(1000):
                            self.wfile.write(chunk)
                        time.sleep(60)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endless)
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, daemon=True).start()
            print(json.dumps({"main": server.server_address[1]}), flush=True)
            sys.stdin.read()
            """#)
        let endless = try LoopbackScript(python: [scratch.path + "/endless.py"])
        let port = try #require(endless.ports["main"], "the endless server did not start")
        let transport = URLSessionTransport.make(requestTimeout: .seconds(20), maximumAnswerBytes: 1 << 20)
        await #expect(throws: TransportError(.tooLarge, "the answer is larger than 1 MiB, the most booksync reads of one answer")) {
            _ = try await transport(HTTPRequest(method: "POST", url: "http://127.0.0.1:\(port)/v1/x:runQuery", body: Array("{}".utf8), timeout: .seconds(20)))
        }
        // The cap is each answer's: the next one, small, is read whole.
        let small = try await transport(HTTPRequest(method: "POST", url: "http://127.0.0.1:\(port)/v1/small", body: Array("{}".utf8), timeout: .seconds(20)))
        #expect(small.status == 200 && small.body == Array(#"[{"readTime": "2026-01-01T00:00:00Z"}]"#.utf8))
    }

    @Test func theRequestTimeoutHoldsAgainstASilentServer() async throws {
        let transport = URLSessionTransport.make(requestTimeout: .seconds(1))
        await #expect(throws: TransportError(.timedOut, "no answer within 1 s")) {
            _ = try await transport(HTTPRequest(method: "POST", url: url, body: Array("{}".utf8), timeout: .seconds(1)))
        }
    }
}
