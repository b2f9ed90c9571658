import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP request as the Firestore remote builds it.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var url: String
    public var headers: [String: String]
    public var body: [UInt8]?
    /// Seconds before the request is abandoned (and retried, if it may be).
    public var timeout: Double

    public init(method: String, url: String, headers: [String: String] = [:], body: [UInt8]? = nil, timeout: Double = 30) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// An HTTP response. Header names are lowercased.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why a request got no HTTP answer at all.
public struct TransportError: Error, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case timedOut, cancelled, connectionFailed, other
    }

    public let kind: Kind
    /// What went wrong, in words (never a Foundation error dump).
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

/// The HTTP seam: one closure. The live one uses URLSession; tests replay
/// recorded answers through it without a server.
public typealias HTTPTransport = @Sendable (HTTPRequest) async throws(TransportError) -> HTTPResponse

/// The live transport over URLSession (FoundationNetworking on Linux).
public enum URLSessionTransport {
    public static func make(maximumConnections: Int = 8) -> HTTPTransport {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = maximumConnections
        configuration.httpCookieStorage = nil
        let session = URLSession(configuration: configuration)
        return { (request: HTTPRequest) async throws(TransportError) -> HTTPResponse in
            guard let url = URL(string: request.url) else {
                throw TransportError(.other, "invalid URL \(request.url)")
            }
            var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
            urlRequest.httpMethod = request.method
            for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
            if let body = request.body { urlRequest.httpBody = Data(body) }
            do {
                let (data, response) = try await session.data(for: urlRequest)
                guard let http = response as? HTTPURLResponse else {
                    throw TransportError(.other, "the answer was not HTTP")
                }
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields {
                    if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
                }
                return HTTPResponse(status: http.statusCode, headers: headers, body: Array(data))
            } catch let error as TransportError {
                throw error
            } catch let error as URLError {
                throw TransportError(kind(of: error), error.localizedDescription)
            } catch {
                throw TransportError(.other, error.localizedDescription)
            }
        }
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
}
