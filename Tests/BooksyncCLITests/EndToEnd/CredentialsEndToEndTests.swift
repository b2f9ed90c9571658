import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// `scripts/token_server.py` on 127.0.0.1: a token endpoint that verifies
/// service-account JWTs with openssl and the account's public key, a fake
/// metadata server, STS and IAM Credentials stand-ins and a URL subject-token
/// source, and a proxy in front of the emulator that lets through only
/// bearer tokens it issued itself (only those of the IAM stand-in, when so
/// configured).
final class TokenServer {
    static let script = URL(fileURLWithPath: Fixtures.root).deletingLastPathComponent()
        .appendingPathComponent("scripts/token_server.py").path
    static let clientEmail = "sync@test-project.iam.gserviceaccount.com"
    static let refreshToken = "1//refresh-\(UUID().uuidString)"

    let server: LoopbackScript
    let port: Int

    /// - Parameter extra: More of the script's options (the STS and IAM stand-ins').
    init(upstream: String, publicKey: String, extra: [String] = []) throws {
        server = try LoopbackScript(python: [Self.script, "--upstream", upstream, "--client-email", Self.clientEmail,
                                             "--public-key", publicKey, "--refresh-token", Self.refreshToken,
                                             "--lifetime", "120", "--max-seconds", "300"] + extra)
        port = try #require(server.ports["port"], "the token server did not start")
    }

    var tokenURI: String { "http://127.0.0.1:\(port)/token" }

    /// What the server saw: issued tokens, grants, proxied and rejected counts, quota projects.
    func log() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(string: "http://127.0.0.1:\(port)/__log")!)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

