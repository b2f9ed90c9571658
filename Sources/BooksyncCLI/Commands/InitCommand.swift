import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync init`: make the current directory, DIR (created if missing, as
/// `git init DIR` and `booksync clone … DIR` do) or -C DIR a collection directory.
enum InitCommand: Subcommand {
    static let name = "init"
    static let summary = "create .booksync/ here (or in DIR), linked to a Firestore collection"
    static let usage = "booksync init [--firestore PROJECT[/DATABASE]] --collection PATH [--require FIELD:TYPE]... [--optional FIELD:TYPE]... [--strict warning|error] [--id-field NAME|none] [--change-field NAME] [--where EXPR] [--subcollection PATH]... [--subcollection-require PATH:FIELD:TYPE]... [--editor vscode] [--git] [DIR]"
    static let discussion = """
        Writes .booksync/config.json, an empty manifest and a .gitignore for the
        local-only files. No network is needed. PATH may be nested
        (users/u1/books); the database defaults to (default).

        DIR (default: the current folder) is created with any missing parents,
        as git init DIR does; a folder that exists already may hold record
        files (init reads and writes none), but not be inside another
        collection.

        Without --firestore (or with --firestore /DATABASE), the project is
        $GOOGLE_CLOUD_PROJECT, else $GCLOUD_PROJECT, else the default project
        of the nearest .firebaserc ("projects": {"default": "my-project"}) in
        this directory or a parent; init says which it used.

        --require FIELD:TYPE (repeatable) sets the fields every record must
        have besides id, in the order record files list them. Types: string,
        integer, double, number (integer or double), boolean, timestamp, bytes,
        reference, geopoint, map, array, any. --require none requires nothing
        but id. Without --require: title, author and genre, all strings (the
        Book schema). config.json keeps them under schema.required.
        --optional FIELD:TYPE (repeatable) declares a field records may have:
        absent or null, or else of TYPE. --strict warning makes validate warn
        about fields neither list declares; --strict error makes such records
        invalid. config.json also takes allowed values ("enum"), a map's own
        fields, an array's item type and descriptions (see the collection
        format in the docs). init writes .booksync/record.schema.json, the
        JSON Schema editors use (see 'booksync schema'); --editor vscode also
        maps the record files to it in .vscode/settings.json.

        --id-field says where documents keep the record id. Record files always
        have "id". The default, id, stores it in the document's id field too
        (an app whose DTO has `var id: String`). none keeps it out of documents
        (config "idField": null), for apps that read it from the document name
        (@DocumentID var id: String? throws when the document also has an id
        field); a document that has an id field anyway is reported invalid and
        left alone. NAME (e.g. docId) stores it in that field instead.

        --change-field NAME (config "changeField", e.g. updatedAt) makes every
        write booksync makes set NAME to the server's time, so status and pull
        find remote changes with one query for the documents changed since the
        last sync and one count, instead of listing (and paying a read for)
        every document. Apps must set NAME on every write too
        (FieldValue.serverTimestamp()); see "What a command costs" in the Firestore article of the docs.
        Record files leave NAME out.

        --where EXPR (config "scope") mirrors only the documents that match a
        query in Firestore's filter language: FIELD OP VALUE joined by and /
        or with parentheses, OP one of == != < <= > >= in not-in
        array-contains array-contains-any, values as JSON ("sf", 4, true,
        null, ["a", "b"]) or tagged ({"$timestamp": "2026-01-01T00:00:00Z"}),
        fields dotted (stats.rating) with backticks around other names. A
        document that stops matching has left the scope: pull keeps its file
        and lets its base entry go; nothing is deleted on either side. A new
        record file that does not match is never pushed. See "Your whole
        project as files" in the docs.

        --subcollection PATH (repeatable; config "subcollections") also syncs
        that subcollection of every document, as folders: with reviews,
        dune/reviews/r1.json is the document books/dune/reviews/r1, and its
        record id is dune/reviews/r1 (every command takes it). reviews/likes
        goes one level deeper (dune/reviews/r1/likes/l1.json). A folder needs
        no parent file. Its records need nothing but id unless
        --subcollection-require PATH:FIELD:TYPE (repeatable) says more, e.g.
        reviews:rating:integer. Without --subcollection, folders are ignored.

        --git also sets up booksync as git's merge driver for the record files
        and for .booksync/manifest.json (.gitattributes here, merge.booksync.*
        and merge.booksync-manifest.* in the repository's config); on an
        existing collection, 'booksync init --git' does only that. git does not
        clone its config: run 'booksync init --git' once in each clone.
        """
    static let options: [Option] = [.firestore, .collection, .require, .optional, .strict, .idField, .changeField, .scope, .subcollection, .subcollectionRequire, .editor, .git]

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        guard arguments.positionals.count <= 1 else { throw arguments.usageError("init takes at most one DIR") }
        guard let folder = arguments.positionals.first else { return try await run(arguments, context: context, creating: false) }
        let directory = PathDisplay.resolve(folder, against: context.directory)
        if FileSystem.exists(directory), !FileSystem.isDirectory(directory) {
            throw BooksyncError.invalidArgument("\(context.display(directory)) exists and is not a folder; name a folder, or a new one to create")
        }
        return try await run(arguments.withoutOperands(), context: context.working(in: directory), creating: true)
    }

    /// `creating`: the folder was named as DIR, so it is made when missing
    /// (only once every option is known good, so a usage error leaves
    /// nothing behind) and must not be inside another collection.
    private static func run(_ arguments: ParsedArguments, context: CommandContext, creating: Bool) async throws -> ExitCode {
        let requirements = arguments.values(.require)
        if arguments.has(.git), arguments.value(.collection) == nil, let existing = try? context.openCollection() {
            if !requirements.isEmpty || arguments.value(.idField) != nil || arguments.value(.changeField) != nil || arguments.value(.scope) != nil
                || !arguments.values(.subcollection).isEmpty || !arguments.values(.subcollectionRequire).isEmpty
                || !arguments.values(.optional).isEmpty || arguments.value(.strict) != nil {
                throw UsageError(message: "--require, --optional, --strict, --id-field, --change-field, --where and --subcollection only apply when a collection is created; edit \(context.display(existing.paths.config)) to change them", command: name)
            }
            try installGit(collectionRoot: existing.paths.root, subcollections: existing.rules.subcollections, context: context)
            if !context.quiet { context.console.out("git now merges record files in \(existing.paths.root) field by field and the manifest by record (booksync must be on PATH)") }
            return .success
        }
        guard let collection = arguments.value(.collection) else {
            throw UsageError(message: "missing --collection PATH (the Firestore collection to sync, e.g. books)", command: name)
        }
        if let problem = FirestoreTarget.validateCollectionPath(collection) {
            throw UsageError(message: "--collection: \(problem)", command: name)
        }
        let required: RecordSchema
        do {
            required = requirements.isEmpty ? .books : try RecordSchema.parse(requirements: requirements)
        } catch {
            throw UsageError(message: "--require: \(error.message)", command: name)
        }
        let schema: RecordSchema
        do {
            let strictness = arguments.value(.strict).flatMap(SchemaStrictness.init(rawValue:)) ?? .off
            schema = try required.adding(optional: arguments.values(.optional), strictness: strictness)
        } catch {
            throw UsageError(message: "--optional: \(error.message)", command: name)
        }
        let idField = try parseIDField(arguments.value(.idField))
        if let problem = CollectionConfig.problem(idField: idField, schema: schema) {
            throw UsageError(message: problem, command: name)
        }
        let changeField = arguments.value(.changeField)
        if let changeField, let problem = CollectionConfig.problem(changeField: changeField, idField: idField, schema: schema) {
            throw UsageError(message: "--change-field: \(problem)", command: name)
        }
        let subcollections: Subcollections
        do {
            subcollections = try Subcollections.parse(paths: arguments.values(.subcollection), requirements: arguments.values(.subcollectionRequire))
        } catch {
            throw UsageError(message: "--subcollection: \(error.message)", command: name)
        }
        for entry in subcollections.entries {
            if let problem = CollectionConfig.problem(idField: idField, schema: entry.schema) {
                throw UsageError(message: "--subcollection-require: \(problem)", command: name)
            }
            if let changeField, entry.schema.requiredFields.contains(where: { $0.name == changeField }) {
                throw UsageError(message: "--subcollection-require: '\(changeField)' is the change field, which the server sets; it cannot be required", command: name)
            }
        }
        let scope = try parseScope(arguments.value(.scope), changeField: changeField, subcollections: subcollections, idField: idField)
        let (target, detected) = try resolveTarget(arguments.value(.firestore), collection: collection, context: context)
        var config = CollectionConfig(remote: target, schema: schema, idField: idField, changeField: changeField, subcollections: subcollections)
        config.scope = scope
        if creating { try CloneCommand.prepareFolder(context.directory, mustBeEmpty: false, context: context) }
        let directory = try CollectionDirectory.initialize(at: context.directory, config: config)
        if !context.quiet {
            context.console.out("Initialized booksync collection in \(directory.paths.root)")
            context.console.out("  remote: firestore \(target.project)/\(target.database), collection \(target.collectionPath)")
            switch detected?.source {
            case .environment(let variable)?: context.console.out("  project: from $\(variable)")
            case .firebaserc(let path)?: context.console.out("  project: from the default project in \(context.display(path))")
            case nil: break
            }
            context.console.out("  required: \(describe(schema))")
            if !schema.optionalFields.isEmpty { context.console.out("  optional: \(describe(schema.optionalFields))") }
            if schema.strictness != .off { context.console.out("  other fields: \(schema.strictness == .error ? "invalid" : "a warning from validate") (--strict \(schema.strictness.rawValue))") }
            context.console.out("  id field: \(describe(idField))")
            if let changeField { context.console.out("  change field: \(name: changeField) (set to the server time by every write)") }
            if let scope { context.console.out("  scope: \(name: scope.description) (only the documents that match)") }
            for entry in subcollections.entries {
                context.console.out("  subcollection: \(name: entry.path), required: \(describe(entry.schema))")
            }
            context.console.out("Commit .booksync/ (its .gitignore leaves out local-only files).")
        }
        let editorSettings = arguments.value(.editor) == nil ? .success : try EditorSettings.mapInVSCode(directory, context: context)
        if arguments.has(.git) {
            try installGit(collectionRoot: directory.paths.root, subcollections: subcollections, context: context)
            if !context.quiet { context.console.out("git now merges record files here field by field and the manifest by record (booksync must be on PATH)") }
        } else {
            GitDriverCheck.warnIfOutdated(collectionRoot: directory.paths.root, context: context)
            if !context.quiet {
                for line in GitCommand.instructions(collectionRoot: context.display(directory.paths.root), subcollections: subcollections) { context.console.out("\(line)") }
            }
        }
        return editorSettings
    }

    /// `--where EXPR` as a scope; a syntax error names the column it stopped at.
    static func parseScope(_ text: String?, changeField: String?, subcollections: Subcollections, idField: IDField) throws -> ScopeExpression? {
        guard let text else { return nil }
        let scope: ScopeExpression
        do {
            scope = try ScopeExpression.parse(text)
        } catch {
            throw UsageError(message: "--where: \(error)", command: name)
        }
        if let problem = CollectionConfig.problem(scope: scope, changeField: changeField, subcollections: subcollections, idField: idField) {
            throw UsageError(message: "--where: \(problem)", command: name)
        }
        return scope
    }

    /// `GitCommand.install`, saying so when it replaced drivers an older
    /// booksync installed (which fail on a file named `-….json`).
    static func installGit(collectionRoot: String, subcollections: Subcollections, context: CommandContext) throws(BooksyncError) {
        let outdated = GitDriverCheck.outdatedDrivers(collectionRoot: collectionRoot)
        try GitCommand.install(collectionRoot: collectionRoot, subcollections: subcollections)
        guard !outdated.isEmpty, !context.quiet else { return }
        let keys = outdated.map { "merge.\($0.key).driver" }.joined(separator: " and ")
        context.console.err("booksync: note: updated the git merge \(outdated.count == 1 ? "driver" : "drivers") \(keys) from an older booksync, which took a file named -….json for an option (now '… -- %O %A %B %P')")
    }

    /// `--id-field`: absent or `id` is the default, `none` is no field, anything else a field name.
    static func parseIDField(_ value: String?) throws(UsageError) -> IDField {
        guard let value else { return .standard }
        if value == "none" { return .none }
        if let problem = IDField.problem(withFieldName: value) {
            throw UsageError(message: "--id-field: \(problem)", command: name)
        }
        return .field(value)
    }

    /// The project, database and collection: the project from `--firestore`
    /// when it names one, else detected (and then returned, to be reported).
    static func resolveTarget(_ spec: String?, collection: String, context: CommandContext) throws -> (FirestoreTarget, ProjectDetection.Found?) {
        var project = ""
        var database = "(default)"
        if let spec {
            let parts = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            project = parts[0]
            if parts.count > 1 {
                guard !parts[1].isEmpty else {
                    throw UsageError(message: "--firestore takes PROJECT, PROJECT/DATABASE or /DATABASE, not '\(spec)'", command: name)
                }
                database = parts[1]
            }
        }
        var detected: ProjectDetection.Found?
        if project.isEmpty {
            detected = try ProjectDetection.detect(environment: context.environment, searchingFrom: context.directory)
            guard let detected else {
                throw UsageError(message: "no Firestore project: pass --firestore PROJECT, set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT), "
                    + "or run init inside a Firebase project directory (a .firebaserc with a default project)", command: name)
            }
            project = detected.project
        }
        if let problem = FirestoreTarget.problem(withProject: project) {
            throw UsageError(message: "--firestore: \(problem)", command: name)
        }
        if let problem = FirestoreTarget.problem(withDatabase: database) {
            throw UsageError(message: "--firestore: \(problem)", command: name)
        }
        return (FirestoreTarget(project: project, database: database, collectionPath: collection), detected)
    }

    /// `year (integer), isbn (string)`.
    static func describe(_ fields: [FieldRequirement]) -> String {
        fields.map { "\($0.name) (\($0.type.rawValue))" }.joined(separator: ", ")
    }

    /// `id, title (string), author (string)` or `id only`.
    static func describe(_ schema: RecordSchema) -> String {
        if schema.requiredFields.isEmpty { return "id only" }
        return (["id"] + schema.requiredFields.map { "\($0.name) (\($0.type.rawValue))" }).joined(separator: ", ")
    }

    static func describe(_ idField: IDField) -> String {
        switch idField.fieldName {
        case "id": "id (documents store the record id in their id field too)"
        case let name?: "\(name) (documents store the record id in their \(name) field; record files keep it in id)"
        case nil: "none (documents keep the record id only in their name)"
        }
    }
}
