import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
@_spi(Remote) import BooksyncKit

/// The live transport over URLSession (FoundationNetworking on Linux).
///
/// Redirects are never followed (`RefuseRedirects`): a 3xx comes back as the
/// answer, and FirestoreRemote reports it. Following one would send the
/// `Authorization: Bearer` header wherever the `Location` points, plain HTTP
/// and other hosts included.
///
/// Every request is bounded twice: by URLSession's request timeout, and by a
/// deadline racing the request (`DeadlineRace`), because on Linux a request
/// on a connection the server dropped can otherwise wait far longer than
/// asked, and a cancelled one sometimes never returns at all. Its answer is
/// bounded too: a body is read as it streams in and abandoned once it passes
/// `maximumAnswerBytes`.
public enum URLSessionTransport {
    /// The most of one answer's body that is read: 1 GiB. The largest answers
    /// booksync asks for are pages of documents (300 in the first listing
    /// query and a `documents.list` page, 200 in a `:batchGet`; later
    /// queries are sized to about 8 MiB), each document at most Firestore's
    /// 1 MiB, sent as JSON that can take about three times its stored size
    /// (`{"integerValue": "1"}` for an 8-byte integer): under 1 GiB. A body
    /// past that is not a page but a server sending without end, and it would
    /// be held in memory several times over.
    public static let maximumAnswerBytes = 1 << 30

    /// A transport with its own ephemeral session: no cache, no cookies, no
    /// redirects. Safe to call from many tasks at once. On Linux, requests to
    /// a Firestore on this machine (the emulator) first open a few
    /// connections with a request it answers at once (`LoopbackWarmup` says why).
    /// - Parameters:
    ///   - maximumConnections: Connections per host at once.
    ///   - requestTimeout: The session's request timeout, and twice
    ///     it bounds a whole transfer; each request's own `HTTPRequest.timeout`
    ///     (plus half a second) bounds it too.
    ///   - maximumAnswerBytes: A longer body fails the request (`tooLarge`).
    public static func make(maximumConnections: Int = 8, requestTimeout: Duration = .seconds(30),
                            maximumAnswerBytes: Int = maximumAnswerBytes) -> HTTPTransport {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = maximumConnections
        configuration.httpCookieStorage = nil
        configuration.timeoutIntervalForRequest = requestTimeout.seconds
        configuration.timeoutIntervalForResource = requestTimeout.seconds * 2
        let delegate = SessionDelegate(maximumAnswerBytes: maximumAnswerBytes)
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        // Fewer than the session may open: requests still find a connection
        // while warm-up requests wait on a server that does not answer them.
        let warmup = maximumConnections > 2
            ? LoopbackWarmup(connections: maximumConnections - 2, requestTimeout: min(requestTimeout.seconds, 10)) : nil
        return { (request: HTTPRequest) async throws(TransportError) -> HTTPResponse in
            if let warmup, let origin = LoopbackWarmup.origin(of: reachableURL(request.url)) {
                await warmup.ready(origin, session: session, delegate: delegate)
            }
            // The deadline holds even if URLSession never returns (see `DeadlineRace`).
            let outcome = await DeadlineRace.run(
                seconds: request.timeout.seconds + 0.5,
                timedOut: .failure(TransportError(.timedOut, "no answer within \(RetryPolicy.format(request.timeout)) s")),
                cancelled: .failure(TransportError(.cancelled, "cancelled"))
            ) { await perform(request, session: session, delegate: delegate) }
            return try outcome.get()
        }
    }

