import Foundation
import Testing
import BooksyncTestSupport
@testable import BooksyncCore
@_spi(Remote) @testable import BooksyncKit

/// Keyless credentials end to end (<doc:Firestore>): the built booksync
/// pulls and pushes through the checking proxy with an `external_account`
/// file (subject token from a file or a URL, exchanged at the STS stand-in,
/// then impersonating through the IAM stand-in) and with gcloud's
/// `impersonated_service_account` file; it refreshes a token the proxy
/// stops accepting mid-command, never prints a subject token an STS echoes
/// back, and runs no credential program.
extension CredentialsEndToEndTests {
    static let subjectToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaSJ9.subject-\(UUID().uuidString)"
    static let impersonated = "ci@test-project.iam.gserviceaccount.com"
    static let audience = "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/ci/providers/test"

    /// The script with the STS, IAM and subject-URL stand-ins on; `extra` adds options.
    static func keylessServer(_ extra: [String] = []) throws -> TokenServer {
        try TokenServer(upstream: try Emulator.requireHost(), publicKey: "/dev/null",
                        extra: ["--audience", audience, "--subject-token", subjectToken, "--subject-header", "X-Subject-Key:let-me-in",
                                "--impersonate", impersonated] + extra)
    }

    static func jsonFile(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    /// An external_account file pointing at `server`, with `changes` applied.
    static func externalAccount(_ server: TokenServer, source: [String: Any], impersonate: Bool = true) throws -> String {
        var file: [String: Any] = [
            "type": "external_account", "audience": audience, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": "http://127.0.0.1:\(server.port)/sts", "credential_source": source, "quota_project_id": "quota-k",
        ]
        if impersonate {
            file["service_account_impersonation_url"] = "http://127.0.0.1:\(server.port)/v1/projects/-/serviceAccounts/\(impersonated):generateAccessToken"
            file["service_account_impersonation"] = ["token_lifetime_seconds": 900]
        }
        return try jsonFile(file)
    }

    /// A pull (with -v) of a document the app wrote, then a push of a new file; both must pass.
    func pullAndPush(_ ws: Workspace, environment: [String: String], name: String) async throws -> String {
        try await ws.rest.put([(id: "from-app", fields: bookFields("from-app", title: "Written by the app"))])
        let pulled = try BinaryTests.run(["-v", "pull"], in: ws.root, environment: environment)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(ws.read("from-app.json")?.contains("Written by the app") == true)
        try ws.write("from-cli.json", bookFile("from-cli", title: "Pushed by \(name)"))
        let pushed = try BinaryTests.run(["push"], in: ws.root, environment: environment)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(try await ws.rest.all()["from-cli"]?.fields["title"] == .string("Pushed by \(name)"))
        return pulled.stdout + pulled.stderr + pushed.stdout + pushed.stderr
    }

    /// What no output may contain: the subject token and every token the server issued.
    func expectNoSecret(in output: String, log: [String: Any]) {
        #expect(!output.contains(Self.subjectToken), "the subject token was printed")
        #expect(!output.contains(String(Self.subjectToken.split(separator: ".").last!)))
        for token in log["issued"] as? [String] ?? [] {
            #expect(!output.contains(token), "a token was printed")
        }
    }

    /// (a) A subject token file, the STS, then impersonation: the proxy takes
    /// only the IAM stand-in's tokens, so every request went the whole way.
    @Test(.hangGuard) func externalAccountFromAFileImpersonatesAndSyncs() async throws {
        let server = try Self.keylessServer(["--require-impersonated"])
        let ws = try Workspace(project: Emulator.uniqueProject("credsext"), host: try Emulator.requireHost())
        try ws.initialize()
        try ws.scratch.write("subject.jwt", Self.subjectToken + "\n")
        try ws.scratch.write("ext.json", try Self.externalAccount(server, source: ["file": ws.scratch.path + "/subject.jwt"]))
        let environment = Self.environment(server: server, scratch: ws.scratch, ["GOOGLE_APPLICATION_CREDENTIALS": ws.scratch.path + "/ext.json"])
        let output = try await pullAndPush(ws, environment: environment, name: "external_account")
        #expect(output.contains("booksync: credentials: external_account from the credentials file \(ws.scratch.path)/ext.json "
            + "(GOOGLE_APPLICATION_CREDENTIALS): subject token from the file \(ws.scratch.path)/subject.jwt, exchanged at "
            + "http://127.0.0.1:\(server.port)/sts, impersonating \(Self.impersonated)"), "\(output)")
        let log = try server.log()
        #expect((log["proxied"] as? Int ?? 0) > 0)
        #expect(log["rejected"] as? Int == 0, "every request carried an impersonated token")
        #expect((log["sts"] as? [String] ?? []).allSatisfy { $0 == "https://www.googleapis.com/auth/cloud-platform" })
        let impersonations = log["impersonations"] as? [[String: Any]] ?? []
        #expect(!impersonations.isEmpty && impersonations.allSatisfy { $0["bearer_kind"] as? String == "sts" && $0["lifetime"] as? String == "900s" })
        #expect((log["quota_projects"] as? [String] ?? []).allSatisfy { $0 == "quota-k" })
        expectNoSecret(in: output, log: log)
    }

    /// (b) A URL source that needs a header, read as JSON; no impersonation:
    /// the federated token (datastore scope) is Firestore's.
    @Test(.hangGuard) func externalAccountFromAURLWithAHeaderAndJSON() async throws {
        let server = try Self.keylessServer()
        let ws = try Workspace(project: Emulator.uniqueProject("credsurl"), host: try Emulator.requireHost())
        try ws.initialize()
        try ws.scratch.write("ext.json", try Self.externalAccount(server, source: [
            "url": "http://127.0.0.1:\(server.port)/subject", "headers": ["X-Subject-Key": "let-me-in"],
            "format": ["type": "json", "subject_token_field_name": "id_token"],
        ], impersonate: false))
        let environment = Self.environment(server: server, scratch: ws.scratch, ["GOOGLE_APPLICATION_CREDENTIALS": ws.scratch.path + "/ext.json"])
        let output = try await pullAndPush(ws, environment: environment, name: "a URL source")
        #expect(output.contains("subject token from http://127.0.0.1:\(server.port)/subject, exchanged at "
            + "http://127.0.0.1:\(server.port)/sts (no service account impersonated)"), "\(output)")
        let log = try server.log()
        #expect((log["subject_gets"] as? Int ?? 0) > 0)
        #expect((log["sts"] as? [String] ?? []).allSatisfy { $0 == "https://www.googleapis.com/auth/datastore" })
        #expect((log["impersonations"] as? [Any] ?? []).isEmpty)
        #expect(log["rejected"] as? Int == 0)
        expectNoSecret(in: output, log: log)

        // Without the header the source refuses, and booksync says which step failed.
        try ws.scratch.write("ext.json", try Self.externalAccount(server, source: [
            "url": "http://127.0.0.1:\(server.port)/subject", "format": ["type": "json", "subject_token_field_name": "id_token"],
        ], impersonate: false))
        let refused = try BinaryTests.run(["pull"], in: ws.root, environment: environment)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("reading the subject token from http://127.0.0.1:\(server.port)/subject: it answered 403"), "\(refused.stderr)")
    }

    /// (c) The first impersonated token is expired by the time it is used
    /// (the proxy says 401, though IAM's expireTime said an hour): the pull
    /// gets a new token through the whole chain (subject token read again,
    /// STS, IAM) and goes on.
    @Test(.hangGuard) func anExpiredTokenIsRefreshedThroughTheChainMidCommand() async throws {
        let server = try Self.keylessServer(["--require-impersonated", "--expire-first", "1"])
        let ws = try Workspace(project: Emulator.uniqueProject("credsrefresh"), host: try Emulator.requireHost())
        try ws.initialize()
        try ws.scratch.write("subject.jwt", Self.subjectToken)
        try ws.scratch.write("ext.json", try Self.externalAccount(server, source: ["file": ws.scratch.path + "/subject.jwt"]))
        let environment = Self.environment(server: server, scratch: ws.scratch, ["GOOGLE_APPLICATION_CREDENTIALS": ws.scratch.path + "/ext.json"])
        try await ws.rest.put([(id: "from-app", fields: bookFields("from-app", title: "Written by the app"))])
        let pulled = try BinaryTests.run(["pull"], in: ws.root, environment: environment)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(ws.read("from-app.json")?.contains("Written by the app") == true)
        let log = try server.log()
        #expect(log["expired_uses"] as? Int == 1, "the proxy refused the expired token once")
        let impersonations = (log["impersonations"] as? [Any] ?? []).count
        #expect(impersonations == 2, "one new token, fetched mid-command")
        #expect((log["sts"] as? [String] ?? []).count == 2, "the refresh went through the STS again")
        #expect((log["proxied"] as? Int ?? 0) > 0)
        expectNoSecret(in: pulled.stdout + pulled.stderr, log: log)
    }

    /// (d) The STS refuses the subject token and echoes it in its
    /// error_description: the user reads the file, the step and the STS's
    /// words, never the token.
    @Test(.hangGuard) func anSTSThatEchoesTheSubjectTokenNeverGetsItPrinted() throws {
        let server = try Self.keylessServer()
        let ws = try Workspace(project: Emulator.uniqueProject("credsecho"), host: try Emulator.requireHost())
        try ws.initialize()
        let wrong = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJldmUifQ.wrong-subject-\(UUID().uuidString)"
        try ws.scratch.write("subject.jwt", wrong)
        try ws.scratch.write("ext.json", try Self.externalAccount(server, source: ["file": ws.scratch.path + "/subject.jwt"]))
        let environment = Self.environment(server: server, scratch: ws.scratch, ["GOOGLE_APPLICATION_CREDENTIALS": ws.scratch.path + "/ext.json"])
        let result = try BinaryTests.run(["-v", "pull"], in: ws.root, environment: environment)
        #expect(result.status != 0)
        #expect(result.stderr.contains("the credentials file \(ws.scratch.path)/ext.json (GOOGLE_APPLICATION_CREDENTIALS): the STS at "
            + "http://127.0.0.1:\(server.port)/sts answered 400 invalid_grant: The subject token [redacted] could not be verified."), "\(result.stderr)")
        #expect(!(result.stdout + result.stderr).contains(wrong))
        #expect(!(result.stdout + result.stderr).contains(String(wrong.split(separator: ".").last!)))
        let log = try server.log()
        #expect(log["sts_refused"] as? Int == 1, "the STS was asked once (a refusal is not retried)")
        #expect(log["proxied"] as? Int == 0)
    }

    /// (e) A credential_source that names a program is refused, with and
    /// without Google's variable, and the program is never run.
    @Test(.hangGuard, arguments: [false, true])
    func anExecutableSourceIsRefusedAndNeverRun(allowed: Bool) throws {
        let server = try Self.keylessServer()
        let ws = try Workspace(project: Emulator.uniqueProject("credsexec"), host: try Emulator.requireHost())
        try ws.initialize()
        let marker = ws.scratch.path + "/program-ran"
        try ws.scratch.write("ext.json", try Self.externalAccount(server, source: [
            "executable": ["command": "/usr/bin/touch \(marker)", "timeout_millis": 5000],
        ]))
        var extra = ["GOOGLE_APPLICATION_CREDENTIALS": ws.scratch.path + "/ext.json"]
        if allowed { extra["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES"] = "1" }
        let result = try BinaryTests.run(["pull"], in: ws.root, environment: Self.environment(server: server, scratch: ws.scratch, extra))
        #expect(result.status != 0)
        #expect(result.stderr.contains("the credentials file \(ws.scratch.path)/ext.json (GOOGLE_APPLICATION_CREDENTIALS): its credential_source.executable names a program"),
                "\(result.stderr)")
        #expect(result.stderr.contains(allowed ? "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1 allows it, but booksync does not run executable-sourced credentials yet"
                                               : "Google's libraries run only when GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1 is set"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the program ran")
        let log = try server.log()
        #expect((log["sts"] as? [Any] ?? []).isEmpty && log["sts_refused"] as? Int == 0, "nothing was sent")
    }

    /// (f) gcloud's `--impersonate-service-account` ADC file: the user's
    /// refresh token, then IAM through a delegate.
    @Test(.hangGuard) func impersonatedServiceAccountFromGcloudsFileSyncs() async throws {
        let server = try Self.keylessServer(["--require-impersonated"])
        let ws = try Workspace(project: Emulator.uniqueProject("credsimp"), host: try Emulator.requireHost())
        try ws.initialize()
        try FileManager.default.createDirectory(atPath: ws.scratch.path + "/gcloud", withIntermediateDirectories: true)
        try ws.scratch.write("gcloud/application_default_credentials.json", try Self.jsonFile([
            "type": "impersonated_service_account", "delegates": ["hop@test-project.iam.gserviceaccount.com"],
            "service_account_impersonation_url": "http://127.0.0.1:\(server.port)/v1/projects/-/serviceAccounts/\(Self.impersonated):generateAccessToken",
            "source_credentials": ["type": "authorized_user", "client_id": "test-client", "client_secret": "test-secret",
                                   "refresh_token": TokenServer.refreshToken, "token_uri": server.tokenURI],
        ]))
        let environment = Self.environment(server: server, scratch: ws.scratch, [:])
        let output = try await pullAndPush(ws, environment: environment, name: "impersonation")
        #expect(output.contains("booksync: credentials: impersonated_service_account from gcloud's credentials file "
            + "\(ws.scratch.path)/gcloud/application_default_credentials.json, impersonating \(Self.impersonated) through 1 delegate(s) "
            + "with authorized_user source credentials"), "\(output)")
        let log = try server.log()
        let impersonations = log["impersonations"] as? [[String: Any]] ?? []
        #expect(!impersonations.isEmpty && impersonations.allSatisfy {
            $0["bearer_kind"] as? String == "authorized_user"
                && $0["delegates"] as? [String] == ["projects/-/serviceAccounts/hop@test-project.iam.gserviceaccount.com"]
        })
        #expect(log["rejected"] as? Int == 0)
        #expect(!output.contains(TokenServer.refreshToken) && !output.contains("test-secret"))
        expectNoSecret(in: output, log: log)
    }
}
