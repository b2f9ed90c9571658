import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import BooksyncKit

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
/// asked, and a cancelled one sometimes never returns at all.
public enum URLSessionTransport {
    /// A transport with its own ephemeral session: no cache, no cookies, no
    /// redirects. Safe to call from many tasks at once.
    /// - Parameters:
    ///   - maximumConnections: Connections per host at once.
    ///   - requestTimeout: Seconds: the session's request timeout, and twice
    ///     it bounds a whole transfer; each request's own `HTTPRequest.timeout`
    ///     (plus half a second) bounds it too.
    public static func make(maximumConnections: Int = 8, requestTimeout: Double = 30) -> HTTPTransport {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = maximumConnections
        configuration.httpCookieStorage = nil
        configuration.timeoutIntervalForRequest = requestTimeout
        configuration.timeoutIntervalForResource = requestTimeout * 2
        let refuse = RefuseRedirects()
        let session = URLSession(configuration: configuration, delegate: refuse, delegateQueue: nil)
        return { (request: HTTPRequest) async throws(TransportError) -> HTTPResponse in
            // The deadline holds even if URLSession never returns (see `DeadlineRace`).
            let outcome = await DeadlineRace.run(
                seconds: request.timeout + 0.5,
                timedOut: .failure(TransportError(.timedOut, "no answer within \(RetryPolicy.format(request.timeout)) s")),
                cancelled: .failure(TransportError(.cancelled, "cancelled"))
            ) { await perform(request, session: session, delegate: refuse) }
            return try outcome.get()
        }
    }

    private static func perform(_ request: HTTPRequest, session: URLSession, delegate: RefuseRedirects) async -> Result<HTTPResponse, TransportError> {
        guard let url = URL(string: reachableURL(request.url)) else {
            return .failure(TransportError(.other, "invalid URL \(request.url)"))
        }
        let timeout = request.timeout
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let body = request.body { urlRequest.httpBody = Data(body) }
        do {
            // The delegate both for the session and for the task: which one
            // URLSession asks about a redirect differs between Darwin and
            // swift-corelibs-foundation versions, and either must say no.
            let (data, response) = try await session.data(for: urlRequest, delegate: delegate)
            guard let http = response as? HTTPURLResponse else {
                return .failure(TransportError(.other, "the answer was not HTTP"))
            }
            var headers: [String: String] = [:]
            for (key, value) in http.allHeaderFields {
                if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
            }
            return .success(HTTPResponse(status: http.statusCode, headers: headers, body: Array(data)))
        } catch let error as URLError {
            return .failure(TransportError(kind(of: error), describe(error, timeout: timeout)))
        } catch {
            return .failure(TransportError(.other, error.localizedDescription))
        }
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

/// Answers every redirect with "do not follow": the 3xx response itself
/// becomes the task's result.
final class RefuseRedirects: NSObject, URLSessionTaskDelegate, Sendable {
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
