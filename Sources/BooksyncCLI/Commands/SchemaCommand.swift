import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync schema`: the JSON Schema editors use for the record files, and a
/// Swift DTO for apps, both made from config.json's schema.
enum SchemaCommand: Subcommand {
    static let name = "schema"
    static let summary = "write the JSON Schema editors use for record files; print a Swift DTO"
    static let usage = "booksync schema [--check] [--editor vscode] [--print | --swift TYPE] [--subcollection PATH]"
    static let discussion = """
        Writes .booksync/record.schema.json (JSON Schema draft 2020-12) from the
        schema in .booksync/config.json, and one per configured subcollection
        (.booksync/subcollections/PATH/.record.schema.json); init creates
        them. Commit them: every clone's editor then knows the records'
        fields, their types, the tagged values ({"$timestamp": …} and the
        others) and Firestore's limits.
        Run it again after editing the schema in config.json (validate says
        when the files are out of date).

        An editor finds the schema through a record's first key,
        "$schema": "./.booksync/record.schema.json", which booksync keeps in
        the file and never syncs; or through the editor's settings:
        --editor vscode maps the collection's record files to the schemas in
        .vscode/settings.json at the top of the git repository (or here),
        keeping every other setting.

        --check writes nothing and exits 1 if a schema file is missing or out
        of date. --print prints the collection's schema (or PATH's, with
        --subcollection) instead of writing it. --swift TYPE prints a Codable
        struct TYPE for the records, for RecordStore, RecordEncoder and
        RecordDecoder.
        """
    static let options: [Option] = [
        .check.explained("write nothing; exit 1 if a schema file is missing or out of date"),
        .editor,
        .printSchema,
        .swiftType,
        .subcollection.explained("with --print or --swift: that subcollection's records instead of the collection's"),
    ]
    static let exclusiveOptions: [(Option, Option)] = [(.printSchema, .swiftType), (.check, .printSchema), (.check, .swiftType)]

    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        try arguments.expectNoOperands()
        let collection = try context.openCollection()
        let files = collection.editorSchemaFiles
        var file = files[0]
        var schema = collection.config.schema
        if let path = arguments.value(.subcollection) {
            guard let entry = collection.config.subcollections.entry(forPath: path) else {
                throw arguments.usageError("'\(path)' is not a configured subcollection (config \"subcollections\")")
            }
            file = files.first { $0.subcollection == path } ?? collection.editorSchemaFile(entry)
            schema = entry.schema
        }
        if let typeName = arguments.value(.swiftType) {
            guard SwiftDTOSource.typeIdentifier(typeName) == typeName, !SwiftDTOSource.reservedTypeNames.contains(typeName) else {
                throw arguments.usageError("'\(typeName)' is not a Swift type name of its own such as BookDTO")
            }
            let collectionName = file.subcollection.map { collection.config.remote.collectionPath + "/*/" + $0 } ?? collection.config.remote.collectionPath
            let source = SwiftDTOSource.make(schema, typeName: typeName, collection: collectionName, idField: collection.config.idField)
            // config.json's text is in comments or escaped literals, with no control character or bidi override (`SwiftSourceText`).
            context.console.out(TerminalText(trusted: String(source.dropLast())))
            return .success
        }
        if arguments.has(.printSchema) {
            context.console.out(TerminalText(json: String(decoding: file.bytes.dropLast(), as: UTF8.self)))
            return .success
        }
        if arguments.has(.check) {
            var stale = 0
            for file in files where (try? FileSystem.readFile(file.path, limit: file.bytes.count)) != file.bytes {
                stale += 1
                context.console.out("\(context.display(file.path)): \(FileSystem.exists(file.path) ? "out of date" : "missing")")
            }
            if stale > 0, !context.quiet { context.console.err("run 'booksync schema' to write \(stale == 1 ? "it" : "them")") }
            return stale == 0 ? .success : .attention
        }
        for (file, written) in try collection.writeEditorSchemas() where !context.quiet {
            context.console.out(written ? "wrote \(context.display(file.path))" : "\(context.display(file.path)) is up to date")
        }
        if arguments.value(.editor) != nil {
            return try EditorSettings.mapInVSCode(collection, context: context)
        }
        if !context.quiet {
            context.console.out("Editors find it through a record's first key, \"$schema\": \"\(file.hint)\" (kept in the file, never synced),")
            context.console.out("or through their settings: 'booksync schema --editor vscode' maps every record file.")
        }
        return .success
    }
}
