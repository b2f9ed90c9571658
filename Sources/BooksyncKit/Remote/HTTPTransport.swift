/// An HTTP request as the Firestore remote builds it.
///
/// With `HTTPResponse` and `HTTPTransport` this is the whole HTTP seam: an app
/// or a test that supplies its own transport closure receives these values and
/// needs nothing else of booksync's networking.
public struct HTTPRequest: Sendable, Equatable {
    /// The HTTP method: `GET` or `POST` (Firestore's REST calls and token requests).
    public var method: String
    /// The absolute URL, path already percent-encoded; sent as is.
    public var url: String
    /// Headers to send; `Authorization` carries a bearer token, so a transport
    /// must never log them or send them to another host (no redirects).
    public var headers: [String: String]
    /// The body, if any: UTF-8 JSON for Firestore, a URL-encoded form for token requests.
    public var body: [UInt8]?
    /// How long before the request is abandoned (and retried, if it may be).
    public var timeout: Duration

    /// A request (the Firestore client sets `timeout` from `RetryPolicy.requestTimeout`).
    public init(method: String, url: String, headers: [String: String] = [:], body: [UInt8]? = nil, timeout: Duration = .seconds(30)) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// An HTTP response. Header names are lowercased.
///
/// Any status is an answer, 3xx included: a transport returns it rather than
/// following a redirect, and the Firestore client decides what it means.
public struct HTTPResponse: Sendable, Equatable {
    /// The HTTP status code (200, 404, 503, …).
    public var status: Int
    /// Response headers, names lowercased (`retry-after`, `location`).
    public var headers: [String: String]
    /// The raw body bytes, undecoded.
    public var body: [UInt8]

    /// A response; header names must already be lowercase.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why a request got no HTTP answer at all.
///
/// The Firestore client retries every kind except `cancelled`, which ends the
/// command as interrupted, and `tooLarge`; `message` becomes part of the user's error.
public struct TransportError: Error, Sendable, Equatable {
    /// The broad cause; only `cancelled` and `tooLarge` change what the caller does.
    public enum Kind: Sendable, Equatable {
        case timedOut, cancelled, connectionFailed, other
        /// The answer's body passed the most the transport reads: another
        /// try would meet the same, so it is not retried.
        case tooLarge
    }

    /// The broad cause.
    public let kind: Kind
    /// What went wrong, in words (never a Foundation error dump).
    public let message: String

    /// An error of `kind`; `message` is a short phrase such as "connection refused".
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

/// The HTTP seam: one closure. The live one uses URLSession (module
/// BooksyncURLSession, kept out of this one so that local commands never load
/// Foundation's networking stack); tests replay recorded answers through it.
///
/// It is called from many tasks at once (listing pages, batched gets and
/// writes run in parallel), so it must be safe to call concurrently. It
/// throws only when there is no HTTP answer at all; any status, error
/// statuses included, is returned as an `HTTPResponse`.
public typealias HTTPTransport = @Sendable (HTTPRequest) async throws(TransportError) -> HTTPResponse