/// Credential sources 3–5 (<doc:Firestore>) end to end: the built booksync pulls
/// and pushes real records through the token-checking proxy with a
/// service-account key file, an authorized-user file and the metadata server,
/// and fails with a sentence naming the file and the cause otherwise.
@Suite struct CredentialsEndToEndTests {
    /// A key pair made by openssl, and the service-account file holding it.
    final class Keys {
        let scratch: ScratchDirectory
        init() throws {
            scratch = try ScratchDirectory()
            for name in ["sa", "other"] {
                let made = try RSAOpenSSL.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "\(name).pem"], in: scratch.path)
                try #require(made == 0, "openssl genpkey failed")
            }
            try #require(try RSAOpenSSL.run(["pkey", "-in", "sa.pem", "-pubout", "-out", "sa.pub"], in: scratch.path) == 0)
        }
        var publicKey: String { scratch.path + "/sa.pub" }
        func pem(_ name: String) throws -> String { try scratch.read("\(name).pem") }
    }

    enum RSAOpenSSL {
        static func run(_ arguments: [String], in directory: String) throws -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["openssl"] + arguments
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    static func json(_ object: [String: String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// The environment of a production run against the proxy: no emulator, no
    /// other credentials, a closed loopback port as the metadata server unless
    /// a test names the real (fake) one. Never a non-loopback address.
    static func environment(server: TokenServer, scratch: ScratchDirectory, _ extra: [String: String]) -> [String: String] {
        [
            "FIRESTORE_EMULATOR_HOST": "", "BOOKSYNC_ACCESS_TOKEN": "", "BOOKSYNC_TOKEN_COMMAND": "",
            "BOOKSYNC_FIRESTORE_URL": "http://127.0.0.1:\(server.port)/v1/",
            "GOOGLE_APPLICATION_CREDENTIALS": "", "CLOUDSDK_CONFIG": scratch.path + "/gcloud", "GOOGLE_CLOUD_QUOTA_PROJECT": "",
            "GCE_METADATA_HOST": "127.0.0.1:9", "HOME": scratch.path + "/home", "XDG_CONFIG_HOME": scratch.path + "/xdg",
            "NO_COLOR": "1", "BOOKSYNC_REQUEST_TIMEOUT": "10", "BOOKSYNC_RETRY_DEADLINE": "20",
        ].merging(extra) { $1 }
    }

    enum Source: String, CaseIterable, Sendable {
        case serviceAccountFile, authorizedUserADCFile, metadataServer
    }

    @Test(.hangGuard, arguments: Source.allCases)
    func pullAndPushPassTheCheckingProxy(source: Source) async throws {
        let keys = try Keys()
        let server = try TokenServer(upstream: try Emulator.requireHost(), publicKey: keys.publicKey)
        let ws = try Workspace(project: Emulator.uniqueProject("creds" + source.rawValue), host: try Emulator.requireHost())
        try ws.initialize()
        let scratch = ws.scratch
        try FileManager.default.createDirectory(atPath: scratch.path + "/gcloud", withIntermediateDirectories: true)
        var extra: [String: String] = [:]
        let named: String
        switch source {
        case .serviceAccountFile:
            try scratch.write("sa.json", try Self.json([
                "type": "service_account", "client_email": TokenServer.clientEmail, "private_key_id": "k1",
                "private_key": try keys.pem("sa"), "token_uri": server.tokenURI, "quota_project_id": "quota-p",
            ]))
            extra["GOOGLE_APPLICATION_CREDENTIALS"] = scratch.path + "/sa.json"
            named = "service_account from the credentials file \(scratch.path)/sa.json (GOOGLE_APPLICATION_CREDENTIALS), as \(TokenServer.clientEmail)"
        case .authorizedUserADCFile:
            try scratch.write("gcloud/application_default_credentials.json", try Self.json([
                "type": "authorized_user", "client_id": "test-client", "client_secret": "test-secret",
                "refresh_token": TokenServer.refreshToken, "token_uri": server.tokenURI,
            ]))
            named = "authorized_user from gcloud's credentials file \(scratch.path)/gcloud/application_default_credentials.json"
        case .metadataServer:
            extra["GCE_METADATA_HOST"] = "127.0.0.1:\(server.port)"
            named = "the metadata server 127.0.0.1:\(server.port)"
        }
        let environment = Self.environment(server: server, scratch: scratch, extra)
        try await ws.rest.put([(id: "from-app", fields: bookFields("from-app", title: "Written by the app"))])

        let pulled = try BinaryTests.run(["-v", "pull"], in: ws.root, environment: environment)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(pulled.stderr.contains("booksync: credentials: \(named)"), "\(pulled.stderr)")
        #expect(ws.read("from-app.json")?.contains("Written by the app") == true)

        try ws.write("from-cli.json", bookFile("from-cli", title: "Pushed through the proxy"))
        let pushed = try BinaryTests.run(["push"], in: ws.root, environment: environment)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let remote = try await ws.rest.all()
        #expect(remote["from-cli"]?.fields["title"] == .string("Pushed through the proxy"))

        let log = try server.log()
        let issued = log["issued"] as? [String] ?? []
        #expect(!issued.isEmpty)
        #expect((log["proxied"] as? Int ?? 0) > 0)
        #expect(log["rejected"] as? Int == 0, "every request carried a token the endpoint issued")
        for token in issued {
            #expect(!(pulled.stdout + pulled.stderr + pushed.stdout + pushed.stderr).contains(token), "the token was printed")
        }
        if source == .serviceAccountFile {
            #expect((log["quota_projects"] as? [String] ?? []).allSatisfy { $0 == "quota-p" })
            #expect(!(log["quota_projects"] as? [String] ?? []).isEmpty, "x-goog-user-project was sent")
        }
    }

    /// The proxy is the check: a token it did not issue does not get through.
    @Test(.hangGuard) func theProxyRejectsATokenTheEndpointDidNotIssue() throws {
        let keys = try Keys()
        let server = try TokenServer(upstream: try Emulator.requireHost(), publicKey: keys.publicKey)
        let ws = try Workspace(project: Emulator.uniqueProject("credsproxy"), host: try Emulator.requireHost())
        try ws.initialize()
        let environment = Self.environment(server: server, scratch: ws.scratch, ["BOOKSYNC_ACCESS_TOKEN": "ya29.made-up"])
        let result = try BinaryTests.run(["pull"], in: ws.root, environment: environment)
        #expect(result.status != 0)
        #expect(result.stderr.contains("Firestore refused the credentials (401 UNAUTHENTICATED)"), "\(result.stderr)")
        let log = try server.log()
        #expect(log["proxied"] as? Int == 0 && (log["rejected"] as? Int ?? 0) > 0)
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        let name: String
        /// The file's fields; "$KEY:name" and "$URI" are replaced with a key's PEM and the token URI.
        let file: [String: String]
        let says: [String]
        var testDescription: String { name }
    }

    static let failures: [Failure] = [
        Failure(name: "wrong key", file: ["type": "service_account", "client_email": TokenServer.clientEmail,
                                          "private_key": "$KEY:other", "token_uri": "$URI"],
                says: ["refused it (400 invalid_grant: Invalid JWT Signature.)", "create a new JSON key"]),
        Failure(name: "expired refresh token", file: ["type": "authorized_user", "client_id": "test-client", "client_secret": "test-secret",
                                                      "refresh_token": "1//revoked-long-ago", "token_uri": "$URI"],
                says: ["invalid_grant: Token has been expired or revoked.", "run 'gcloud auth application-default login'"]),
        Failure(name: "unknown type", file: ["type": "gdch_service_account", "token_uri": "$URI"],
                says: ["holds credentials of type 'gdch_service_account', which booksync does not use"]),
        Failure(name: "unreachable token endpoint", file: ["type": "authorized_user", "client_id": "test-client", "client_secret": "test-secret",
                                                           "refresh_token": TokenServer.refreshToken, "token_uri": "http://127.0.0.1:9/token"],
                says: ["cannot reach the token endpoint http://127.0.0.1:9/token"]),
    ]

    @Test(.hangGuard, arguments: failures)
    func failuresNameTheFileAndTheCause(_ failure: Failure) async throws {
        let keys = try Keys()
        let server = try TokenServer(upstream: try Emulator.requireHost(), publicKey: keys.publicKey)
        let ws = try Workspace(project: Emulator.uniqueProject("credsfail"), host: try Emulator.requireHost())
        try ws.initialize()
        var file = failure.file
        for (key, value) in file {
            if value == "$URI" { file[key] = server.tokenURI }
            if value.hasPrefix("$KEY:") { file[key] = try keys.pem(String(value.dropFirst(5))) }
        }
        try ws.scratch.write("creds.json", try Self.json(file))
        let environment = Self.environment(server: server, scratch: ws.scratch, ["GOOGLE_APPLICATION_CREDENTIALS": ws.scratch.path + "/creds.json"])
        let started = ContinuousClock.now
        let result = try BinaryTests.run(["pull"], in: ws.root, environment: environment)
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(result.status != 0)
        #expect(result.stderr.contains("the credentials file \(ws.scratch.path)/creds.json (GOOGLE_APPLICATION_CREDENTIALS)"), "\(result.stderr)")
        for expected in failure.says { #expect(result.stderr.contains(expected), "\(result.stderr)") }
        #expect(!result.stderr.contains("BEGIN PRIVATE KEY") && !result.stderr.contains("1//revoked"), "\(result.stderr)")
        let log = try server.log()
        #expect(log["proxied"] as? Int == 0, "nothing reached Firestore without a token")
    }
}