    private static func perform(_ request: HTTPRequest, session: URLSession, delegate: SessionDelegate) async -> Result<HTTPResponse, TransportError> {
        guard let url = URL(string: reachableURL(request.url)) else {
            return .failure(TransportError(.other, "invalid URL \(request.url)"))
        }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout.seconds)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let body = request.body { urlRequest.httpBody = Data(body) }
        return await delegate.run(urlRequest, timeout: request.timeout.seconds, in: session)
    }

    /// The response of a finished task, or why there is none.
    static func outcome(of task: URLSessionTask, body: [UInt8], error: (any Error)?, timeout: Double) -> Result<HTTPResponse, TransportError> {
        if let error = error as? URLError { return .failure(TransportError(kind(of: error), describe(error, timeout: timeout))) }
        if let error { return .failure(TransportError(.other, error.localizedDescription)) }
        guard let http = task.response as? HTTPURLResponse else {
            return .failure(TransportError(.other, "the answer was not HTTP"))
        }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
        }
        return .success(HTTPResponse(status: http.statusCode, headers: headers, body: body))
    }

    /// The sentence of an answer cut off at `limit` bytes.
    static func tooLarge(_ limit: Int) -> TransportError {
        let size = limit % (1 << 30) == 0 ? "\(limit >> 30) GiB" : limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"
        return TransportError(.tooLarge, "the answer is larger than \(size), the most booksync reads of one answer")
    }

    /// The URL as URLSession can reach it. On Linux, URLSession refuses a
    /// bracketed IPv6 host (`http://[::1]:8080/`: "network error -1000"), so
    /// an IPv6 loopback host is sent to `localhost`, which its resolver tries
    /// as `::1` and as 127.0.0.1. Other hosts, and Darwin, are left alone.
    static func reachableURL(_ text: String) -> String {
        #if canImport(Darwin)
        return text
        #else
        guard let scheme = text.range(of: "://["), let close = text[scheme.upperBound...].firstIndex(of: "]") else { return text }
        let host = String(text[text.index(before: scheme.upperBound)...close])
        guard HostAddress.isLoopback(host) else { return text }
        return String(text[..<scheme.upperBound].dropLast()) + "localhost" + text[text.index(after: close)...]
        #endif
    }

    static func kind(of error: URLError) -> TransportError.Kind {
        switch error.code {
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet, .cannotFindHost, .dnsLookupFailed:
            .connectionFailed
        default: .other
        }
    }

    /// A sentence for a URLError: Foundation's own texts are often an error-domain dump.
    static func describe(_ error: URLError, timeout: Double) -> String {
        switch error.code {
        case .timedOut: return "no answer within \(RetryPolicy.format(timeout)) s"
        case .cannotConnectToHost: return "connection refused"
        case .networkConnectionLost: return "connection lost"
        case .cannotFindHost, .dnsLookupFailed: return "host not found"
        case .notConnectedToInternet: return "no network"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid:
            return "TLS connection failed"
        case .cancelled: return "cancelled"
        default:
            let text = error.localizedDescription
            return text.contains("NSURLErrorDomain") ? "network error \(error.code.rawValue)" : text
        }
    }
}

/// The session's delegate: collects each task's body as it streams in,
/// cancelling a task once its body passes `maximumAnswerBytes` (a body read
/// whole by `data(for:)` has no bound), and answers every redirect with "do
/// not follow": the 3xx response itself becomes the task's result.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    let maximumAnswerBytes: Int
    /// By task identifier: the tasks under way.
    private let transfers = Mutex<[Int: Transfer]>([:])

    private struct Transfer {
        let timeout: Double
        /// The most of the body read (`maximumAnswerBytes` unless the caller asked for less).
        let limit: Int
        let finish: CheckedContinuation<Result<HTTPResponse, TransportError>, Never>
        var body: [UInt8] = []
        var tooLarge = false
    }

    init(maximumAnswerBytes: Int) {
        self.maximumAnswerBytes = maximumAnswerBytes
    }

    /// Runs `request` as a data task of `session` (whose delegate this is);
    /// a body longer than `limit` (at most `maximumAnswerBytes`) fails it.
    func run(_ request: URLRequest, timeout: Double, in session: URLSession, limit: Int? = nil) async -> Result<HTTPResponse, TransportError> {
        let task = session.dataTask(with: request)
        let limit = min(limit ?? maximumAnswerBytes, maximumAnswerBytes)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { finish in
                transfers.withLock { $0[task.taskIdentifier] = Transfer(timeout: timeout, limit: limit, finish: finish) }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let cut = transfers.withLock { transfers -> Bool in
            // Scalars only: a copy of the transfer would share its body, and the
            // append below would then copy the whole body.
            guard let count = transfers[id]?.body.count, let limit = transfers[id]?.limit,
                  transfers[id]?.tooLarge == false else { return false }
            guard count + data.count <= limit else {
                transfers[id]?.tooLarge = true
                transfers[id]?.body = []
                return true
            }
            transfers[id]?.body.append(contentsOf: data)  // in place: never a copy of what came before
            return false
        }
        if cut { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if transfer.tooLarge {
            transfer.finish.resume(returning: .failure(URLSessionTransport.tooLarge(transfer.limit)))
        } else {
            transfer.finish.resume(returning: URLSessionTransport.outcome(of: task, body: transfer.body, error: error, timeout: transfer.timeout))
        }
    }

    #if canImport(Darwin)
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest) async -> URLRequest? {
        nil
    }
    #else
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
    #endif
}
