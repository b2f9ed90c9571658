import BooksyncCore

/// The Firestore project `init` uses when `--firestore` names none, found the
/// way Google's and Firebase's own tools find it (the manual's Commands article):
/// `$GOOGLE_CLOUD_PROJECT`, then `$GCLOUD_PROJECT`, then the default project
/// in the nearest `.firebaserc` (the file `firebase use` writes) from the
/// directory up to `/`. An empty variable counts as unset, as shells treat it.
package enum ProjectDetection {
    /// A project and where it came from, so `init` can say which source won.
    package struct Found: Sendable, Equatable {
        /// Which source named the project.
        package enum Source: Sendable, Equatable {
            /// The environment variable, without `$`.
            case environment(String)
            /// The `.firebaserc` file's absolute path.
            case firebaserc(path: String)
        }

        /// The project id, already checked with `FirestoreTarget.problem(withProject:)`.
        package let project: String
        /// Where the project id was found.
        package let source: Source

        /// A result as found; for tests and callers that detect otherwise.
        package init(project: String, source: Source) {
            self.project = project
            self.source = source
        }

        /// `$GOOGLE_CLOUD_PROJECT` or `/path/.firebaserc`, for init's output.
        package var sourceDescription: String {
            switch source {
            case .environment(let variable): "$" + variable
            case .firebaserc(let path): path
            }
        }
    }

    /// The variables consulted, in order.
    package static let variables = EnvironmentVariable.projects

    /// The first project the sources name, or nil when none does. A source
    /// that names a project that cannot be one, and a `.firebaserc` that
    /// cannot be read, are errors naming the source, not skipped: a
    /// silently ignored setting would point booksync at another project.
    /// - Parameters:
    ///   - environment: The process environment, for `variables`.
    ///   - directory: Where the search for `.firebaserc` starts (made absolute).
    /// - Throws: `BooksyncError.invalidArgument` naming the variable or file,
    ///   or `.io` when a `.firebaserc` cannot be read.
    package static func detect(environment: [String: String], searchingFrom directory: String) throws(BooksyncError) -> Found? {
        for variable in variables {
            guard let value = environment[variable], !value.isEmpty else { continue }
            if let problem = FirestoreTarget.problem(withProject: value) {
                throw .invalidArgument("$\(variable): \(problem)")
            }
            return Found(project: value, source: .environment(variable))
        }
        guard let path = nearestFirebaserc(from: directory) else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path)
        } catch {
            guard let kind = error.unsafeKind else { throw .io(error) }
            throw .invalidArgument("\(path) is \(kind.noun); booksync reads a .firebaserc only as a plain file (it never follows links): "
                + "pass --firestore PROJECT or set GOOGLE_CLOUD_PROJECT instead")
        }
        let project: String?
        do {
            project = try defaultProject(firebaserc: bytes)
        } catch {
            let position = error.position.map { ":\($0)" } ?? ""
            throw .invalidArgument("\(path)\(position): \(error.message)")
        }
        guard let project else {
            throw .invalidArgument("\(path) names no default project (\"projects\": {\"default\": \"…\"}); run 'firebase use --add', or pass --firestore PROJECT")
        }
        return Found(project: project, source: .firebaserc(path: path))
    }

    /// `.firebaserc` in `directory` or the nearest parent that has one. Only
    /// whether something is there is checked here (without following it);
    /// reading refuses links and FIFOs.
    static func nearestFirebaserc(from directory: String) -> String? {
        var current = FileSystem.absolute(directory)
        while true {
            let candidate = (current == "/" ? "" : current) + "/.firebaserc"
            if FileSystem.exists(candidate) { return candidate }
            if current == "/" { return nil }
            current = FileSystem.split(current).directory
        }
    }

    /// The project under `projects.default` of a `.firebaserc`, nil when it has
    /// none; malformed JSON or a default that is not a usable project id is an error.
    /// - Throws: `StateFileError` with the reason (and position for bad JSON);
    ///   the caller adds the file's path.
    package static func defaultProject(firebaserc bytes: [UInt8]) throws(StateFileError) -> String? {
        let top: Fields
        do {
            top = try JSONParser.parseObject(bytes)
        } catch {
            throw StateFileError(position: error.position, message: "not a valid .firebaserc: \(error.message)")
        }
        guard let projects = top["projects"] else { return nil }
        guard case .map(let aliases) = projects else {
            throw StateFileError(message: "\"projects\" must be an object of aliases, such as {\"default\": \"my-project\"}")
        }
        guard let value = aliases["default"] else { return nil }
        guard case .string(let project) = value else {
            throw StateFileError(message: "\"projects\".\"default\" must be a project id string")
        }
        if let problem = FirestoreTarget.problem(withProject: project) {
            throw StateFileError(message: "\"projects\".\"default\": \(problem)")
        }
        return project
    }
}
