import Testing
@_spi(Remote) @testable import BooksyncKit

/// Which hosts may be reached over plain HTTP: loopback by parsed address,
/// never by a prefix (issue 10: `127.example.com` counted as loopback).
@Suite struct LoopbackTests {
    @Test(arguments: [
        // IPv4: 127.0.0.0/8 as a strict dotted quad.
        ("127.0.0.1", true), ("127.1.2.3", true), ("127.255.255.255", true), ("127.0.0.0", true),
        ("127.example.com", false), ("127.0.0.1.nip.io", false), ("1127.0.0.1", false), ("128.0.0.1", false),
        ("127.0.0.256", false), ("127.0.0", false), ("127.1", false), ("127.0.0.1.", false), ("0127.0.0.1", false),
        ("127.00.0.1", false), ("127.0.0.01", false), ("0x7f.0.0.1", false), ("2130706433", false), ("127.0.0.+1", false),
        ("10.0.0.1", false), ("0.0.0.0", false),
        // Names: exactly localhost.
        ("localhost", true), ("LocalHost", true), ("localhost.evil.com", false), ("evil-localhost", false),
        ("localhost.", false), ("my.localhost", false), ("", false),
        // IPv6: ::1 in any spelling; IPv4-mapped and zones refused (see HostAddress).
        ("::1", true), ("[::1]", true), ("0:0:0:0:0:0:0:1", true), ("[0000:0000:0000:0000:0000:0000:0000:0001]", true), ("::0:1", true),
        ("::ffff:127.0.0.1", false), ("[::ffff:127.0.0.1]", false), ("::127.0.0.1", false), ("::1%lo", false), ("[::1%25lo]", false),
        ("::2", false), (":::1", false), ("::1::", false), ("[::1", false), ("::1]", false), ("[]", false), ("1::", false),
        ("0:0:0:0:0:0:0:0:1", false), ("::00001", false), ("::g", false), ("[::1].evil.com", false),
    ])
    func loopbackIsParsedNotPrefixed(host: String, loopback: Bool) {
        #expect(HostAddress.isLoopback(host) == loopback, "\(host)")
    }

    /// The whole decision on a base URL: plain HTTP only to loopback, and the
    /// host checked must be the host a URL parser connects to.
    @Test(arguments: [
        ("http://127.0.0.1:8080/v1/", true), ("http://[::1]:8080/v1/", true), ("http://localhost/v1", true), ("http://127.9.9.9/v1/", true),
        ("https://firestore.example.com/v1/", true), ("https://127.example.com/v1/", true),
        ("http://127.example.com/v1/", false), ("http://127.0.0.1.nip.io:80/v1/", false), ("http://localhost.evil.com/v1/", false),
        ("http://1127.0.0.1/v1/", false), ("http://example.com/v1/", false),
        // User info and backslashes: parsers disagree on which side is the host.
        ("http://127.0.0.1@evil.com/v1/", false), ("http://evil.com@127.0.0.1/v1/", false), ("http://evil.com\\@127.0.0.1/v1/", false),
        ("http://127.0.0.1:80:80/v1/", false), ("http://127.0.0.1:x/v1/", false), ("http://[::1]x/v1/", false),
        ("http://127.0.0.1%2eevil.com/v1/", false), ("ftp://127.0.0.1/v1/", false), ("http:///v1/", false),
    ])
    func plainHTTPBaseURLs(url: String, accepted: Bool) {
        let endpoint = try? FirestoreEndpoint.custom(baseURL: url, tokens: AccessTokens(source: .fixed("t")))
        #expect((endpoint != nil) == accepted, "\(url)")
    }
}
