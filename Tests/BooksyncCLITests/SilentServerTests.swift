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
    static let script = #"""
    import socket, sys, threading, json
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held = []
    def accept():
        while True:
            connection, _ = listener.accept()
            connection.recv(65536)
            held.append(connection)  # never answered, never closed
    threading.Thread(target=accept, daemon=True).start()
    print(json.dumps({"main": listener.getsockname()[1]}), flush=True)
    sys.stdin.read()
    """#

    /// Declared first so that it stops before its scratch directory goes.
    let server: LoopbackScript
    let scratch: ScratchDirectory
    let url: String

    init() throws {
        scratch = try ScratchDirectory()
        try scratch.write("silent.py", Self.script)
        server = try LoopbackScript(python: [scratch.path + "/silent.py"])
        url = "http://127.0.0.1:\(try #require(server.ports["main"], "the silent server did not start"))/v1/x:runAggregationQuery"
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

    @Test func theRequestTimeoutHoldsAgainstASilentServer() async throws {
        let transport = URLSessionTransport.make(requestTimeout: 1)
        await #expect(throws: TransportError(.timedOut, "no answer within 1 s")) {
            _ = try await transport(HTTPRequest(method: "POST", url: url, body: Array("{}".utf8), timeout: 1))
        }
    }
}
