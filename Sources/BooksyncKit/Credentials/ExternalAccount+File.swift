import BooksyncCore

/// Reading an `external_account` file into an `ExternalAccount`, refusing
/// what booksync does not do before anything is sent: every refusal names
/// the file and the member, so the user knows what to change.
extension ExternalAccount {
    /// Google's switch for credential files that run a program; their
    /// libraries run none without it set to `1`.
    static let allowExecutablesVariable = "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES"
    /// What to do when a member is missing.
    static let advice = "make the file again with 'gcloud iam workload-identity-pools create-cred-config'"

    /// The account a file describes.
    /// - Parameter environment: Read for `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES` only.
    /// - Throws: `RemoteError.configuration` for a missing member, a URL that
    ///   is neither HTTPS nor loopback, and a source booksync does not read
    ///   (AWS, X.509 certificates, a program).
    init(file: CredentialsFileFields, environment: [String: String]) throws(RemoteError) {
        let origin = file.origin
        let audience = try file.string("audience")!
        let subjectTokenType = try file.string("subject_token_type")!
        let tokenURL = try file.url("token_url", default: Self.defaultTokenURL)!
        let credentialSource = try file.object("credential_source", required: true)!
        let (source, format) = try Self.subjectSource(credentialSource, environment: environment)

        let project = try file.string("workforce_pool_user_project", required: false)
        if project != nil, !Self.isWorkforcePool(audience) {
            // As Google's libraries refuse it: only a workforce pool bills a user project.
            throw .configuration("\(origin) sets workforce_pool_user_project, but its audience is not a workforce pool's "
                + "(//iam.googleapis.com/locations/…/workforcePools/…); remove workforce_pool_user_project")
        }
        var impersonation: ServiceAccountImpersonation?
        if let url = try file.url("service_account_impersonation_url", required: false) {
            var lifetime = ServiceAccountImpersonation.defaultLifetime
            if let options = try file.object("service_account_impersonation"), options.has("token_lifetime_seconds") {
                let range = ServiceAccountImpersonation.lifetimeRange
                guard case .integer(let seconds)? = options.fields["token_lifetime_seconds"], range.contains(Int(clamping: seconds)) else {
                    throw .configuration("\(origin): its service_account_impersonation.token_lifetime_seconds must be a whole number of "
                        + "seconds from \(range.lowerBound) to \(range.upperBound)")
                }
                lifetime = Int(seconds)
            }
            impersonation = try ServiceAccountImpersonation(url: url, lifetime: lifetime, origin: origin)
        }
        self.init(audience: audience, subjectTokenType: subjectTokenType, tokenURL: tokenURL, source: source, format: format,
                  clientID: try file.string("client_id", required: false), clientSecret: try file.string("client_secret", required: false),
                  workforcePoolUserProject: project, impersonation: impersonation)
    }

    /// `credential_source`: a file or a URL, and the format of what is there.
    static func subjectSource(_ source: CredentialsFileFields, environment: [String: String]) throws(RemoteError) -> (SubjectSource, Format) {
        let origin = source.origin
        if source.has("environment_id") {
            let id = String((try source.string("environment_id", required: false) ?? "").prefix(40))
            throw .configuration(
                "\(origin): its credential_source is AWS's (environment_id '\(id)'), which booksync does not read; "
                    + "get a token with the AWS workload's own tools and pass it in BOOKSYNC_ACCESS_TOKEN or BOOKSYNC_TOKEN_COMMAND")
        }
        if source.has("executable") {
            let workaround = "use a file or url credential_source, or run the program yourself and pass the access token "
                + "(BOOKSYNC_TOKEN_COMMAND, e.g. 'gcloud auth print-access-token')"
            if environment[allowExecutablesVariable] == "1" {
                throw .configuration("\(origin): its credential_source.executable names a program, and \(allowExecutablesVariable)=1 allows it, "
                    + "but booksync does not run executable-sourced credentials yet; " + workaround)
            }
            throw .configuration("\(origin): its credential_source.executable names a program, which Google's libraries run only when "
                + "\(allowExecutablesVariable)=1 is set, and booksync does not run executable-sourced credentials at all yet; " + workaround)
        }
        if source.has("certificate") {
            throw .configuration("\(origin): its credential_source.certificate (X.509 workload identity federation, mutual TLS) "
                + "is not supported by booksync; use a file or url credential_source")
        }
        let file = try source.string("file", required: false)
        let url = try source.url("url", required: false)
        if file != nil, url != nil {
            throw .configuration("\(origin): its credential_source has both \"file\" and \"url\"; keep the one the token is read from")
        }
        let subject: SubjectSource
        if let file {
            subject = .file(file)
        } else if let url {
            subject = .url(url, headers: try source.stringMap("headers"))
        } else {
            throw .configuration("\(origin): its credential_source has neither \"file\" nor \"url\"; \(advice)")
        }
        guard let format = try source.object("format") else { return (subject, .text) }
        switch try format.string("type", required: false) ?? "text" {
        case "text":
            return (subject, .text)
        case "json":
            return (subject, .json(field: try format.string("subject_token_field_name")!))
        case let other:
            throw .configuration("\(origin): its credential_source.format.type is '\(String(other.prefix(40)))'; it must be \"text\" or \"json\"")
        }
    }

    /// `//iam.googleapis.com/locations/LOCATION/workforcePools/…`, Google's test for a workforce pool.
    static func isWorkforcePool(_ audience: String) -> Bool {
        let prefix = "//iam.googleapis.com/locations/"
        guard audience.hasPrefix(prefix) else { return false }
        let rest = audience.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/"), slash != rest.startIndex else { return false }
        return rest[slash...].hasPrefix("/workforcePools/")
    }
}
