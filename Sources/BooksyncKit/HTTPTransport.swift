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

/// The HTTP seam: one closure. The live one uses URLSession (module
/// BooksyncURLSession, kept out of this one so that local commands never load
/// Foundation's networking stack); tests replay recorded answers through it.
public typealias HTTPTransport = @Sendable (HTTPRequest) async throws(TransportError) -> HTTPResponse
