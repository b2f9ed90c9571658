import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncKit
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
        let transport = URLSessionTransport.make(requestTimeout: 3_600)
        let silent = HTTPRequest(method: "POST", url: url, body: Array("{}".utf8), timeout: 3_600)
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
        let response = try await URLSessionTransport.make(requestTimeout: 10)(
            HTTPRequest(method: "POST", url: "http://[::1]:\(port)/v1/x:runQuery", body: Array("{}".utf8), timeout: 10))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self).contains("readTime"))
    }

    @Test func theRequestTimeoutHoldsAgainstASilentServer() async throws {
        let transport = URLSessionTransport.make(requestTimeout: 1)
        await #expect(throws: TransportError(.timedOut, "no answer within 1 s")) {
            _ = try await transport(HTTPRequest(method: "POST", url: url, body: Array("{}".utf8), timeout: 1))
        }
    }
}
