import BooksyncCore
@_spi(Remote) import BooksyncKit

extension CommandContext {
    /// The live Firestore remote for a collection: endpoint and credentials from
    /// the environment and config.json, URLSession underneath, and request
    /// logging on stderr with `--verbose` (method, path, status, time; never tokens).
    /// A command that reaches a remote says so (`Subcommand.reachesRemote`)
    /// and was handed to the network helper right after parsing; without a
    /// linked transport this still hands it over (`NetworkAccess`) and does not return.
    /// `announce: false` leaves out the "using remote" line (`compare` names both remotes itself).
    func makeRemote(_ collection: CollectionDirectory, announce: Bool = true) throws(BooksyncError) -> FirestoreRemote {
        let makeTransport = try linkedTransport()
        // Here, past the hand-off to the network helper, so it is said once.
        if announce, !collection.remote.isOrigin, !quiet {
            let reason = collection.remote.reason.map { " (\($0))" } ?? ""
            console.err("booksync: using remote '\(collection.remote.name)'\(reason)")
        }
        if collection.config.tokenCommand != nil {
            console.err("booksync: warning: \(Self.ignoredTokenCommandWarning(environment: environment))")
        }
        return try makeRemote(target: collection.config.remote, rules: collection.rules,
                              endpointEnvironment: try collection.remote.endpointEnvironment(environment), transport: makeTransport)
    }

    /// The transport this binary links; without one (`booksync`), hands the
    /// whole command line to the network helper, which does not return.
    private func linkedTransport() throws(BooksyncError) -> @Sendable (Duration) -> HTTPTransport {
        switch network {
        case .linked(let make):
            return make
        case .helper(let name):
            console.flush()
            throw NetworkAccess.execute(helper: name, arguments: arguments, environment: environment)
        }
    }

    /// A remote for a database rather than a collection (`target`'s path is
    /// only a placeholder): discovery (`listCollectionIds`, names below a
    /// collection) before any collection folder exists. The endpoint comes
    /// from `endpointEnvironment` (a collection's selected remote), else the
    /// environment.
    func makeDatabaseRemote(project: String, database: String, endpointEnvironment: [String: String]? = nil) throws(BooksyncError) -> FirestoreRemote {
        let makeTransport = try linkedTransport()
        let target = FirestoreTarget(project: project, database: database, collectionPath: "_")
        return try makeRemote(target: target, rules: CollectionConfig(remote: target, schema: .idOnly).rules,
                              endpointEnvironment: endpointEnvironment ?? environment, transport: makeTransport)
    }

    private func makeRemote(target: FirestoreTarget, rules: RecordRules, endpointEnvironment: [String: String],
                            transport makeTransport: @escaping @Sendable (Duration) -> HTTPTransport) throws(BooksyncError) -> FirestoreRemote {
        let retry = RetryPolicy.fromEnvironment(environment)
        let endpoint: FirestoreEndpoint
        do {
            // A token command gets as long as one request would.
            endpoint = try FirestoreEndpoint.resolve(environment: endpointEnvironment, commandTimeout: retry.requestTimeout,
                                                     transport: makeTransport(retry.requestTimeout))
        } catch {
            throw .remote(error)
        }
        let console = self.console
        let verbose = self.verbose
        if verbose, !endpoint.credentialSource.isEmpty {
            console.err("booksync: credentials: \(endpoint.credentialSource)")
        }
        let remote = FirestoreRemote(
            target: target, endpoint: endpoint, rules: rules,
            transport: makeTransport(retry.requestTimeout),
            retry: retry,
            log: { line in if verbose { console.err("booksync: \(line)") } })
        remoteUsage.watch(remote.usage)
        return remote
    }
}

extension CommandContext {
    /// Why `remote.tokenCommand` in a collection's config.json is not run, and
    /// where a token command belongs instead (the manual's Safety article: a cloned collection
    /// is someone else's data, and `booksync status` must not run their program).
    static func ignoredTokenCommandWarning(environment: [String: String]) -> String {
        let userFile = UserConfig.path(environment: environment) ?? "$XDG_CONFIG_HOME/booksync/config.json"
        return "ignoring remote.tokenCommand in .booksync/config.json: booksync never runs a program named inside a collection "
            + "(a cloned one is someone else's); name it in BOOKSYNC_TOKEN_COMMAND or as \"tokenCommand\" in \(userFile)"
    }
}

extension RetryPolicy {
    /// The longest request timeout or retry deadline the environment can set: a day.
    static let longestWait = 86_400.0  // seconds

    /// The default policy; `BOOKSYNC_REQUEST_TIMEOUT` and `BOOKSYNC_RETRY_DEADLINE`
    /// (seconds) shorten it, e.g. for fault-injection tests.
    static func fromEnvironment(_ environment: [String: String]) -> RetryPolicy {
        var policy = RetryPolicy()
        // Finite and at most a day: `inf` or 1e300 would overflow every conversion to milliseconds.
        if let timeout = environment[EnvironmentVariable.requestTimeout].flatMap(Double.init), timeout > 0, timeout.isFinite {
            policy.requestTimeout = .seconds(min(timeout, Self.longestWait))
        }
        if let deadline = environment[EnvironmentVariable.retryDeadline].flatMap(Double.init), deadline > 0, deadline.isFinite {
            policy.totalDeadline = .seconds(min(deadline, Self.longestWait))
        }
        return policy
    }
}
